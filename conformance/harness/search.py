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

from conformance.harness.core import Driver, Failure, FailureLog, OutOfBudget, SystemFactory, machine_for

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
    error: str = ""
    unjudged_runs: int = 0  # runs whose records the monitor could not judge (verdict unknown)
    unjudged_notes: list[str] = field(default_factory=list)


def search(
    mechanism: str,
    factory: SystemFactory | None = None,
    profile: str | Profile = "quick",
    budget_s: float | None = None,
    keep_traces: int = 0,
    watch: frozenset[str] | None = None,
) -> Outcome:
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    budget = prof.budget_s if budget_s is None else budget_s
    drv = driver(mechanism)
    t0 = time.monotonic()
    log = FailureLog(deadline=t0 + budget, shrink_deadline=t0 + budget * 4 / 3, keep_traces=keep_traces)
    machine = machine_for(drv, factory, log, watch)
    exhausted = False
    error = ""
    try:
        run_state_machine_as_test(machine, settings=hypothesis_settings(prof))
    except OutOfBudget:
        exhausted = True
    except (AssertionError, Flaky):
        pass  # the failure is in the log
    except Exception as exc:  # an exception the system raised, not a verdict: the caller reports it
        if log.best is None:
            error = f"{type(exc).__name__}: {exc}"
    return Outcome(
        mechanism,
        log.best,
        log.runs,
        log.steps_run,
        time.monotonic() - t0,
        exhausted,
        log.traces,
        log.first.found_after_s if log.first else None,
        error,
        log.unjudged_runs,
        list(log.unjudged_notes),
    )


@dataclass
class Kill:
    mutant: str
    killed: bool
    seconds_to_kill: float | None
    seconds_total: float
    steps: int | None
    rule: str
    requirement: str
    expected: tuple[str, ...]
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "mutant": self.mutant,
            "killed": self.killed,
            "seconds_to_kill": None if self.seconds_to_kill is None else round(self.seconds_to_kill, 3),
            "seconds_total": round(self.seconds_total, 3),
            "steps": self.steps,
            "rule": self.rule,
            "requirement": self.requirement,
            "expected_rules": list(self.expected),
            "expected_rule_caught": bool(self.rule) and self.rule in self.expected,
            "note": self.note,
        }


def kill_mutant(mechanism: str, name: str, profile: str | Profile = "quick", budget_s: float | None = None) -> Kill:
    drv = driver(mechanism)
    expected = drv.mutants().get(name, ())
    out = search(mechanism, drv.model_factory(name), profile, budget_s)
    f = out.failure
    if f is None:
        return Kill(name, False, None, out.elapsed_s, None, "", "", expected, out.error)
    return Kill(
        name,
        True,
        out.first_found_s,
        out.elapsed_s,
        len(f.steps),
        f.rule,
        f.requirement,
        expected,
        f.problem[:200] if not f.violations else "",
    )


def kill_report(kills: Sequence[Kill]) -> dict[str, Any]:
    times = [k.seconds_to_kill for k in kills if k.seconds_to_kill is not None]
    steps = [k.steps for k in kills if k.steps is not None]
    return {
        "mutants": len(kills),
        "killed": sum(k.killed for k in kills),
        "survivors": [k.mutant for k in kills if not k.killed],
        "median_seconds_to_kill": round(statistics.median(times), 3) if times else None,
        "worst_seconds_to_kill": round(max(times), 3) if times else None,
        "median_steps": statistics.median(steps) if steps else None,
    }
