"""Verdicts, violations and the `Monitor` protocol every mechanism's trace monitor implements.

Verdicts are three-valued, as in Jepsen's Elle: valid, invalid, or unknown when a trace is too incomplete
to judge. Every violation names its rule, the requirement ID it enforces, the events involved and one
sentence saying why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from traces.schema import Event

RuleKind = Literal["always", "eventually", "sometimes"]


@dataclass(frozen=True, slots=True)
class Rule:
    """One row of a mechanism's rules table (`model/<mechanism>/rules.py`: `RULES`, keyed by name).

    `always`: a safety rule checked at every step; `eventually`: a liveness rule judged at the end of a run
    under the fairness the mechanism's README states; `sometimes`: a reachability check (a run that never
    reaches it is suspicious, never a violation). `params` names the catalogue parameters (IDs such as
    `SR-P13`) whose recorded values bound the rule, so that every parameter that bounds observable
    behaviour can be traced to the rule that checks it.
    """

    name: str
    requirement: str
    kind: RuleKind
    statement: str
    params: tuple[str, ...] = ()


class Verdict(StrEnum):
    VALID = "valid"
    INVALID = "invalid"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Violation:
    rule: str
    requirement: str
    trace_id: str
    entity: str
    event_ids: tuple[str, ...]
    explanation: str
    mechanism: str = "core"

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "requirement": self.requirement,
            "mechanism": self.mechanism,
            "trace_id": self.trace_id,
            "entity": self.entity,
            "event_ids": list(self.event_ids),
            "explanation": self.explanation,
        }

    def __str__(self) -> str:
        ids = ", ".join(self.event_ids[:5]) + (" ..." if len(self.event_ids) > 5 else "")
        return f"[{self.requirement} {self.rule}] {self.trace_id}/{self.entity}: {self.explanation} (events: {ids})"


@dataclass(frozen=True, slots=True)
class MonitorResult:
    verdict: Verdict
    violations: tuple[Violation, ...] = ()
    notes: tuple[str, ...] = field(default=())  # why a verdict is unknown, or other remarks

    @staticmethod
    def of(violations: Iterable[Violation], unknown: Iterable[str] = ()) -> MonitorResult:
        vs, notes = tuple(violations), tuple(unknown)
        if vs:
            return MonitorResult(Verdict.INVALID, vs, notes)
        return MonitorResult(Verdict.UNKNOWN if notes else Verdict.VALID, (), notes)


@runtime_checkable
class Monitor(Protocol):
    """Replays recorded events through a mechanism's transition rules.

    `scope == "entity"`: `check` receives the events of one (trace_id, mechanism, entity), in sequence
    order. `scope == "trace"`: it receives every event of one trace (all mechanisms, core included).
    Either way `context` holds the trace's context events (`traces.schema.is_context_kind`: TRACE_START
    and the `*_CONFIG` events) in sequence order: the recorded configuration every duration a rule
    compares must come from, never from the event being judged.
    """

    mechanism: str
    scope: Literal["entity", "trace"]

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult: ...
