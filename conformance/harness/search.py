"""Running the harness: profiles and budgets, one search, a replay, the mutant kill report.

`search(mechanism, factory, profile, budget)` runs the state machine of `core.machine_for` under
Hypothesis with the profile's example count and step count, stops generating when the budget is spent,
and returns the outcome: the shortest failing run (after Hypothesis' shrinking), the runs and steps made,
and a sample of finished traces for the coverage report. Same seed, same system -> same outcome.
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, settings
from hypothesis.errors import Flaky
from hypothesis.stateful import run_state_machine_as_test

from conformance.harness.core import (
    Driver,
    Failure,
    FailureLog,
    InternalError,
    OutOfBudget,
    SystemFactory,
    machine_for,
)
from conformance.harness.minimise import Minimised, minimise
from conformance.harness.report import run_coverage

MECHANISMS = ("sr", "am", "pf")


@dataclass(frozen=True)
class Profile:
    name: str
    max_examples: int
    steps: int
    budget_s: float
    shrink: bool = True


PROFILES = {
    "quick": Profile("quick", max_examples=10_000, steps=20, budget_s=40.0),  # stops on the budget
    "deep": Profile("deep", max_examples=5000, steps=60, budget_s=600.0),
}


def driver(mechanism: str) -> Driver:
    if mechanism not in MECHANISMS:
        raise KeyError(f"unknown mechanism {mechanism!r}; the conformance suite drives: {', '.join(MECHANISMS)}")
    return importlib.import_module(f"conformance.harness.{mechanism}").DRIVER


def hypothesis_settings(profile: Profile, seed_derandomize: bool = True) -> settings:
    phases = [Phase.explicit, Phase.generate] + ([Phase.shrink] if profile.shrink else [])
    return settings(
        max_examples=profile.max_examples,
        stateful_step_count=profile.steps,
        deadline=None,
        database=None,
        derandomize=seed_derandomize,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )


@dataclass
class Outcome:
    mechanism: str
    failure: Failure | None
    runs: int
    steps: int
    elapsed_s: float
    exhausted_budget: bool
    traces: list = field(default_factory=list)
    first_found_s: float | None = None
    error: str = ""  # an exception that is not a verdict (the caller exits 3); `traceback` for the error log
    unjudged_runs: int = 0  # runs whose records the monitor could not judge (verdict unknown)
    unjudged_notes: list[str] = field(default_factory=list)
    minimised: Minimised | None = None  # the replay minimiser's work on the failure (None: not run)
    inputs: list = field(default_factory=list)  # each kept trace's (setup, steps), in the order of `traces`
    first_found_run: int | None = None  # the run in which the first failure was found
    covered_runs: int = 0  # finished runs whose coverage was measured (`cover_per_run`)
    rule_runs: dict[str, int] = field(default_factory=dict)  # rule -> runs that exercised it
    traceback: str = ""  # an internal error's (a bug in rule code), else ''


def shrink_budget(budget_s: float, elapsed_s: float) -> float:
    """The minimiser's default share: what is left of a quarter more than the budget, at least 10 s and at most
    30 s (Hypothesis' own shrinking stops with the budget: the minimiser does the reducing)."""
    return min(30.0, max(10.0, budget_s * 1.25 - elapsed_s))


def search(
    mechanism: str,
    factory: SystemFactory | None = None,
    profile: str | Profile = "quick",
    budget_s: float | None = None,
    keep_traces: int = 0,
    watch: frozenset[str] | None = None,
    drv: Driver | None = None,
    shrink: bool = True,
    shrink_budget_s: float | None = None,
    shrink_replays: int = 400,
    keep_going: bool = False,
    cover_per_run: int = 0,
) -> Outcome:
    """`drv`: the mechanism's driver in a variant (`mutant_driver`); default `driver(mechanism)`.

    The search stops at the first failure (no further run starts; Hypothesis' own shrinking is cut short),
    unless `keep_going`: then Hypothesis goes on with its own shrinking of it (more runs) until that is done
    or the budget is spent, and the shortest failure seen is reported. Either way the failure's step list is
    then minimised by replay (`minimise.minimise`, unless `shrink` is false) within `shrink_budget_s` seconds (default
    `shrink_budget`) and `shrink_replays` replays.
    `cover_per_run` > 0: every finished run's coverage is measured with that many perturbations
    (`report.run_coverage`); the counts per rule are `Outcome.rule_runs` over `Outcome.covered_runs`."""
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    budget = prof.budget_s if budget_s is None else budget_s
    drv = drv or driver(mechanism)
    t0 = time.monotonic()
    log = FailureLog(
        deadline=t0 + budget, shrink_deadline=t0 + budget, keep_traces=keep_traces, stop_at_first=not keep_going
    )
    if cover_per_run > 0:
        monitor = drv.monitor()
        log.cover = lambda events, n: run_coverage(mechanism, monitor, events, n, cover_per_run)
    machine = machine_for(drv, factory, log, watch)
    exhausted = False
    error = trace = ""
    try:
        run_state_machine_as_test(machine, settings=hypothesis_settings(prof))
    except OutOfBudget:
        exhausted = log.first is None or keep_going
    except InternalError as exc:  # a bug in our rule code: never a verdict, whatever was found before it
        error, trace = f"internal error in {exc}", exc.traceback
    except (AssertionError, Flaky):
        pass  # the failure is in the log
    except Exception as exc:  # an exception the system raised, not a verdict: the caller reports it
        if log.best is None:
            error = f"{type(exc).__name__}: {exc}"
    best, shrunk = log.best, None
    if best is not None and shrink and not trace:
        spent = time.monotonic() - t0
        cap = shrink_budget(budget, spent) if shrink_budget_s is None else shrink_budget_s
        try:
            shrunk = minimise(drv, factory or drv.model_factory(), best, cap, shrink_replays, watch)
            best = shrunk.failure
        except InternalError as exc:
            error, trace = f"internal error in {exc}", exc.traceback
    return Outcome(
        mechanism,
        best,
        log.runs,
        log.steps_run,
        time.monotonic() - t0,
        exhausted,
        log.traces,
        log.first.found_after_s if log.first else None,
        error,
        log.unjudged_runs,
        list(log.unjudged_notes),
        shrunk,
        list(log.inputs),
        log.first.found_in_run if log.first else None,
        log.covered_runs,
        dict(log.rule_runs),
        trace,
    )


@dataclass
class Kill:
    """One row of the kill report. `expected` is the mutant's rules: the one it was planted against first,
    then the others that legitimately expose it too (sr `Mutant.also`, pf `mutants.ALSO`). A mutant is
    killed only when the failure found is one of them; `caught_by` says which: "expected", "also", or
    "other" (a different rule fired: not a kill, the mutant or the monitor needs a look)."""

    mutant: str
    killed: bool
    seconds_to_kill: float | None
    seconds_total: float
    steps: int | None
    rule: str
    requirement: str
    expected: tuple[str, ...]
    note: str = ""
    caught_by: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "mutant": self.mutant,
            "killed": self.killed,
            "seconds_to_kill": None if self.seconds_to_kill is None else round(self.seconds_to_kill, 3),
            "seconds_total": round(self.seconds_total, 3),
            "steps": self.steps,
            "rule": self.rule,
            "requirement": self.requirement,
            "expected_rules": list(self.expected[:1]),
            "also_rules": list(self.expected[1:]),
            "caught_by": self.caught_by,
            "expected_rule_caught": self.caught_by == "expected",
            "note": self.note,
        }


def caught_by(rule: str, expected: Sequence[str]) -> str:
    """How a failure's rule relates to a mutant's rules: "expected" (the first), "also" (the others), "other"."""
    if expected and rule == expected[0]:
        return "expected"
    return "also" if rule in expected[1:] else "other"


def judge_kill(name: str, expected: tuple[str, ...], out: Outcome, spent_s: float = 0.0) -> Kill:
    """The kill report's row for one search of a mutant (`spent_s`: seconds of earlier searches of it)."""
    f = out.failure
    total = spent_s + out.elapsed_s
    if f is None:
        return Kill(name, False, None, total, None, "", "", expected, out.error)
    how = caught_by(f.rule, expected)
    note = f.problem[:200] if not f.violations else ""
    if how == "other":
        note = f"caught only by {f.rule}, none of {', '.join(expected)}" + (f": {note}" if note else "")
    found = None if out.first_found_s is None else spent_s + out.first_found_s
    return Kill(name, how != "other", found, total, len(f.steps), f.rule, f.requirement, expected, note, how)


def mutant_driver(mechanism: str, name: str) -> Driver:
    """The driver a mutant is searched with: its `for_mutant(name)` variant where it has one (the settings the
    mutant's rule needs), else the mechanism's driver."""
    drv = driver(mechanism)
    tailor = getattr(drv, "for_mutant", None)
    return tailor(name) if tailor else drv


class RuleCodeError(RuntimeError):
    """A search of a mutant met a bug in our rule code (`Outcome.traceback`): the kill report cannot be made
    (`haconform mutants` exits 3), a mutant is never reported as surviving because the checker broke."""


def search_mutant(
    mechanism: str,
    name: str,
    profile: str | Profile = "quick",
    budget_s: float | None = None,
    watch: frozenset[str] | None = None,
) -> Outcome:
    """Search the model with mutant `name` planted, under the settings the mutant is searched with; raise
    `RuleCodeError` when the search met a bug in our rule code."""
    drv = mutant_driver(mechanism, name)
    out = search(mechanism, drv.model_factory(name), profile, budget_s, watch=watch, drv=drv)
    if out.traceback:
        raise RuleCodeError(f"mutant {name}: {out.error}\n{out.traceback}")
    return out


def kill_mutant(mechanism: str, name: str, profile: str | Profile = "quick", budget_s: float | None = None) -> Kill:
    """Search the mutant with every rule armed; when the first failure is a rule the mutant does not name,
    search again for the rest of the budget with only its rules armed (the other rule is kept in the note)."""
    drv = driver(mechanism)
    expected = drv.mutants().get(name, ())
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    budget = prof.budget_s if budget_s is None else budget_s
    out = search_mutant(mechanism, name, prof, budget)
    kill = judge_kill(name, expected, out)
    left = budget - out.elapsed_s
    if kill.caught_by != "other" or not expected or left <= 0:
        return kill
    watched = search_mutant(mechanism, name, prof, left, watch=frozenset(expected))
    again = judge_kill(name, expected, watched, out.elapsed_s)
    if not again.killed:
        return kill
    again.note = f"first failure: {kill.rule} ({kill.requirement}), not one of the mutant's rules"
    return again


def kill_report(kills: Sequence[Kill]) -> dict[str, Any]:
    times = [k.seconds_to_kill for k in kills if k.killed and k.seconds_to_kill is not None]
    steps = [k.steps for k in kills if k.killed and k.steps is not None]
    return {
        "mutants": len(kills),
        "killed": sum(k.killed for k in kills),
        "survivors": [k.mutant for k in kills if not k.killed],
        "caught_by_other_rule": [k.mutant for k in kills if k.caught_by == "other" and not k.killed],
        "caught_by_also_rule": [k.mutant for k in kills if k.killed and k.caught_by == "also"],
        "median_seconds_to_kill": round(statistics.median(times), 3) if times else None,
        "worst_seconds_to_kill": round(max(times), 3) if times else None,
        "median_steps": statistics.median(steps) if steps else None,
    }
