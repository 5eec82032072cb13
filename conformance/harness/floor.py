"""The coverage floor of `haconform conform`: a system under test passes only when its runs exercise at least
`FLOOR_SHARE` (half) of the number of rules the reference model exercises on the same inputs.

A system that answers every request and records nothing (or records too little for the monitors to judge)
breaks no rule: without a floor it would pass. The harness keeps each sampled run's setup and steps beside
its trace (`core.FailureLog.keep`); `reference_coverage` replays those steps against the mechanism's model
(`core.replay_steps`, as `haconform replay` does) and measures the model's coverage with the same
perturbations (`report.coverage`, same seed). `shortfall` compares the two: the system passes when it
exercises at least half as many rules as the model did on those inputs (rounded up); otherwise the verdict
names how many it exercised, how many the model did and the rules the model reached that the system did not.

Why half and not all: the reference systems of `examples/sut/` are correct and record what the protocol asks,
yet their records give the perturbations fewer handles than the model's (measured with a 10 s budget: sr 24
of the model's 27, am 15 of 22, pf 22 of 16), so "no fewer than the model" would fail them. Half keeps
them passing with a margin and fails a system that records nothing (0) or next to nothing.
A run the model cannot replay (steps naming what the model does not know) is left out and counted.

`missing` (issue 29) is shown on every run of `conform`, pass or fail, system or model: the rules the model
exercised on those inputs that the system never exercised over the whole budget (the sampled traces and, when
measured, every finished run: `report.all_runs_coverage`), each with its requirement ID. Against the model
itself it names none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conformance.harness.core import StepError, SutFailure, replay_steps
from conformance.harness.report import coverage, rule_table
from conformance.harness.search import driver
from traces.schema import Event

FLOOR_SHARE = (1, 2)  # numerator, denominator: the share of the model's exercised rules a system must reach
MISSING_SHOWN = 20  # rules the terminal lists one a line (the JSON report holds them all)


@dataclass
class Floor:
    """The system's coverage against the reference model's on the same inputs."""

    exercised: list[str]  # rules the system's runs exercised
    reference: list[str]  # rules the model exercised on the same inputs
    runs: int  # runs the model replayed
    not_replayed: int = 0
    missing: list[str] = field(default_factory=list)  # exercised by the model, never by the system
    requirements: dict[str, str] = field(default_factory=dict)  # rule -> requirement ID (the missing rules')
    diverged: list[str] = field(default_factory=list)  # where the model could not follow the system (issue 36)

    @property
    def required(self) -> int:
        num, den = FLOOR_SHARE
        return -(-len(self.reference) * num // den)  # rounded up: at least one when the model exercises any

    @property
    def below(self) -> bool:
        return len(self.exercised) < self.required

    def to_json(self) -> dict[str, Any]:
        return {
            "exercised": len(self.exercised),
            "reference_exercised": len(self.reference),
            "required": self.required,
            "reference_runs": self.runs,
            "not_replayed": self.not_replayed,
            "missing": self.missing,
            "missing_rules": [{"rule": r, "requirement": self.requirements.get(r, "")} for r in self.missing],
            "below": self.below,
            "diverged": self.diverged,
        }

    def missing_text(self, target: str) -> str:
        """The rules the model exercised on the same inputs that `target` never did, one a line (up to
        `MISSING_SHOWN`) with the requirement each enforces; printed on every run."""
        head = f"coverage against the reference model ({self.runs} run(s) replayed on the same inputs"
        head += f", {self.not_replayed} not replayable)" if self.not_replayed else ")"
        if not self.missing:
            lines = [f"{head}: none missing, {target} exercised every rule the model did ({len(self.reference)})"]
        else:
            lines = [f"{head}: {len(self.missing)} rule(s) the model exercised that {target} never did:"]
            width = max(len(r) for r in self.missing[:MISSING_SHOWN])
            lines += [f"  {r:<{width}}  {self.requirements.get(r, '')}" for r in self.missing[:MISSING_SHOWN]]
            if len(self.missing) > MISSING_SHOWN:
                more = len(self.missing) - MISSING_SHOWN
                lines.append(f"  ... and {more} more (all in --json: coverage_floor.missing)")
        return "\n".join(lines + self.diverged_lines(target))

    def diverged_lines(self, target: str) -> list[str]:
        """Where the model could not follow `target`'s answers on the same inputs (issue 36): information about
        the comparison, not a verdict (the rules judge the system's own records)."""
        if not self.diverged:
            return []
        lines = [f"the model could not follow {len(self.diverged)} answer(s) of {target} (calls skipped on the model):"]
        lines += [f"  {d}" for d in self.diverged[:MISSING_SHOWN]]
        if len(self.diverged) > MISSING_SHOWN:
            lines.append(f"  ... and {len(self.diverged) - MISSING_SHOWN} more (--json: coverage_floor.diverged)")
        return lines

    def text(self, mechanism: str, target: str) -> str:
        return (
            f"FAIL {mechanism}: {target} exercised {len(self.exercised)} rule(s), fewer than the required "
            f"{self.required} (half of the {len(self.reference)} the reference model exercises on the same inputs, "
            f"{self.runs} run(s) replayed against the model): a system must record the events its rules judge; "
            f"exercised by the model, not by the system: {', '.join(self.missing) or '(none by name)'}"
        )


def model_traces(mechanism: str, inputs: Sequence[Any]) -> tuple[list[list[Event]], int, list[str]]:
    """The model's traces for the recorded (setup, steps[, answers]) of each run; how many it could not replay;
    and where it could not follow the system (issue 36): each divergence names the run and the request.

    The model follows the system's recorded answers (`replay_steps(..., follow=answers)`): a call naming an
    object the system created and the model did not is skipped and noted, the rest of the run replayed. A
    run the model cannot apply at all (a call it rejects: `StepError`, `SutFailure`) is counted and noted."""
    drv = driver(mechanism)
    traces: list[list[Event]] = []
    failed = 0
    diverged: list[str] = []
    for n, item in enumerate(inputs, 1):
        if item is None:
            failed += 1
            continue
        setup, steps, *rest = item
        system = drv.model_factory()(setup)
        try:
            session, _ = replay_steps(drv, system, setup, steps, follow=rest[0] if rest else None)
            traces.append(list(session.events()))
            diverged += [f"run {n}: {d}" for d in session.diverged]
        except (StepError, SutFailure, KeyError, ValueError, TypeError, IndexError) as exc:
            failed += 1
            diverged.append(f"run {n}: not replayed on the model: {type(exc).__name__}: {exc}")
        finally:
            close = getattr(system, "close", None)
            if close is not None:
                close()
    return traces, failed, diverged


def reference_coverage(
    mechanism: str, inputs: Sequence[Any], seed: int = 0
) -> tuple[dict[str, Any], int, int, list[str]]:
    """The model's coverage over the same inputs, the runs replayed, the runs it could not replay, and where
    it could not follow the system's answers."""
    traces, failed, diverged = model_traces(mechanism, inputs)
    return coverage(mechanism, driver(mechanism).monitor(), traces, seed=seed), len(traces), failed, diverged


def shortfall(mechanism: str, system_cov: dict[str, Any], inputs: Sequence[Any], also: Sequence[str] = ()) -> Floor:
    """Compare the system's coverage (`report.coverage` of its traces) with the model's on its inputs. `also`:
    the rules the system exercised in any run of the budget (`report.all_runs_coverage`): a rule it exercised
    anywhere is never named missing; the floor itself compares the sample with the model's on it."""
    ref, runs, failed, diverged = reference_coverage(mechanism, inputs)
    mine = list(system_cov["exercised"])
    missing = sorted(set(ref["exercised"]) - set(mine) - set(also))
    table = rule_table(mechanism)
    reqs = {r: table.get(r, "") for r in missing}
    return Floor(mine, list(ref["exercised"]), runs, failed, missing, reqs, diverged)


def not_a_pass(mechanism: str, out: Any, sut: str | None) -> str:
    """Why a search without a failure (`search.Outcome`) is still no pass, for the pytest plugin: no run
    could be judged, or (for a system under test) its runs fall below the coverage floor; '' for a pass."""
    if out.runs > 0 and out.unjudged_runs >= out.runs:
        return f"UNKNOWN {mechanism}: the monitor could not judge any of the {out.runs} runs: " + "; ".join(
            out.unjudged_notes[:3]
        )
    if not sut or not any(i is not None for i in out.inputs):
        return ""
    floor = shortfall(mechanism, coverage(mechanism, driver(mechanism).monitor(), out.traces), out.inputs)
    return floor.text(mechanism, sut) if floor.below else ""
