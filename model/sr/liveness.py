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

from collections.abc import Set

from model.sr import events as ev
from model.sr.rules import Breach, breach
from model.sr.world import EXPIRED, GONE, LOST, QUEUED, RELEASED, SAFETYNET, SHADOW, Inst, World
from traces.schema import Event

NEVER = -(2**62)


def flush_due(w: World, now: int, final: bool = False) -> list[Breach]:
    """Failed queries whose moment is over: their primary's shadows must all have been promoted (SR-058)."""
    out = []
    while w.due and (final or w.due[0][0] < now):
        _, s, p, q = w.due.popleft()
        left = w.held_count((s, p))
        if left:
            b = breach("promotion-overdue", (q,), f"{s} had not reached {p} for ShadowResubmitTimeSpan "
                       f"({w.cfg.resubmit_ms} ms) and its query failed, yet {left} shadows for {p} stayed "
                       "unpromoted")  # fmt: skip
            out.append(Breach(b.rule, b.event_ids, b.explanation, q.entity))
    return out


def end_of_run(w: World, e: Event) -> list[Breach]:
    if not e.attrs.get("quiesced"):
        return []
    out = flush_due(w, e.ts_ms, final=True)
    if not w.end_checked:
        w.end_checked = True
        out += _heartbeats(w, e)
    m = w.msgs.get(e.entity)
    if m is None:
        return out
    cfg = w.cfg
    for iv in m.insts.values():
        for node, copy in sorted(iv.copies.items()):
            age = e.ts_ms - copy.since_ms
            if copy.state == SHADOW and e.ts_ms - iv.shadow_ms > cfg.safety_net_hold_ms + cfg.expiration_ms:
                out.append(breach("shadow-expiry", (e,), f"the unacknowledged shadow on {node} is still held "
                                  f"{e.ts_ms - iv.shadow_ms} ms after it was made, beyond SafetyNetHoldTime + "
                                  "MessageExpirationTimeout"))  # fmt: skip
            if copy.state == SAFETYNET and age > cfg.safety_net_hold_ms:
                out.append(breach("safetynet-hold", (e,), f"{node} still holds the message in Safety Net {age} ms "
                                  f"after it entered, beyond SafetyNetHoldTime"))  # fmt: skip
            since = iv.shadow_ms if copy.promoted else copy.since_ms
            if copy.state == QUEUED and copy.left and e.ts_ms - since > cfg.expiration_ms:
                out.append(breach("queue-expiry", (e,), f"forks {sorted(copy.left)} are still queued on {node} "
                                  f"{e.ts_ms - since} ms after its queue took them, past the expiry"))  # fmt: skip
        out += _liveness(w, iv, m.delivered, m.licences, e)
    return out


def _liveness(w: World, iv: Inst, delivered: Set[str], licences: Set[str], e: Event) -> list[Breach]:
    """No loss (SR-075) and release of fully processed shadows (SR-057) at a quiesced end of run."""
    return [breach(rule, (e,), why) for rule, why in liveness_findings(iv, delivered, licences)]


def liveness_findings(iv: Inst, delivered: Set[str], licences: Set[str]) -> list[tuple[str, str]]:
    """What `_liveness` would report for one instance, as (rule, explanation): it reads the instance and its
    message only, never the time, so the fold can tell in advance that a settled message's SNAPSHOT is clean."""
    if iv.outcome != "accepted":
        return []
    out = []
    shadow_state = iv.state(iv.shadow) if iv.shadow else "none"
    missing = sorted(set(iv.forks) - delivered - iv.expired)
    shadow_gone = shadow_state in ("none", LOST, EXPIRED, RELEASED, SAFETYNET, GONE)
    excused = iv.primary_lost and (not iv.redundant or shadow_gone)
    if missing and not excused:
        out.append(("no-loss", f"instance {iv.inst} was accepted but forks {missing} never reached "
                    "their destination although at most one of its copies was destroyed"))  # fmt: skip
    if (
        shadow_state == SHADOW
        and set(iv.forks) <= iv.processed
        and not iv.primary_lost
        and ("auto-discard" not in licences)
    ):
        out.append(("shadow-released", f"instance {iv.inst} was fully processed but its shadow on "
                    f"{iv.shadow} was never released"))  # fmt: skip
    return out


def _heartbeats(w: World, e: Event) -> list[Breach]:
    """Every running shadow server queried each primary it still holds shadows for within the last
    ShadowHeartbeatFrequency (SR-055)."""
    out = []
    for (s, p), held in sorted(w.held.items()):
        if not held or not w.up.get(s, True):
            continue
        base = max(w.last_query.get((s, p), NEVER), w.held_since.get((s, p), NEVER), w.boot.get(s, NEVER))
        if e.ts_ms - base > w.cfg.heartbeat_ms:
            b = breach("heartbeat-frequency", (e,), f"at the end of the run {s} had not queried {p} for "
                       f"{e.ts_ms - base} ms while holding shadows for it")  # fmt: skip
            out.append(Breach(b.rule, b.event_ids, b.explanation, ev.heartbeat_entity(s, p)))
    return out
