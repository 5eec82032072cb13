"""The record of one search (`FailureLog`): every failure seen, the runs and steps made, the sample of finished
traces kept for coverage (with each run's setup, steps and the system's answers, which the coverage floor's
replay on the model follows: issue 36) and the coverage over every finished run. Below `core.machine_for`,
which fills it; `search.search` reads it. `OutOfBudget` ends a search when its time is spent."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.harness.failure import Failure, judging
from traces.schema import Event


class OutOfBudget(BaseException):
    """Raised inside the search when the time budget is spent (a BaseException: Hypothesis lets it through)."""


@dataclass
class FailureLog:
    """Every failure seen in one search; the shortest is the counterexample reported (Hypothesis replays the
    shrunk example last, and a deterministic system fails again on the same steps)."""

    deadline: float | None = None  # time.monotonic() after which no new example starts
    shrink_deadline: float | None = None
    stop_at_first: bool = False  # no new run once a failure is found (the replay minimiser shrinks it)
    started: float = field(default_factory=time.monotonic)
    failures: list[Failure] = field(default_factory=list)
    runs: int = 0
    steps_run: int = 0
    traces: list[list[Event]] = field(default_factory=list)  # the richest finished traces (coverage)
    inputs: list[Any] = field(default_factory=list)  # each kept trace's (setup, steps): the model replays them
    keep_traces: int = 0
    _features: list[set[Any]] = field(default_factory=list)
    unjudged_runs: int = 0  # finished runs the monitor could not judge (verdict unknown): never a pass
    unjudged_notes: list[str] = field(default_factory=list)  # the first few reasons
    # coverage over every finished run (not a sample): `cover(events, n)` gives the rules one run exercised
    # (`report.run_coverage`); `rule_runs[rule]` counts the runs that exercised each rule
    cover: Callable[[list[Event], int], set[str]] | None = None
    covered_runs: int = 0
    rule_runs: dict[str, int] = field(default_factory=dict)

    def record(self, failure: Failure) -> None:
        failure.found_after_s = time.monotonic() - self.started
        failure.found_in_run = self.runs
        self.failures.append(failure)

    @property
    def first(self) -> Failure | None:
        return self.failures[0] if self.failures else None

    @property
    def best(self) -> Failure | None:
        if not self.failures:
            return None
        return min(self.failures, key=lambda f: (len(f.steps), sum(len(s.calls) for s in f.steps)))

    def keep(self, events: list[Event], inputs: Any = None) -> None:
        """Keep `keep_traces` finished traces for the coverage report, chosen for variety: a trace replaces the
        kept one that adds least to the sample (fewest features no other kept trace has) when it adds more
        (ties: the shorter trace, cheaper to perturb).
        Features: event kinds, boolean and word-valued attributes, the recorded configuration's settings.
        Hypothesis' first runs are its simplest, so the first few traces would show little of the run.
        `inputs` (the run's setup and steps) is kept beside its trace, for the reference model's coverage on the
        same inputs (`conformance.harness.floor`).
        Every finished run, kept or not, counts towards the coverage over all runs (`cover`)."""
        if self.cover is not None:
            self.covered_runs += 1
            cover, n = self.cover, self.covered_runs
            for rule in judging("the coverage of a finished run", lambda: cover(events, n)):
                self.rule_runs[rule] = self.rule_runs.get(rule, 0) + 1
        if self.keep_traces <= 0:
            return
        feats = features(events)
        if len(self.traces) < self.keep_traces:
            self.traces.append(events)
            self.inputs.append(inputs)
            self._features.append(feats)
            return
        counts: dict[Any, int] = {}
        for fs in self._features:
            for f in fs:
                counts[f] = counts.get(f, 0) + 1
        unique = [sum(counts[f] == 1 for f in fs) for fs in self._features]
        worst = min(range(len(unique)), key=lambda i: (unique[i], len(self._features[i]), -len(self.traces[i])))
        others = {f for f, n in counts.items() if n > 1 or f not in self._features[worst]}
        gain = len(feats - others)
        if (gain, len(feats), -len(events)) > (unique[worst], len(self._features[worst]), -len(self.traces[worst])):
            self.traces[worst], self._features[worst] = events, feats
            self.inputs[worst] = inputs

    def check_time(self) -> None:
        if self.failures and self.stop_at_first:
            raise OutOfBudget  # the first failure ends the search; `search` minimises it by replay
        now = time.monotonic()
        if not self.failures and self.deadline is not None and now > self.deadline:
            raise OutOfBudget
        if self.failures and self.shrink_deadline is not None and now > self.shrink_deadline:
            raise OutOfBudget


def features(events: Sequence[Event]) -> set[Any]:
    """What a trace shows, for choosing varied traces: kinds, (kind, attribute, value) for booleans and words
    (strings without digits: outcomes, reasons, roles), and the recorded configuration's scalar settings."""
    out: set[Any] = set()
    for e in events:
        out.add(e.kind)
        for k, v in e.attrs.items():
            if isinstance(v, bool) or (isinstance(v, str) and len(v) <= 40 and not any(c.isdigit() for c in v)):
                out.add((e.kind, k, v))
        if e.kind == "TRACE_START" and isinstance(e.attrs.get("config"), str):
            try:
                cfg = json.loads(e.attrs["config"])
            except ValueError:
                continue
            for section in (cfg, *(v for v in cfg.values() if isinstance(v, dict))) if isinstance(cfg, dict) else ():
                out.update(("config", k, v) for k, v in section.items() if isinstance(v, (bool, int, str)))
    return out
