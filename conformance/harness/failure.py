"""A failing run of the conformance harness (`Failure`, its `Step`s) and the text a person reads about it:
the seed, the step list, each violated rule with its requirement and the seed section it comes from
(`spec.catalogue`). Below the harness's state machine (`core`, which raises with this text) and its report
writer (`report`, which also writes the replay file).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec.catalogue import catalogue
from traces.schema import Event
from traces.verdict import Violation

Call = dict[str, Any]  # {"call": protocol method, "args": {...}} (args may hold {"$server": i} / {"$folder": i})


@dataclass
class Step:
    op: str
    calls: list[Call]

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "calls": self.calls}


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

    @property
    def rule(self) -> str:
        if self.violations:
            return self.violations[0].rule
        return self._tagged()[1] or "adapter-protocol"

    @property
    def requirement(self) -> str:
        return self.violations[0].requirement if self.violations else self._tagged()[0]

    def _tagged(self) -> tuple[str, str]:
        """An end-of-run check's problem reads `[REQ-ID rule] ...`."""
        if self.problem.startswith("[") and "]" in self.problem:
            req, _, rule = self.problem[1 : self.problem.index("]")].partition(" ")
            return req, rule
        return "", ""

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
