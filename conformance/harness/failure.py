"""A failing run of the conformance harness (`Failure`, its `Step`s) and the text a person reads about it:
the seed, the step list, each violated rule with its requirement and the seed section it comes from
(`spec.catalogue`); what an end-of-run check found (`EndProblem`, carrying its rule); and `InternalError`, a bug
in our rule code met while judging (never a verdict: exit 3). Below the harness's state machine (`core`, which
raises with this text) and its report writer (`report`, which also writes the replay file).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec.catalogue import catalogue
from traces.schema import Event
from traces.verdict import Rule, Violation

Call = dict[str, Any]  # {"call": protocol method, "args": {...}} (args may hold {"$server": i} / {"$folder": i})


class StepError(Exception):
    """A recorded step that an in-process system cannot apply (a replay file naming what the setup lacks)."""


@dataclass
class Step:
    op: str
    calls: list[Call]

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "calls": self.calls}


class InternalError(BaseException):
    """An exception raised by haconform's own rule code while judging a run (a monitor's fold, the coverage's
    perturbed verdicts): a bug in the checker, never a verdict on the system (issue 29). A fold turns only the
    documented input faults of a trace into unknown notes (`traces.verdict.InputFault`); anything else that
    escapes it lands here. A BaseException, so Hypothesis lets it through at once (a bug of the checker is not
    shrunk as if it were the system's failure, and no later run starts); `traceback` is the original's, for
    the error log (`haconform conform`: exit 3)."""

    def __init__(self, where: str, exc: Exception) -> None:
        super().__init__(f"{where}: {type(exc).__name__}: {exc}")
        self.traceback = "".join(traceback.format_exception(exc, chain=False))


def judging(where: str, fn: Callable[[], Any]) -> Any:
    """`fn()` (rule code judging recorded events), any exception from it raised as an `InternalError`."""
    try:
        return fn()
    except Exception as exc:
        raise InternalError(where, exc) from exc


@dataclass(frozen=True)
class EndProblem:
    """What an end-of-run check (`Driver.end_checks`) found in what the system exposes through its protocol (the
    PAMs it reports, the copies it says are mounted, a folder's CNSets): the rule it breaks, as the object of
    its mechanism's table, and what was seen. Filtered and reported by `rule`, never by searching the text."""

    rule: Rule
    seen: str

    def __str__(self) -> str:
        return f"[{self.rule.requirement} {self.rule.name}] {self.seen}"


@dataclass
class Failure:
    """A failing run: what a person needs to act on it and to replay it."""

    mechanism: str
    setup: dict[str, Any]
    steps: list[Step]
    violations: list[Violation]
    problem: str = ""  # an adapter/protocol failure or an end-of-run check, when not a monitor violation
    events: list[Event] = field(default_factory=list)
    found_after_s: float = 0.0
    found_in_run: int = 0  # the run (1-based, counted over the whole search) in which it was found
    end_problems: list[EndProblem] = field(default_factory=list)  # the end-of-run checks' findings (`problem`)

    @property
    def rule(self) -> str:
        if self.violations:
            return self.violations[0].rule
        return self.end_problems[0].rule.name if self.end_problems else "adapter-protocol"

    @property
    def requirement(self) -> str:
        if self.violations:
            return self.violations[0].requirement
        return self.end_problems[0].rule.requirement if self.end_problems else ""

    def summary(self) -> str:
        if self.violations:
            return "; ".join(str(v) for v in self.violations[:3])
        return self.problem


def where_in_seed(req_id: str) -> str:
    cat = catalogue()
    if not req_id or not cat.has(req_id):
        return ""
    return "; ".join(f"{s.seed} \u00a7 {s.section}" for s in cat.get(req_id).sources)


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def steps_text(failure: Failure) -> list[str]:
    lines = []
    for n, step in enumerate(failure.steps, 1):
        calls = "; ".join(f"{c['call']}({_args_text(c.get('args', {}))})" for c in step.calls)
        lines.append(f"  {n:>2}. {step.op}: {calls}")
    return lines


def describe_failure(f: Failure, replay_file: str | Path | None = None) -> str:
    out = [f"FAIL {f.mechanism}: seed {f.setup.get('seed')}, setup {json.dumps(f.setup, sort_keys=True)}"]
    out.append(f"steps ({len(f.steps)}):")
    out.extend(steps_text(f) or ["   (none: the failure happens at set-up or at the end of the run)"])
    if f.violations:
        for v in f.violations[:5]:
            out.append(f"violated: {v.rule} ({v.requirement}) - {v.explanation}")
            seed = where_in_seed(v.requirement)
            if seed:
                out.append(f"  seed: {seed}")
            out.append(f"  events: {', '.join(v.event_ids[:8])}")
        if len(f.violations) > 5:
            out.append(f"  ... and {len(f.violations) - 5} more violations")
    if f.problem:
        out.append(f"problem: {f.problem}")
    if replay_file:
        out.append(f"replay: haconform replay {replay_file}")
    return "\n".join(out)
