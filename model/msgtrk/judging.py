"""What the imported-log monitor (`model.msgtrk.monitor`) judges with: the configuration recorded in the trace's
IMPORT_START (SR-I26: boundaries, RejectMessageOnShadowFailure, ShadowResubmitTimeSpan, the time each server's
log covers), the judgement in progress (violations, notes, the cross-server orders left for the skew check, the
`Tally` of what each rule judged), and the reasons a rule is not judged on an import.

Seed 000, interpretations SR-I26..SR-I29. Input faults: `Config.of` raises `InputFault` where the recorded
configuration does not parse; nothing else here turns an exception into a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from traces.schema import Event
from traces.verdict import Rule, Tally, Violation, input_fault

NO_BOUNDARY = "no transport high availability boundary was recorded at import (--boundary)"
NO_PROTOCOL_LOG = "no SMTP protocol log rows were imported"
NO_SKEW = "an order between two servers' clocks, and no clock-skew bound was given (--skew)"


def where(e: Event) -> str:
    """The log line an event came from, as `file:line`."""
    return f"{e.attrs.get('src_file', '?')}:{e.attrs.get('src_line', '?')}"


@dataclass(frozen=True)
class Config:
    boundaries: dict[str, frozenset[str]]
    reject: bool
    variant: bool
    span_ms: int
    coverage: dict[str, tuple[int, int]]

    @staticmethod
    def of(start: Event) -> Config:
        """The configuration recorded in IMPORT_START; raises `InputFault` where it does not parse."""
        a = start.attrs
        bounds = {}
        for item in a.get("boundaries", []):
            name, _, servers = item.partition("=")
            bounds[name] = frozenset(s for s in servers.split(",") if s)
        cover = {}
        try:
            for item in a.get("coverage", []):
                node, _, span = item.partition("=")
                lo, _, hi = span.partition("..")
                cover[node] = (int(lo), int(hi))
            span_ms = int(a.get("shadow_resubmit_ms", 0))
        except (TypeError, ValueError) as x:  # the recorded configuration, not rule code
            raise input_fault(f"unreadable configuration ({x!r})", start) from None
        return Config(
            bounds,
            bool(a.get("reject_on_shadow_failure")),
            bool(a.get("accept_rejection_variant")),
            span_ms,
            cover,
        )

    def boundary_of(self, server: str) -> frozenset[str] | None:
        """The servers of `server`'s boundary (SR-006), or None when no configured boundary holds it."""
        for members in self.boundaries.values():
            if server in members:
                return members
        return None


@dataclass
class Judge:
    trace: str
    cfg: Config
    tally: Tally = field(default_factory=Tally)
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cross: list[tuple[Rule, Event, Event, str]] = field(default_factory=list)  # rule, before, after, entity

    def bad(self, rule: Rule, entity: str, evs: Sequence[Event], why: str, **data: Any) -> None:
        lines = ", ".join(where(e) for e in evs)
        self.violations.append(rule.violated(evs, f"{why} (log lines {lines})", entity=entity, **data))

    def covers(self, server: str, ts: int) -> bool:
        lo_hi = self.cfg.coverage.get(server)
        return lo_hi is not None and lo_hi[0] <= ts <= lo_hi[1]
