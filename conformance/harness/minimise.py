"""A deterministic minimiser of a failing step list: delta debugging by replay, for systems too slow for Hypothesis.

A minimal replay: Hypothesis' shrinker makes hundreds of runs; behind the stdio adapter a run
costs about half a second, so its shrink phase is cut by the budget and the counterexample reported keeps
steps that play no part. After the search, `minimise` takes the recorded step list (the `Step`s of the
failure, opening steps included, as a replay file holds them) and replays candidates with
`core.replay_steps` on a fresh system each time (`factory(setup)`: a new process and state directory behind
the adapter), keeping a candidate only when it still fails by the *same rule*:

1. remove chunks of steps (ddmin: halves, quarters, ... down to single steps), the opening steps pinned;
2. simplify steps through the driver's optional `simpler(step)` (shorter `advance`, fewer posts, an earlier
   folder: steps the harness itself could have drawn), simplest candidate first;
3. repeat while something changed.

Each decision depends only on replay verdicts (cached by the step list), never on the clock; the budget
(`budget_s`) and the replay count (`max_replays`) only cut the work short, and the result is always a list
that was seen to fail. Same input, same system -> same output.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.check import verdict
from conformance.harness.core import (
    Driver,
    Failure,
    Session,
    Step,
    StepError,
    SutFailure,
    SystemFactory,
    judging,
    replay_steps,
    watched,
)

RawStep = dict[str, Any]  # {"op": ..., "calls": [...]}: a step as a replay file holds it


@dataclass
class Minimised:
    """The outcome: the smallest failing run found, and what it cost."""

    failure: Failure
    original_steps: int
    replays: int
    seconds: float
    stopped: str = ""  # "" (a fixpoint: 1-minimal), "budget" or "replays" (cut short), "not reproduced"

    def text(self) -> str:
        how = {"": "", "budget": " (cut by the shrink budget)", "replays": " (cut by the replay limit)"}
        if self.stopped == "not reproduced":
            return (
                f"minimiser: the recorded {self.original_steps} steps did not fail again by rule "
                f"{self.failure.rule} on a fresh system ({self.replays} replay(s)); kept as found"
            )
        return (
            f"minimised: {self.original_steps} -> {len(self.failure.steps)} steps in {self.replays} replays "
            f"({self.seconds:.1f} s){how.get(self.stopped, '')}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "original_steps": self.original_steps,
            "steps": len(self.failure.steps),
            "replays": self.replays,
            "seconds": round(self.seconds, 2),
            "stopped": self.stopped,
        }


class _Cut(Exception):
    """The budget or the replay limit is spent."""


def replay_failure(
    driver: Driver,
    factory: SystemFactory,
    setup: dict[str, Any],
    steps: Sequence[RawStep],
    watch: frozenset[str] | None = None,
) -> Failure | None:
    """Replay `steps` on a fresh system and judge it as the harness does at the end of a run (the monitor over
    every event, then the driver's end-of-run checks); the failure, or None when the run is clean.

    A candidate the harness could not apply (a removed step's folder referred to later) is not a failure."""
    try:
        system = factory(setup)
    except SutFailure as exc:
        return Failure(driver.name, setup, [], [], str(exc))
    try:
        session, _ = replay_steps(driver, system, setup, steps)
        events = session.events()
        result = judging(f"the {driver.name} monitor, replaying", lambda: verdict(events, [driver.monitor()]))
        violations = list(result.violations)
        if watch is not None:
            violations = [v for v in violations if v.rule in watch]
        problems = [] if violations else watched(driver.end_checks(session), watch)
    except SutFailure as exc:
        return Failure(driver.name, setup, _steps(steps), [], str(exc))
    except (StepError, LookupError, TypeError, ValueError):
        return None  # the step list does not apply (a dangling reference): not a run at all
    finally:
        close = getattr(system, "close", None)
        if close is not None:
            close()
    if not violations and not problems:
        return None
    problem = "; ".join(map(str, problems))
    return Failure(driver.name, setup, _steps(steps), violations, problem, events, end_problems=problems)


def _steps(raw: Sequence[RawStep]) -> list[Step]:
    return [Step(s["op"], list(s["calls"])) for s in raw]


def opening_count(driver: Driver, setup: dict[str, Any]) -> int:
    """How many leading steps the harness adds to every run (`Driver.opening`): never removed."""
    opening = getattr(driver, "opening", None)
    if opening is None:
        return 0
    session = Session(driver, None, setup)
    try:
        driver.absorb(session, "__init__", None)
        return len(opening(session))
    except (AttributeError, LookupError, TypeError):
        return 0  # an opening that needs a live system: nothing pinned (a replay holds its steps anyway)


def minimise(
    driver: Driver,
    factory: SystemFactory,
    failure: Failure,
    budget_s: float = 30.0,
    max_replays: int = 400,
    watch: frozenset[str] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Minimised:
    """The smallest step list found that still fails by `failure.rule` (see the module docstring)."""
    t0 = clock()
    target = failure.rule
    steps: list[RawStep] = [s.to_json() for s in failure.steps]
    seen: dict[str, Failure | None] = {}
    count = [0]

    def fails(cand: list[RawStep]) -> Failure | None:
        key = json.dumps(cand, sort_keys=True)
        if key in seen:
            return seen[key]
        if count[0] >= max_replays:
            raise _Cut("replays")
        if clock() - t0 > budget_s:
            raise _Cut("budget")
        count[0] += 1
        got = replay_failure(driver, factory, failure.setup, cand, watch)
        seen[key] = got if got is not None and got.rule == target else None
        return seen[key]

    def done(best: Failure, stopped: str) -> Minimised:
        best.found_after_s = failure.found_after_s
        best.found_in_run = failure.found_in_run
        return Minimised(best, len(failure.steps), count[0], clock() - t0, stopped)

    try:
        best = fails(steps)
    except _Cut as cut:
        return done(failure, str(cut))
    if best is None:
        return done(failure, "not reproduced")
    pinned = min(opening_count(driver, failure.setup), len(steps))
    try:
        while True:
            before = steps
            steps, best = _ddmin(steps, pinned, best, fails)
            steps, best = _simplify(driver, steps, pinned, best, fails)
            if steps == before:
                break
    except _Cut as cut:
        return done(best, str(cut))
    return done(best, "")


def _ddmin(
    steps: list[RawStep], pinned: int, best: Failure, fails: Callable[[list[RawStep]], Failure | None]
) -> tuple[list[RawStep], Failure]:
    """Zeller's ddmin over the unpinned steps: remove chunks of size len/n, refining n until single steps."""
    head, free = steps[:pinned], steps[pinned:]
    n = 2
    while free:
        size = -(-len(free) // n)  # ceil
        for start in range(0, len(free), size):
            cand = free[:start] + free[start + size :]
            got = fails(head + cand)
            if got is not None:
                free, best = cand, got
                n = max(n - 1, 2)
                break
        else:
            if size == 1:
                break
            n = min(2 * n, len(free))
    return head + free, best


def _simplify(
    driver: Driver, steps: list[RawStep], pinned: int, best: Failure, fails: Callable[[list[RawStep]], Failure | None]
) -> tuple[list[RawStep], Failure]:
    """Replace each unpinned step by the first of the driver's simpler versions of it that still fails."""
    simpler = getattr(driver, "simpler", None)
    if simpler is None:
        return steps, best
    for i in range(pinned, len(steps)):
        for variant in simpler(steps[i]):
            cand = [*steps[:i], variant, *steps[i + 1 :]]
            got = fails(cand)
            if got is not None:
                steps, best = cand, got
                break
    return steps, best
