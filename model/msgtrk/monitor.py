"""The monitor of imported message tracking logs (mechanism `msgtrk`): what the logs can show, and
"unknown" with a reason for what they cannot.

Seed 000 ("How shadow messages are created", "How shadow messages are maintained", "SMTP timeouts", "Message
processing after an outage", "Messages sent outside a transport high availability boundary"), read for
tracking logs as interpretations SR-I26, SR-I27 and SR-I28. It judges from the configuration recorded in the
trace's IMPORT_START (boundaries, RejectMessageOnShadowFailure, ShadowResubmitTimeSpan) and the rows it has
seen; orders between two servers' clocks are judged only under a clock-skew bound (`--skew`), with the
existing skew check (`spec.claims.skew`), one joint system per trace. Every violation and note names the
log lines (`file:line`, TR-007). Trace scope: one import is one trace. Parts: `judging` (the recorded
configuration, the judgement in progress), `shadows` (one message's shadow), `orders` (cross-server orders),
`smtpmon` (the replies to the sender, protocol logs).

What each rule judged (issue 29) is counted in the result's `Tally`: one instance per paired HAREDIRECT
(SR-028, SR-015, SR-001 on one clock, SR-030), per shadow discard (SR-052), per promotion (SR-062), per
RESUBMIT (SR-025), per next hop leaving the boundary (SR-033), per HAREDIRECTFAIL (SR-019/SR-021), per
rejection text (SR-020), per RECEIVE's S:Replication (SR-028, SR-021; `replication`), per cross-server order
judged under the skew bound, and on protocol logs per
acknowledgement, shadow session and Send session (`model.msgtrk.smtpmon`). What the import does not let a
rule judge is skipped with the reason: no boundary recorded (SR-015, SR-025, SR-033), no SMTP protocol log
rows (the `smtp-*` rules), no clock-skew bound, a shadow log not imported, a HAREDIRECT not paired.

Input faults (the only exception turned into an unknown note, `traces.verdict.InputFault`): an IMPORT_START
whose recorded configuration does not parse (`coverage`, `shadow_resubmit_ms`). Rows are otherwise read with
`attrs.get`, and what they lack is a note with the log line; any other exception is a bug (exit 3).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from model.msgtrk import rules as R
from model.msgtrk.events import IMPORT_KIND, MECHANISM, NEXT_HOP, SMTP_KINDS
from model.msgtrk.judging import NO_BOUNDARY, NO_PROTOCOL_LOG, Config, Judge, where
from model.msgtrk.orders import cross_server
from model.msgtrk.replication import judge_replication
from model.msgtrk.shadows import judge_boundary, judge_redirect
from model.msgtrk.smtpmon import judge_failure, judge_protocol
from spec.catalogue import require
from traces.schema import Event
from traces.verdict import InputFault, MonitorResult, Tally

require("SR-031", "SR-059")


@dataclass
class AuditMonitor:
    """Judges one imported trace. `skew_ms`: the clock-skew bound for cross-server orders (None: not judged)."""

    skew_ms: int | None = None
    mechanism: str = MECHANISM
    scope: Literal["entity", "trace"] = "trace"

    def start(self, context: Sequence[Event] = ()) -> AuditFold:
        return AuditFold(self)

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        return self.judge(events[0] if events else None, [e for e in events if e.mechanism == MECHANISM])

    def judge(self, first: Event | None, ours: list[Event]) -> MonitorResult:
        """`first`: the trace's first event; `ours`: its imported rows (message tracking rows are paired
        across servers by identifiers, in any order, so an imported trace's own rows are judged together)."""
        if first is None or not ours:
            return MonitorResult.of((), tally=Tally())
        tally = Tally()
        tally.judge(R.IMPORT_START_FIRST)
        if first.kind != IMPORT_KIND or first.mechanism != MECHANISM:
            v = R.IMPORT_START_FIRST.violated(
                (first, ours[0]),
                f"the trace holds imported log rows but begins with {first.kind}, not {IMPORT_KIND}: "
                "its rule set cannot be decided",
                entity=ours[0].entity,
                observed=first.kind,
                expected=IMPORT_KIND,
            )
            return MonitorResult.of((v,), tally=tally)
        try:
            cfg = Config.of(first)
        except InputFault as x:
            return MonitorResult.of((), [f"{first.trace_id}: IMPORT_START cannot be read: {x}"], tally=tally)
        judge = Judge(first.trace_id, cfg, tally)
        by_entity: dict[str, list[Event]] = defaultdict(list)
        for e in ours[1:]:
            if "/" in e.entity and not e.entity.startswith(("row:", "smtp")):
                by_entity[e.entity].append(e)
        for entity in sorted(by_entity):
            _judge_entity(judge, entity, by_entity[entity])
        if not cfg.boundaries:
            for rule in R.BOUNDARY_RULES:
                tally.skip(rule, NO_BOUNDARY, max(1, len(by_entity)))
        acked = judge_protocol(judge.bad, judge.notes, tally, judge.cfg.reject, by_entity, ours[1:])
        _trace_notes(judge, first, by_entity, acked, any(e.kind in SMTP_KINDS for e in ours))
        cross_server(judge, self.skew_ms)
        return MonitorResult.of(judge.violations, judge.notes, tally=tally)


class AuditFold:
    """The fold of the imported-log monitor: it keeps the trace's first event and its imported rows only
    (a simulated trace costs it nothing), and judges them together at the end (the tally with them)."""

    __slots__ = ("first", "monitor", "ours")

    def __init__(self, monitor: AuditMonitor) -> None:
        self.monitor, self.first, self.ours = monitor, None, []

    def feed(self, e: Event) -> None:
        if self.first is None:
            self.first = e
        if e.mechanism == MECHANISM:
            self.ours.append(e)

    def finish(self) -> MonitorResult:
        return self.monitor.judge(self.first, self.ours)

    def describe(self, entity: str | None = None) -> dict[str, Any]:
        """A compact, JSON-able summary for the report: the configuration recorded at import (SR-I26) and the
        rows of `entity` seen so far, by server. The rules are applied at the end of the import (rows are
        paired across servers by identifiers, in any order), so this is what they will be applied to."""
        out: dict[str, Any] = {"rows imported so far": len(self.ours)}
        if self.first is not None and self.first.kind == IMPORT_KIND:
            cfg = Config.of(self.first)
            out["boundaries recorded at import"] = {k: sorted(v) for k, v in sorted(cfg.boundaries.items())} or "none"
            out["RejectMessageOnShadowFailure"] = cfg.reject
        if entity is not None:
            rows: dict[str, list[str]] = defaultdict(list)
            for e in self.ours:
                if e.entity == entity:
                    rows[e.node].append(e.kind)
            out[f"rows of {entity} so far"] = {n: ", ".join(k) for n, k in sorted(rows.items())} or "none"
        out["judged"] = "at the end of the import, all rows together"
        return out


def _trace_notes(
    judge: Judge, start: Event, by_entity: dict[str, list[Event]], acked: set[str], protocol: bool
) -> None:
    a = start.attrs
    made = {k for k, evs in by_entity.items() if any(e.kind in ("HAREDIRECT", "HAREDIRECTFAIL") for e in evs)}
    shadowed = len(made - acked)
    if not protocol:  # each message made a shadow of is an SR-031 instance; the rest: one for the trace
        for rule in R.SMTP_RULES:
            judge.tally.skip(rule, NO_PROTOCOL_LOG, max(1, shadowed) if rule is R.SMTP_ACK_AFTER_SHADOW else 1)
    elif shadowed:
        judge.tally.skip(R.SMTP_ACK_AFTER_SHADOW, "no protocol-log reply joins the message", shadowed)
    if shadowed:
        judge.notes.append(
            f"{judge.trace}: SR-031 (the primary acknowledges the sender only after the shadow's "
            f"acknowledgement) is not judged for {shadowed} message(s): the acknowledgement to the "
            "sender is not in message tracking logs, only in the SMTP Receive protocol log, and no imported "
            "protocol-log reply joins them (SR-I28, SR-I29)"
        )
    if a.get("lines_quarantined"):
        shown = "; ".join(a.get("quarantine", [])[:5])
        judge.notes.append(
            f"{judge.trace}: {a['lines_quarantined']} log line(s) could not be read and were not "
            f"judged (TR-007): {shown}"
        )
    if made and not judge.cfg.boundaries:
        judge.notes.append(
            f"{judge.trace}: no transport high availability boundaries were given at import "
            "(--boundary): shadow placement and resubmission across boundaries not judged "
            "(SR-015, SR-025, SR-033)"
        )


def _judge_entity(j: Judge, entity: str, evs: list[Event]) -> None:
    primary = entity.split("/", 1)[0]
    prim = [e for e in evs if e.node == primary]
    hops = [e for e in prim if e.kind in NEXT_HOP]
    bound = j.cfg.boundary_of(primary) if j.cfg.boundaries else None
    if j.cfg.boundaries and bound is None:
        for rule in R.BOUNDARY_RULES:
            j.tally.skip(rule, "the primary is in no boundary recorded at import")
        if any(e.kind == "HAREDIRECT" for e in prim):
            j.notes.append(
                f"{entity}: primary {primary} is in no configured boundary: placement not judged "
                f"(log line {where(prim[0])})"
            )
    for h in (e for e in prim if e.kind == "HAREDIRECT"):
        judge_redirect(j, entity, primary, h, evs, hops, bound)
    judge_replication(j, entity, primary, prim, hops)
    for f in (e for e in prim if e.kind == "HAREDIRECTFAIL"):
        judge_failure(j.bad, j.notes, j.tally, (j.cfg.reject, j.cfg.variant), entity, f, prim)
    if bound is not None:
        judge_boundary(j, entity, primary, evs, prim, hops, bound)
