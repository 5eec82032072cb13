"""The imported-log monitor's judgement of one message's shadow (`model.msgtrk.monitor`): each HAREDIRECT the
primary records, paired with the shadow server's rows by InternalId (SR-028 on another server, SR-015 in the
boundary, SR-001 before the next hop on the primary's clock, SR-030 confirmed by HARECEIVE where the shadow's
log covers it), each discard (SR-052), each promotion (SR-062), and with a recorded boundary each RESUBMIT
(SR-025) and each next hop leaving the boundary (SR-033). Orders across two servers' clocks are left in
`Judge.cross` for the skew check (`model.msgtrk.orders`).

Seed 000 ("How shadow messages are created", "How shadow messages are maintained", "Message processing after an
outage", "Messages sent outside a transport high availability boundary"); interpretations SR-I26, SR-I27.
"""

from __future__ import annotations

from model.msgtrk import rules as R
from model.msgtrk.judging import Judge, where
from traces.schema import Event


def judge_boundary(
    j: Judge, entity: str, primary: str, evs: list[Event], prim: list[Event], hops: list[Event], bound: frozenset[str]
) -> None:
    """SR-025 (each RESUBMIT of the message judged for its server) and SR-033 (each next hop leaving the
    boundary judged against the primary's later Safety Net resubmissions)."""
    members = ", ".join(sorted(bound))
    for r in (e for e in evs if e.kind == "RESUBMIT"):
        j.tally.judge(R.RESUBMIT_ACROSS_BOUNDARY)
        if r.node not in bound:
            j.bad(
                R.RESUBMIT_ACROSS_BOUNDARY,
                entity,
                [r],
                f"{r.node} resubmits the message of primary {primary} but is outside its boundary ({members})",
                server=r.node,
                boundary=sorted(bound),
            )
    net = [e for e in prim if e.kind == "RESUBMIT" and e.attrs.get("source") == "SAFETYNET"]
    for s in (e for e in hops if e.attrs.get("next_hop") and e.attrs["next_hop"] not in bound):
        later = [r for r in net if r.ts_ms > s.ts_ms]
        j.tally.judge(R.SAFETYNET_AFTER_BOUNDARY_EXIT, max(1, len(later)))
        for r in later:
            j.bad(
                R.SAFETYNET_AFTER_BOUNDARY_EXIT,
                entity,
                [s, r],
                f"{primary} resubmits from Safety Net after it sent the message across the boundary "
                f"to {s.attrs['next_hop']}",
                next_hop=s.attrs["next_hop"],
                boundary=sorted(bound),
                exit_ms=s.ts_ms,
                resubmit_ms=r.ts_ms,
            )


def _unpaired(j: Judge, entity: str, h: Event, why: str) -> None:
    reason = "a HAREDIRECT that cannot be paired with the shadow's rows"
    for rule in (R.SHADOW_ON_OTHER_SERVER, R.SHADOW_IN_BOUNDARY, R.SHADOW_BEFORE_NEXT_HOP, R.SHADOW_UNCONFIRMED):
        j.tally.skip(rule, reason)
    j.notes.append(f"{entity}: HAREDIRECT at {where(h)} cannot be paired with the shadow's rows: {why}")


def judge_redirect(
    j: Judge, entity: str, primary: str, h: Event, evs: list[Event], hops: list[Event], bound: frozenset[str] | None
) -> None:
    problem = h.attrs.get("pair_problem")
    shadow, iid = h.attrs.get("shadow"), h.attrs.get("shadow_internal_id")
    if problem or not shadow or not iid:
        _unpaired(j, entity, h, problem or "shadow or InternalId missing")
        return
    j.tally.judge(R.SHADOW_ON_OTHER_SERVER)
    if bound is not None:
        j.tally.judge(R.SHADOW_IN_BOUNDARY)
    if shadow == primary:
        j.bad(R.SHADOW_ON_OTHER_SERVER, entity, [h], f"{primary} made its shadow on itself", shadow=shadow)
    elif bound is not None and shadow not in bound:
        j.bad(
            R.SHADOW_IN_BOUNDARY,
            entity,
            [h],
            f"{primary} made the shadow on {shadow}, outside its boundary ({', '.join(sorted(bound))})",
            shadow=shadow,
            boundary=sorted(bound),
        )
    j.tally.judge(R.SHADOW_BEFORE_NEXT_HOP)  # on the primary's clock: its next hops against its HAREDIRECT
    early = [s for s in hops if s.ts_ms < h.ts_ms]
    if early:
        j.bad(
            R.SHADOW_BEFORE_NEXT_HOP,
            entity,
            [early[0], h],
            f"{primary} passed the message to its next hop ({early[0].kind}) "
            f"{h.ts_ms - early[0].ts_ms} ms before it recorded the shadow's acknowledgement (HAREDIRECT)",
            next_hop_ms=early[0].ts_ms,
            shadow_ack_ms=h.ts_ms,
            gap_ms=h.ts_ms - early[0].ts_ms,
        )
    rows = [e for e in evs if e.node == shadow and e.attrs.get("internal_id") == iid]
    received = [e for e in rows if e.kind == "HARECEIVE"]
    _judge_confirmed(j, entity, primary, h, shadow, iid, received)
    first_hop = hops[0] if hops else None
    for r in received[:1]:
        if first_hop is not None:
            j.cross.append((R.SHADOW_BEFORE_NEXT_HOP, r, first_hop, entity))
    discards = [e for e in rows if e.kind == "HADISCARD"]
    for d in discards:
        if first_hop is not None:
            j.cross.append((R.DISCARD_AFTER_NEXT_HOP, first_hop, d, entity))
        elif j.cfg.coverage.get(primary, (0, -1))[1] > d.ts_ms + 60_000:
            j.tally.judge(R.DISCARD_AFTER_NEXT_HOP)
            j.bad(
                R.DISCARD_AFTER_NEXT_HOP,
                entity,
                [h, d],
                f"{shadow} discarded the shadow, but {primary}'s log, which runs on past that time, shows no "
                "next hop (SEND, SENDEXTERNAL or DELIVER) of the message",
                discard_ms=d.ts_ms,
                log_ends_ms=j.cfg.coverage[primary][1],
            )
        else:
            j.tally.skip(R.DISCARD_AFTER_NEXT_HOP, "the primary's log ends too soon after the discard")
            j.notes.append(
                f"{entity}: HADISCARD at {where(d)} and no next hop in {primary}'s log, which ends "
                "too soon after it to tell"
            )
    _judge_promotions(j, entity, primary, shadow, rows, received, discards)


def _judge_confirmed(
    j: Judge, entity: str, primary: str, h: Event, shadow: str, iid: str, received: list[Event]
) -> None:
    """SR-030: the shadow acknowledgement the primary records has its HARECEIVE where the shadow's log covers it."""
    if received:
        j.tally.judge(R.SHADOW_UNCONFIRMED)
    elif j.covers(shadow, h.ts_ms):
        j.tally.judge(R.SHADOW_UNCONFIRMED)
        j.bad(
            R.SHADOW_UNCONFIRMED,
            entity,
            [h],
            f"{primary} recorded the shadow's acknowledgement from {shadow} (InternalId {iid}), but {shadow}'s "
            "log covers that time and has no HARECEIVE of it",
            shadow=shadow,
            internal_id=iid,
            coverage=list(j.cfg.coverage[shadow]),
        )
    else:
        j.tally.skip(R.SHADOW_UNCONFIRMED, "the shadow's log was not imported or does not cover the time")
        j.notes.append(
            f"{entity}: HAREDIRECT at {where(h)} names shadow {shadow} (InternalId {iid}), whose log "
            "was not imported or does not cover that time: the shadow side is not judged"
        )


def _judge_promotions(
    j: Judge,
    entity: str,
    primary: str,
    shadow: str,
    rows: list[Event],
    received: list[Event],
    discards: list[Event],
) -> None:
    """SR-062: each promotion (RESUBMIT, source REDUNDANCY) judged against the shadow's earlier discards."""
    for p in (e for e in rows if e.kind == "RESUBMIT" and e.attrs.get("source") == "REDUNDANCY"):
        j.tally.judge(R.PROMOTION_AFTER_DISCARD)
        gone = [d for d in discards if d.ts_ms < p.ts_ms]
        if gone:
            j.bad(
                R.PROMOTION_AFTER_DISCARD,
                entity,
                [gone[0], p],
                f"{shadow} promoted (RESUBMIT, source REDUNDANCY) a shadow it had already discarded",
                discard_ms=gone[0].ts_ms,
                promotion_ms=p.ts_ms,
            )
        elif received and p.ts_ms < received[0].ts_ms + j.cfg.span_ms:
            j.notes.append(
                f"{entity}: {shadow} promoted the shadow at {where(p)}, "
                f"{p.ts_ms - received[0].ts_ms} ms after receiving it, before ShadowResubmitTimeSpan "
                f"({j.cfg.span_ms} ms): conformant only if {primary} returned with a new transport "
                "database (SR-059), which the tracking log does not show (SR-I27)"
            )
