"""End-of-run rules and the deferred checks: what must eventually happen, and what must not stay too long.

Seed 000, "How shadow messages are maintained" (SR-055, SR-057, SR-058, SR-065..SR-067) and "Message
processing after an outage" (SR-075). Liveness is judged at the harness's SNAPSHOT record of a quiesced run
(every server up, the network healed); the fairness assumed is `properties.FAIRNESS`. At that point the
upper bounds of the parameters apply too: nothing is still in Safety Net after SafetyNetHoldTime, no
unacknowledged shadow is older than SafetyNetHoldTime + MessageExpirationTimeout, no queued fork older than
MessageExpirationTimeout, and every running shadow server queried its primaries within
ShadowHeartbeatFrequency. A failed query after ShadowResubmitTimeSpan without contact must leave no shadow
unpromoted once its moment has passed (`flush_due`).
"""

from __future__ import annotations

import heapq
from collections.abc import Set
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: the world as a C struct (`liveness.pxd`, session 26)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.sr import events as ev
from model.sr import rules as R
from model.sr.maintenance import late, queue_due
from model.sr.world import EXPIRED, GONE, LOST, QUEUED, RECEIVING, RELEASED, SAFETYNET, SHADOW, Inst, World
from traces.schema import Event
from traces.verdict import Rule, Tally, Violation

NEVER = -(2**62)


@cython.locals(w=World)
def stale(w: World, pair: tuple[str, str], below: int | None = None) -> int:
    """The shadows `pair[0]` holds for `pair[1]` that were made under an earlier transport database of the primary
    than `below` (default: its current one) (SR-059: their primary's queue is gone, they must be promoted). An
    obligation judged later passes the database its session showed: shadows made under that one are not owed by
    it, even if the primary has had yet another new database since (a later session that reads it owes them)."""
    msgs, n = w.msgs, 0
    upto = w.epoch.get(pair[1], 0) if below is None else below
    for msg, inst in w.held.get(pair, ()):
        m = msgs.get(msg)
        iv = m.insts.get(inst) if m is not None else None
        if iv is not None and iv.shadow_epoch < upto:
            n += 1
    return n


@cython.locals(w=World)
def flush_db_due(w: World, now: int, final: bool = False) -> list[Violation]:
    """SR-059, SR-I07 (issue 30, family 1): a shadow server that read a primary's new database ID in a successful
    session promotes the shadows made under the old one at once; the bound allowed is ShadowHeartbeatFrequency
    after that session (SR-071: a new database delays messages at most one heartbeat). Judged once virtual time
    is past the bound: at a later event of the trace (late, or never) or at its end. Not judged when the shadow
    server crashed or restarted before the bound (a restarted server reads the ID again), nor at an end of the
    trace that comes before the bound while the shadows are still held (not late yet: the reason is counted)."""
    out, heap, tally = [], w.db_due, w.tally
    while heap and (final or heap[0][0] < now):
        due, _, s, p, q, shown = heapq.heappop(heap)
        w.db_pending.discard((s, p))
        if not w.up.get(s, True) or w.boot.get(s, NEVER) > q.ts_ms:
            tally.skip(R.PROMOTION_DB_CHANGE, "the shadow server went down before the promotion was due")
            continue
        left = stale(w, (s, p), shown)
        if left and due >= now:  # the end of the trace, before the bound
            tally.skip(R.PROMOTION_DB_CHANGE, "the trace ends before the promotion after a new database ID is due")
            continue
        tally.judge(R.PROMOTION_DB_CHANGE)
        if left:  # reported once per new database of the primary, not at every later heartbeat that reads it
            w.db_late.add((s, p, shown))
            out.append(R.PROMOTION_DB_CHANGE.violated((q,), f"{s} read {p}'s new transport database ID at "
                       f"{q.ts_ms} but {left} shadows for {p} made under the old one were still unpromoted "
                       f"ShadowHeartbeatFrequency ({due - q.ts_ms} ms) later", observed=left, expected=0,
                       due_ms=due, bound_ms=due - q.ts_ms, bound="most", parameter="SR-P13"))  # fmt: skip
    return out


@cython.locals(w=World)
def flush_due(w: World, now: int, final: bool = False) -> list[Violation]:
    """Failed queries whose moment is over: the shadows their server held for the primary at the query must all
    have been promoted (SR-058; a shadow made later in that same instant is not owed yet); and the
    promotions after a new database ID that are due (SR-059, `flush_db_due`)."""
    out = flush_db_due(w, now, final) if w.db_due else []
    while w.due and (final or w.due[0][0] < now):
        _, s, p, q, then = w.due.popleft()
        left = len(then & w.held.get((s, p), set()))  # of the shadows held at the query, those still held
        w.tally.judge(R.PROMOTION_OVERDUE)
        if left:
            out.append(R.PROMOTION_OVERDUE.violated((q,), f"{s} had not reached {p} for ShadowResubmitTimeSpan "
                       f"({w.cfg.resubmit_ms} ms) and its query failed, yet {left} shadows for {p} stayed "
                       "unpromoted", bound_ms=w.cfg.resubmit_ms, parameter="SR-P14", observed=left,
                       expected=0))  # fmt: skip
    return out


@cython.locals(w=World)
def end_of_run(w: World, e: Event) -> list[Violation]:
    """A message's SNAPSHOT: at a quiesced end of run, the upper bounds of SR-065..SR-067 and the liveness
    rules SR-075 and SR-057 for each of its instances (and SR-055 once for the run)."""
    if not e.attrs.get("quiesced"):
        skip_liveness(w.tally, "the end-of-run SNAPSHOT is not of a quiesced run")
        return []
    out = flush_due(w, e.ts_ms, final=True)
    w.ended.add(e.entity)
    if not w.end_checked:
        w.end_checked = True
        out += _heartbeats(w, e)
    m = w.msgs.get(e.entity)
    if m is None:
        return out
    cfg, tally = w.cfg, w.tally
    for iv in m.insts.values():
        for node, copy in sorted(iv.copies.items()):
            age = e.ts_ms - copy.since_ms
            if copy.state == SHADOW:
                tally.judge(R.SHADOW_EXPIRY)
                life = cfg.safety_net_hold_ms + cfg.expiration_ms
                if e.ts_ms - iv.shadow_ms > life:
                    out.append(R.SHADOW_EXPIRY.violated((e,), f"the unacknowledged shadow on {node} is still held "
                                      f"{e.ts_ms - iv.shadow_ms} ms after it was made, beyond SafetyNetHoldTime + "
                                      "MessageExpirationTimeout", observed_ms=e.ts_ms - iv.shadow_ms, bound_ms=life,
                                      bound="most", parameter=["SR-P16", "SR-P17"]))  # fmt: skip
            if copy.state == SAFETYNET:
                tally.judge(R.SAFETYNET_HOLD)
                if age > cfg.safety_net_hold_ms:
                    out.append(R.SAFETYNET_HOLD.violated((e,), f"{node} still holds the message in Safety Net {age} "
                                      f"ms after it entered, beyond SafetyNetHoldTime", observed_ms=age,
                                      bound_ms=cfg.safety_net_hold_ms, bound="most",
                                      parameter="SR-P16"))  # fmt: skip
            since = iv.shadow_ms if copy.promoted else copy.since_ms
            if copy.state == QUEUED and copy.left:
                tally.judge(R.QUEUE_EXPIRY)
                if e.ts_ms > queue_due(iv, copy, cfg.expiration_ms):
                    out.append(R.QUEUE_EXPIRY.violated((e,), f"forks {sorted(copy.left)} are still queued on {node} "
                                      f"{e.ts_ms - since} ms after its queue took them, past the expiry",
                                      observed_ms=e.ts_ms - since, bound_ms=cfg.expiration_ms, bound="most",
                                      parameter="SR-P17"))  # fmt: skip
        out += _liveness(w, iv, m.delivered, m.licences, e)
    return out


@cython.locals(w=World)
def at_end(w: World, e: Event) -> list[Violation]:
    """The deadlines the trace's last event `e` shows passed, for what no quiesced SNAPSHOT
    judged (a trace without SNAPSHOT, or cut before it): a bound is missed when the awaited event is missing and
    virtual time is past it, not only when the event comes late. On a server that is up at the end (one that is
    down does what is due when it comes back, SR-I25): an unacknowledged shadow past SafetyNetHoldTime +
    MessageExpirationTimeout (SR-066), a copy in Safety Net past SafetyNetHoldTime (SR-065), forks still queued past
    MessageExpirationTimeout (SR-067), a sender's session neither answered nor timed out ConnectionTimeout after
    RECEIVE (SR-039, SR-I22), and a shadow server that has not queried a primary it holds shadows for within
    ShadowHeartbeatFrequency (SR-055)."""
    out, cfg, tally, now = [], w.cfg, w.tally, e.ts_ms
    for name, m in sorted(w.msgs.items()):
        if name in w.ended:
            continue
        for iv in m.insts.values():
            for node, copy in sorted(iv.copies.items()):
                if not w.up.get(node, True):
                    continue
                rule, due, what = None, 0, ""
                if copy.state == SHADOW:
                    rule, due = R.SHADOW_EXPIRY, iv.shadow_ms + cfg.safety_net_hold_ms + cfg.expiration_ms
                    what = "the unacknowledged shadow was not expired"
                elif copy.state == SAFETYNET:
                    rule, due, what = (
                        R.SAFETYNET_HOLD,
                        copy.since_ms + cfg.safety_net_hold_ms,
                        "Safety Net still held it",
                    )
                elif copy.state == QUEUED and copy.left:
                    rule, due, what = (
                        R.QUEUE_EXPIRY,
                        queue_due(iv, copy, cfg.expiration_ms),
                        f"forks {sorted(copy.left)} were still queued",
                    )
                elif copy.state == RECEIVING and iv.inbound_open and not iv.outcome:
                    rule, due = R.SESSION_TIMEOUT, iv.received_ms + cfg.inbound_max_ms()
                    what = "the sender's session was neither answered nor timed out"
                if rule is None:
                    continue
                tally.judge(rule)
                if late(w, node, due, now):
                    out.append(rule.violated((e,), f"{what} on {node} at the end of the trace, {now - due} ms past "
                               f"its due time", entity=name, observed_ms=now, due_ms=due, bound="most"))  # fmt: skip
    if not w.end_checked:
        out += _heartbeats(w, e)
    return out


def skip_liveness(tally: Tally, reason: str, n: int = 1) -> None:
    """The liveness rules (SR-075, SR-057) met `n` messages the trace does not let them judge."""
    tally.skip(R.NO_LOSS, reason, n)
    tally.skip(R.SHADOW_RELEASED, reason, n)


@cython.locals(w=World)
def _liveness(w: World, iv: Inst, delivered: Set[str], licences: Set[str], e: Event) -> list[Violation]:
    """No loss (SR-075) and release of fully processed shadows (SR-057) at a quiesced end of run."""
    judged = liveness_judged(iv)
    for rule in judged:
        w.tally.judge(rule)
    return [rule.violated((e,), why, **data) for rule, why, data in liveness_findings(iv, delivered, licences)]


def liveness_judged(iv: Inst) -> tuple[Rule, ...]:
    """The liveness rules an instance is an instance of: no loss for an accepted message (SR-075), shadow
    released for an accepted message whose shadow was made (SR-057). A refused or aborted one is neither."""
    if iv.outcome != "accepted":
        return ()
    return _BOTH if iv.shadow else _NO_LOSS


def liveness_findings(iv: Inst, delivered: Set[str], licences: Set[str]) -> list[tuple[Rule, str, dict]]:
    """What `_liveness` would report for one instance, as (rule, explanation, data): it reads the instance and its
    message only, never the time, so the fold can tell in advance that a settled message's SNAPSHOT is clean."""
    if iv.outcome != "accepted":
        return []
    out = []
    shadow_state = iv.state(iv.shadow) if iv.shadow else "none"
    missing = sorted(set(iv.forks) - delivered - iv.expired)
    shadow_gone = shadow_state in ("none", LOST, EXPIRED, RELEASED, SAFETYNET, GONE)
    excused = iv.primary_lost and (not iv.redundant or shadow_gone)
    if missing and not excused:
        out.append((R.NO_LOSS, f"instance {iv.inst} was accepted but forks {missing} never reached "
                    "their destination although at most one of its copies was destroyed",
                    {"observed": missing, "expected": [], "forks": list(iv.forks), "primary_lost": iv.primary_lost,
                     "shadow_lost": iv.shadow_lost}))  # fmt: skip
    if (
        shadow_state == SHADOW
        and set(iv.forks) <= iv.processed
        and not iv.primary_lost
        and ("auto-discard" not in licences)
    ):
        out.append((R.SHADOW_RELEASED, f"instance {iv.inst} was fully processed but its shadow on "
                    f"{iv.shadow} was never released", {"observed": shadow_state, "expected": RELEASED,
                    "shadow": iv.shadow}))  # fmt: skip
    return out


_NO_LOSS: tuple[Rule, ...] = (R.NO_LOSS,)
_BOTH: tuple[Rule, ...] = (R.NO_LOSS, R.SHADOW_RELEASED)


@cython.locals(w=World)
def _heartbeats(w: World, e: Event) -> list[Violation]:
    """Every running shadow server queried each primary it still holds shadows for within the last
    ShadowHeartbeatFrequency (SR-055)."""
    out = []
    for (s, p), held in sorted(w.held.items()):
        if not held or not w.up.get(s, True):
            continue
        w.tally.judge(R.HEARTBEAT_FREQUENCY)
        base = max(w.last_query.get((s, p), NEVER), w.held_since.get((s, p), NEVER), w.boot.get(s, NEVER))
        if e.ts_ms - base > w.cfg.heartbeat_ms:
            out.append(R.HEARTBEAT_FREQUENCY.violated((e,), f"at the end of the run {s} had not queried {p} for "
                       f"{e.ts_ms - base} ms while holding shadows for it", entity=ev.heartbeat_entity(s, p),
                       observed_ms=e.ts_ms - base, bound_ms=w.cfg.heartbeat_ms, bound="most",
                       parameter="SR-P13"))  # fmt: skip
    return out
