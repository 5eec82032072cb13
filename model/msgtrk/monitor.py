"""The monitor of imported message tracking logs (mechanism `msgtrk`): what the logs can show, and
"unknown" with a reason for what they cannot.

Seed 000 ("How shadow messages are created", "How shadow messages are maintained", "SMTP timeouts", "Message
processing after an outage", "Messages sent outside a transport high availability boundary"), read for
tracking logs as interpretations SR-I26, SR-I27 and SR-I28. It judges from the configuration recorded in the
trace's IMPORT_START (boundaries, RejectMessageOnShadowFailure, ShadowResubmitTimeSpan) and the rows it has
seen; orders between two servers' clocks are judged only under a clock-skew bound (`--skew`), with the
existing skew check (`spec.claims.skew`), one joint system per trace. Every violation and note names the
log lines (`file:line`, TR-007). Trace scope: one import is one trace.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from model.msgtrk.events import IMPORT_KIND, MECHANISM, NEXT_HOP
from model.msgtrk.rules import RULES
from model.msgtrk.smtpmon import judge_failure, judge_protocol
from spec.catalogue import require
from traces.schema import Event
from traces.verdict import MonitorResult, Violation

require("SR-031", "SR-059")


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
        a = start.attrs
        bounds = {}
        for item in a.get("boundaries", []):
            name, _, servers = item.partition("=")
            bounds[name] = frozenset(s for s in servers.split(",") if s)
        cover = {}
        for item in a.get("coverage", []):
            node, _, span = item.partition("=")
            lo, _, hi = span.partition("..")
            cover[node] = (int(lo), int(hi))
        return Config(
            bounds,
            bool(a.get("reject_on_shadow_failure")),
            bool(a.get("accept_rejection_variant")),
            int(a.get("shadow_resubmit_ms", 0)),
            cover,
        )

    def boundary_of(self, server: str) -> frozenset[str] | None:
        """The servers of `server`'s boundary (SR-006), or None when no configured boundary holds it."""
        for members in self.boundaries.values():
            if server in members:
                return members
        return None


@dataclass
class _Judge:
    trace: str
    cfg: Config
    violations: list[Violation] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    cross: list[tuple[str, Event, Event, str]] = field(default_factory=list)  # rule, before, after, entity

    def bad(self, rule: str, entity: str, evs: Sequence[Event], why: str) -> None:
        lines = ", ".join(where(e) for e in evs)
        self.violations.append(
            Violation(
                rule,
                RULES[rule].requirement,
                self.trace,
                entity,
                tuple(e.event_id for e in evs),
                f"{why} (log lines {lines})",
                MECHANISM,
            )
        )

    def covers(self, server: str, ts: int) -> bool:
        lo_hi = self.cfg.coverage.get(server)
        return lo_hi is not None and lo_hi[0] <= ts <= lo_hi[1]


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
            return MonitorResult.of(())
        if first.kind != IMPORT_KIND or first.mechanism != MECHANISM:
            v = Violation(
                "msgtrk-import-start-first",
                "TR-008",
                first.trace_id,
                ours[0].entity,
                (first.event_id, ours[0].event_id),
                f"the trace holds imported log rows but begins with {first.kind}, not {IMPORT_KIND}: "
                "its rule set cannot be decided",
                MECHANISM,
            )
            return MonitorResult.of((v,))
        judge = _Judge(first.trace_id, Config.of(first))
        by_entity: dict[str, list[Event]] = defaultdict(list)
        for e in ours[1:]:
            if "/" in e.entity and not e.entity.startswith(("row:", "smtp")):
                by_entity[e.entity].append(e)
        for entity in sorted(by_entity):
            _judge_entity(judge, entity, by_entity[entity])
        acked = judge_protocol(judge.bad, judge.notes, judge.cfg.reject, by_entity, ours[1:])
        _trace_notes(judge, first, by_entity, acked)
        _cross_server(judge, self.skew_ms)
        return MonitorResult.of(judge.violations, judge.notes)


class AuditFold:
    """The fold of the imported-log monitor: it keeps the trace's first event and its imported rows only
    (a simulated trace costs it nothing), and judges them together at the end."""

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


def _trace_notes(judge: _Judge, start: Event, by_entity: dict[str, list[Event]], acked: set[str]) -> None:
    a = start.attrs
    made = {k for k, evs in by_entity.items() if any(e.kind in ("HAREDIRECT", "HAREDIRECTFAIL") for e in evs)}
    shadowed = len(made - acked)
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


def _judge_entity(j: _Judge, entity: str, evs: list[Event]) -> None:
    primary = entity.split("/", 1)[0]
    prim = [e for e in evs if e.node == primary]
    hops = [e for e in prim if e.kind in NEXT_HOP]
    bound = j.cfg.boundary_of(primary) if j.cfg.boundaries else None
    if j.cfg.boundaries and bound is None and any(e.kind == "HAREDIRECT" for e in prim):
        j.notes.append(
            f"{entity}: primary {primary} is in no configured boundary: placement not judged "
            f"(log line {where(prim[0])})"
        )
    for h in (e for e in prim if e.kind == "HAREDIRECT"):
        _judge_redirect(j, entity, primary, h, evs, hops, bound)
    for f in (e for e in prim if e.kind == "HAREDIRECTFAIL"):
        judge_failure(j.bad, j.notes, (j.cfg.reject, j.cfg.variant), entity, f, prim)
    if bound is not None:
        for r in (e for e in evs if e.kind == "RESUBMIT" and e.node not in bound):
            j.bad(
                "msgtrk-resubmit-across-boundary",
                entity,
                [r],
                f"{r.node} resubmits the message of primary {primary} but is outside its boundary "
                f"({', '.join(sorted(bound))})",
            )
        for s in (e for e in hops if e.attrs.get("next_hop") and e.attrs["next_hop"] not in bound):
            for r in (
                e for e in prim if e.kind == "RESUBMIT" and e.attrs.get("source") == "SAFETYNET" and e.ts_ms > s.ts_ms
            ):
                j.bad(
                    "msgtrk-safetynet-after-boundary-exit",
                    entity,
                    [s, r],
                    f"{primary} resubmits from Safety Net after it sent the message across the boundary "
                    f"to {s.attrs['next_hop']}",
                )


def _judge_redirect(
    j: _Judge, entity: str, primary: str, h: Event, evs: list[Event], hops: list[Event], bound: frozenset[str] | None
) -> None:
    problem = h.attrs.get("pair_problem")
    shadow, iid = h.attrs.get("shadow"), h.attrs.get("shadow_internal_id")
    if problem or not shadow or not iid:
        j.notes.append(
            f"{entity}: HAREDIRECT at {where(h)} cannot be paired with the shadow's rows: "
            f"{problem or 'shadow or InternalId missing'}"
        )
        return
    if shadow == primary:
        j.bad("msgtrk-shadow-on-other-server", entity, [h], f"{primary} made its shadow on itself")
    elif bound is not None and shadow not in bound:
        j.bad(
            "msgtrk-shadow-in-boundary",
            entity,
            [h],
            f"{primary} made the shadow on {shadow}, outside its boundary ({', '.join(sorted(bound))})",
        )
    early = [s for s in hops if s.ts_ms < h.ts_ms]
    if early:
        j.bad(
            "msgtrk-shadow-before-next-hop",
            entity,
            [early[0], h],
            f"{primary} passed the message to its next hop ({early[0].kind}) "
            f"{h.ts_ms - early[0].ts_ms} ms before it recorded the shadow's acknowledgement (HAREDIRECT)",
        )
    rows = [e for e in evs if e.node == shadow and e.attrs.get("internal_id") == iid]
    received = [e for e in rows if e.kind == "HARECEIVE"]
    if not received:
        if j.covers(shadow, h.ts_ms):
            j.bad(
                "msgtrk-shadow-unconfirmed",
                entity,
                [h],
                f"{primary} recorded the shadow's acknowledgement from {shadow} (InternalId {iid}), but {shadow}'s "
                "log covers that time and has no HARECEIVE of it",
            )
        else:
            j.notes.append(
                f"{entity}: HAREDIRECT at {where(h)} names shadow {shadow} (InternalId {iid}), whose log "
                "was not imported or does not cover that time: the shadow side is not judged"
            )
    first_hop = hops[0] if hops else None
    for r in received[:1]:
        if first_hop is not None:
            j.cross.append(("msgtrk-shadow-before-next-hop", r, first_hop, entity))
    discards = [e for e in rows if e.kind == "HADISCARD"]
    for d in discards:
        if first_hop is not None:
            j.cross.append(("msgtrk-discard-after-next-hop", first_hop, d, entity))
        elif j.cfg.coverage.get(primary, (0, -1))[1] > d.ts_ms + 60_000:
            j.bad(
                "msgtrk-discard-after-next-hop",
                entity,
                [h, d],
                f"{shadow} discarded the shadow, but {primary}'s log, which runs on past that time, shows no "
                "next hop (SEND, SENDEXTERNAL or DELIVER) of the message",
            )
        else:
            j.notes.append(
                f"{entity}: HADISCARD at {where(d)} and no next hop in {primary}'s log, which ends "
                "too soon after it to tell"
            )
    for p in (e for e in rows if e.kind == "RESUBMIT" and e.attrs.get("source") == "REDUNDANCY"):
        gone = [d for d in discards if d.ts_ms < p.ts_ms]
        if gone:
            j.bad(
                "msgtrk-promotion-after-discard",
                entity,
                [gone[0], p],
                f"{shadow} promoted (RESUBMIT, source REDUNDANCY) a shadow it had already discarded",
            )
        elif received and p.ts_ms < received[0].ts_ms + j.cfg.span_ms:
            j.notes.append(
                f"{entity}: {shadow} promoted the shadow at {where(p)}, "
                f"{p.ts_ms - received[0].ts_ms} ms after receiving it, before ShadowResubmitTimeSpan "
                f"({j.cfg.span_ms} ms): conformant only if {primary} returned with a new transport "
                "database (SR-059), which the tracking log does not show (SR-I27)"
            )


def _cross_server(j: _Judge, skew_ms: int | None) -> None:
    """Cross-server orders through the skew check (`spec.claims.skew`): one joint system for the trace."""
    if not j.cross:
        return
    pairs = [c for c in j.cross if c[1].node != c[2].node]
    same = [c for c in j.cross if c[1].node == c[2].node]
    for rule, b, a, entity in same:
        if a.ts_ms < b.ts_ms:
            j.bad(rule, entity, [b, a], f"{a.kind} is recorded {b.ts_ms - a.ts_ms} ms before {b.kind} on one clock")
    if not pairs:
        return
    if skew_ms is None:
        reversed_ = sum(1 for _, b, a, _ in pairs if a.ts_ms < b.ts_ms)
        j.notes.append(
            f"{j.trace}: {len(pairs)} cross-server order(s) (shadow made before the next hop, discard "
            f"after it; {reversed_} recorded in reverse) not judged: give a clock-skew bound with --skew"
        )
        return
    from spec.claims.skew import classify, resolve  # z3: loaded only when a skew bound is given

    orderings, rows = _skew_rows(pairs)
    report = resolve(classify(rows, skew_ms, orderings), skew_ms)
    entity_of = {a.event_id: ent for _, _, a, ent in pairs}
    for inst in report.instances:
        entity = entity_of.get(inst.after_event, "")
        if inst.verdict in ("violation", "inconsistent"):
            rule = inst.rule if inst.verdict == "violation" else f"{inst.rule}.skew_inconsistent"
            evs = [
                e
                for _, b, a, _ in pairs
                for e in (b, a)
                if (b.event_id, a.event_id) == (inst.before_event, inst.after_event)
            ]
            lines = ", ".join(where(e) for e in evs[:2])
            j.violations.append(
                Violation(
                    rule,
                    inst.requirement,
                    j.trace,
                    entity,
                    tuple(x for x in (inst.before_event, inst.after_event) if x),
                    f"{inst.explanation} (log lines {lines})",
                    MECHANISM,
                )
            )
        elif inst.verdict == "ambiguous":
            j.notes.append(f"{entity}: {inst.explanation} (skew {skew_ms} ms)")


def _skew_rows(pairs: list[tuple[str, Event, Event, str]]) -> tuple[list[Any], list[tuple]]:
    from spec.claims.skew import Ordering  # z3: as in _cross_server

    orderings: dict[tuple[str, str, str], Any] = {}
    rows: list[tuple] = []
    for i, (rule, b, a, entity) in enumerate(pairs):
        key = (rule, b.kind, a.kind)  # an ordering judges only its own pairs: a discard after a DELIVER is
        if key not in orderings:  # not one after a SEND whose SEND is missing (the `before` attribute)
            where = (("rule", rule), ("before", b.kind))
            orderings[key] = Ordering(rule, RULES[rule].requirement, b.kind, a.kind, "pair", where=where)
        rows.append((b.event_id, b.node, b.ts_ms, b.kind, entity, {"pair": i, "rule": rule, "before": b.kind}))
        rows.append((a.event_id, a.node, a.ts_ms, a.kind, entity, {"pair": i, "rule": rule, "before": b.kind}))
    return list(orderings.values()), rows
