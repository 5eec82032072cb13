"""Guards of the maintenance steps: processing, discard status, promotion, Safety Net, expiry.

Seed 000, "How shadow messages are maintained" (SR-050..SR-067), "Messages sent outside a transport high
availability boundary" and the Exchange 2010 section (SR-032, SR-033, SR-038), "Message processing after an
outage" (SR-058, SR-059, SR-068..SR-076). The last contact between a shadow and its primary, the shadows a
server holds, the primary's database generation and whether two servers can reach each other are derived
from earlier events and the recorded faults; every duration comes from the recorded configuration. The
heartbeats (XQUERYDISCARD: SR-053..SR-056, SR-078) are `heartbeats.py`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: the world as a C struct (`maintenance.pxd`, session 26)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.sr import events as ev
from model.sr import rules as R
from model.sr.decisions import release_ready
from model.sr.inputs import fork_kind
from model.sr.state import CROSSES_BOUNDARY, MAILBOX_KINDS
from model.sr.world import LOST, QUEUED, SAFETYNET, SHADOW, Copy, Inst, World, grown
from traces.schema import Event
from traces.verdict import Rule, Violation

NEVER = -(2**62)


@cython.locals(w=World)
def _owe(w: World, iv: Inst, forks: set[str], now: int) -> None:
    """The primary queues discard events for the shadow of a message accepted with redundancy (SR-050, SR-051)."""
    if iv.redundant and iv.shadow:
        owed = w.owed.setdefault((iv.primary, iv.shadow), {})
        for f in sorted(forks):
            owed.setdefault((iv.msg, iv.inst, f), now)


@cython.locals(w=World)
def _process(w: World, iv: Inst, e: Event) -> list[Violation]:
    fork, out, m, tally = e.attrs["fork"], [], w.msgs[iv.msg], w.tally
    copy = iv.copies[e.node]
    out += _overdue(w, iv, e)
    if copy.state == QUEUED:
        via = "promoted" if copy.promoted else "primary"
        tally.judge(R.PRIMARY_COPY_TRANSITION)
        if fork not in copy.left:
            out.append(R.PRIMARY_COPY_TRANSITION.violated((e,), f"{e.node} processed fork {fork}, which its queue "
                              "no longer (or never) held", observed=fork, expected=sorted(copy.left)))  # fmt: skip
        else:
            copy.left.discard(fork)  # a set: a fork in it came from ACCEPT or PROMOTE
        if not copy.promoted:
            iv.processed = grown(iv.processed, fork)
            _owe(w, iv, {fork}, e.ts_ms)
    else:  # in Safety Net: only a fork it was asked to resubmit
        via = "safetynet"
        tally.judge(R.SAFETYNET_TRANSITION)
        if fork not in copy.resubmitted:
            out.append(R.SAFETYNET_TRANSITION.violated((e,), f"{e.node} sent fork {fork} out of Safety Net without "
                              "a resubmission request", observed=fork,
                              expected=sorted(copy.resubmitted)))  # fmt: skip
        else:
            copy.resubmitted.discard(fork)  # a set: a fork in it came from RESUBMIT
    if "via" in e.attrs:
        tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
        if e.attrs["via"] != via:
            out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} says the delivery was via "
                              f"{e.attrs['via']}, but "
                              f"{e.node} holds the message as {via}", attribute="via", observed=e.attrs["via"],
                              expected=via))  # fmt: skip
    seen = fork in m.delivered
    if seen:  # a second delivery of the fork: an instance of SR-076
        tally.judge(R.DUPLICATES_DOCUMENTED)
        if not m.licences:
            out.append(R.DUPLICATES_DOCUMENTED.violated((e,), f"{e.node} made fork {fork} reach its destination "
                              "twice with no "
                              "sender redelivery, promotion or Safety Net resubmission to explain it",
                              observed=fork, expected=["redelivery", "promotion", "safetynet",
                                                       "auto-discard"]))  # fmt: skip
    if e.kind == ev.DELIVER and seen and fork_kind(e, fork) in MAILBOX_KINDS:
        tally.judge(R.DUPLICATE_HIDDEN_FROM_MAILBOX)
        out.append(R.DUPLICATE_HIDDEN_FROM_MAILBOX.violated((e,), f"{e.node} delivered fork {fork} to mailbox users a "
                          "second time instead of being caught by duplicate detection", observed=e.kind,
                          expected=ev.DUPLICATEDELIVER))  # fmt: skip
    if e.kind == ev.DUPLICATEDELIVER:
        tally.judge(R.DUPLICATE_HIDDEN_FROM_MAILBOX)
        if not seen:
            out.append(R.DUPLICATE_HIDDEN_FROM_MAILBOX.violated((e,), f"{e.node} dropped fork {fork} as a duplicate "
                              "but "
                              "was never delivered before", observed=fork, expected=sorted(m.delivered)))  # fmt: skip
    m.delivered = grown(m.delivered, fork)
    return out


@cython.locals(w=World)
def late(w: World, node: str, due: int, now: int) -> bool:
    """After its due time, unless done at the moment the server came back from an outage that spanned it."""
    boot = w.boot.get(node)
    return now > due and not (boot is not None and boot >= due and now == boot)


def queue_due(iv: Inst, copy: Copy, expiration_ms: int) -> int:
    """When a queued copy's forks must have expired (SR-067, SR-I21): MessageExpirationTimeout after the queue
    took them, counted for a promoted shadow from when the shadow was made, but never before the copy entered the
    queue: a copy promoted past that time may still expire at the moment of its promotion. Every judgement of
    SR-067 (a FAIL, a use of the copy, a quiesced SNAPSHOT, the trace's last event) reads this one due time."""
    since = iv.shadow_ms if copy.promoted else copy.since_ms
    return max(copy.since_ms, since + expiration_ms)


@cython.locals(w=World)
def _overdue(w: World, iv: Inst, e: Event) -> list[Violation]:
    """Upper bounds seen while the run goes on: a copy used after it should have expired (SR-065..SR-067)."""
    copy, cfg, tally = iv.copies[e.node], w.cfg, w.tally
    if copy.state == QUEUED:
        tally.judge(R.QUEUE_EXPIRY)
        age = e.ts_ms - (iv.shadow_ms if copy.promoted else copy.since_ms)
        if e.ts_ms > queue_due(iv, copy, cfg.expiration_ms):
            return [R.QUEUE_EXPIRY.violated((e,), f"{e.node} used its queued copy {age} ms after the queue took "
                           f"it, after MessageExpirationTimeout ({cfg.expiration_ms} ms) had expired it",
                           observed_ms=age, bound_ms=cfg.expiration_ms, bound="most",
                           parameter="SR-P17")]  # fmt: skip
    elif copy.state == SAFETYNET:
        tally.judge(R.SAFETYNET_HOLD)
        if e.ts_ms - copy.since_ms > cfg.safety_net_hold_ms:
            return [R.SAFETYNET_HOLD.violated((e,), f"{e.node} used its Safety Net copy {e.ts_ms - copy.since_ms} "
                           f"ms after it entered, after SafetyNetHoldTime ({cfg.safety_net_hold_ms} ms)",
                           observed_ms=e.ts_ms - copy.since_ms, bound_ms=cfg.safety_net_hold_ms, bound="most",
                           parameter="SR-P16")]  # fmt: skip
    elif copy.state == SHADOW:
        tally.judge(R.SHADOW_EXPIRY)
        if e.ts_ms - iv.shadow_ms > cfg.safety_net_hold_ms + cfg.expiration_ms:
            return [R.SHADOW_EXPIRY.violated((e,), f"{e.node} used an unacknowledged shadow "
                           f"{e.ts_ms - iv.shadow_ms} ms after it was made, after SafetyNetHoldTime + "
                           "MessageExpirationTimeout", observed_ms=e.ts_ms - iv.shadow_ms,
                           bound_ms=cfg.safety_net_hold_ms + cfg.expiration_ms, bound="most",
                           parameter=["SR-P16", "SR-P17"])]  # fmt: skip
    return []


@cython.locals(w=World)
def _fail(w: World, iv: Inst, e: Event) -> list[Violation]:
    """Queued forks expired (SR-067): no earlier than MessageExpirationTimeout after RECEIVE."""
    copy, out, tally = iv.copies[e.node], [], w.tally
    left, exp = set(copy.left), w.cfg.expiration_ms
    due = queue_due(iv, copy, exp)
    if late(w, e.node, due, e.ts_ms):
        out.append(R.QUEUE_EXPIRY.violated((e,), f"{e.node} let forks {sorted(left)} expire {e.ts_ms - due} ms "
                          "after MessageExpirationTimeout had run out", observed_ms=e.ts_ms, due_ms=due, bound="most",
                          parameter="SR-P17"))  # fmt: skip
    if set(e.attrs.get("forks", left)) != left:
        out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} names in FAIL forks {e.attrs['forks']}, the "
                          "queue "
                          f"still held {sorted(left)}", attribute="forks", observed=e.attrs["forks"],
                          expected=sorted(left)))  # fmt: skip
    if e.ts_ms - iv.received_ms < exp:
        out.append(R.QUEUE_EXPIRY.violated((e,), f"{e.node} expired forks {sorted(left)} {e.ts_ms - iv.received_ms} "
                          f"ms after the message arrived, before MessageExpirationTimeout ({exp} ms)",
                          observed_ms=e.ts_ms - iv.received_ms, bound_ms=exp, bound="least",
                          parameter="SR-P17"))  # fmt: skip
    if "expiration_ms" in e.attrs:
        tally.judge(R.CONFIG_AS_RECORDED)
        if e.attrs["expiration_ms"] != exp:
            out.append(R.CONFIG_AS_RECORDED.violated((e,), f"{e.node} records in FAIL expiration_ms "
                              f"{e.attrs['expiration_ms']}, "
                              f"the configuration says {exp}", attribute="expiration_ms",
                              observed=e.attrs["expiration_ms"], expected=exp, parameter="SR-P17"))  # fmt: skip
    if not copy.promoted:
        iv.processed |= left
        _owe(w, iv, left, e.ts_ms)
    iv.expired |= left
    copy.left = set()
    return out


@cython.locals(w=World)
def _notify(w: World, iv: Inst, e: Event) -> list[Violation]:
    fork, out, s, p, tally = e.attrs["fork"], _overdue(w, iv, e), e.node, iv.primary, w.tally
    if "primary" in e.attrs:
        tally.judge(R.SHADOW_RECORD_AS_DERIVED)
        if e.attrs["primary"] != p:
            out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} says the notification names primary "
                              f"{e.attrs['primary']}, the shadow was made for {p}", attribute="primary",
                              observed=e.attrs["primary"], expected=p))  # fmt: skip
    if (s, e.ts_ms) in w.unread_queries and w.last_query.get((s, p)) != e.ts_ms:
        w.tally.skip(R.DISCARD_BY_QUERY, "the XQUERYDISCARD it answers is unreadable")  # issue 30: not a breach
    elif w.last_ok.get((s, p)) != e.ts_ms or w.last_query.get((s, p)) != e.ts_ms:
        out.append(R.DISCARD_BY_QUERY.violated((e,), f"{s} got a discard notification without a successful "
                          f"XQUERYDISCARD to {p} at that moment", observed_ms=e.ts_ms,
                          last_query_ms=w.last_query.get((s, p)), last_ok_ms=w.last_ok.get((s, p))))  # fmt: skip
    owed, handed = w.owed.get((p, s), {}), w.handed.get((p, s), {})
    if fork not in iv.processed:
        out.append(R.NO_PREMATURE_DISCARD.violated((e,), f"{iv.primary} told {e.node} fork {fork} is complete before "
                          "processing it", observed=fork, expected=sorted(iv.processed)))  # fmt: skip
    else:
        tally.judge(R.DISCARD_QUEUE_TRANSITION)
        if (iv.msg, iv.inst, fork) not in handed and (iv.msg, iv.inst, fork) not in owed:
            out.append(R.DISCARD_QUEUE_TRANSITION.violated((e,), f"{p} had no queued discard event for fork {fork} "
                              f"for {s} (already sent, deleted, or lost with its database)", observed=fork,
                              primary=p, shadow=s))  # fmt: skip
    if handed.pop((iv.msg, iv.inst, fork), None) is None:
        owed.pop((iv.msg, iv.inst, fork), None)
    iv.notified = grown(iv.notified, fork)
    return out


@cython.locals(w=World)
def _hadiscard(w: World, iv: Inst, e: Event) -> list[Violation]:
    out = []
    if not release_ready(iv.forks, frozenset(iv.notified)):
        missing = sorted(set(iv.forks) - iv.notified)
        out.append(R.ALL_FORKS_BEFORE_RELEASE.violated((e,), f"{e.node} released the shadow while forks {missing} had "
                          "no discard notification", observed=sorted(iv.notified), expected=list(iv.forks),
                          missing=missing))  # fmt: skip
    w.unhold((e.node, iv.primary), (iv.msg, iv.inst))
    return out


@cython.locals(w=World)
def _safetynet(w: World, iv: Inst, e: Event) -> list[Violation]:
    copy, out, tally = iv.copies[e.node], [], w.tally
    role = "primary" if copy.state == QUEUED else "shadow"
    if copy.state == QUEUED:
        tally.judge(R.PRIMARY_KEEPS_COPY)
        if copy.left:
            out.append(R.PRIMARY_KEEPS_COPY.violated((e,), f"{e.node} moved the message into Safety Net while forks "
                              f"{sorted(copy.left)} were still to be processed", observed=sorted(copy.left),
                              expected=[]))  # fmt: skip
    if "role" in e.attrs:
        tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
        if e.attrs["role"] != role:
            out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} records its Safety Net entry as role "
                              f"{e.attrs['role']}, the copy on {e.node} was the {role}'s", attribute="role",
                              observed=e.attrs["role"], expected=role))  # fmt: skip
    return out


@cython.locals(w=World)
def _safetynet_expire(w: World, iv: Inst, e: Event) -> list[Violation]:
    held, hold = e.ts_ms - iv.copies[e.node].since_ms, w.cfg.safety_net_hold_ms
    if held < hold or late(w, e.node, iv.copies[e.node].since_ms + hold, e.ts_ms):
        return [R.SAFETYNET_HOLD.violated((e,), f"{e.node} removed the message from Safety Net after {held} ms, "
                       f"not at SafetyNetHoldTime ({hold} ms)", observed_ms=held, bound_ms=hold, bound="exact",
                       parameter="SR-P16")]  # fmt: skip
    return []


@cython.locals(w=World)
def _resubmit(w: World, iv: Inst, e: Event) -> list[Violation]:
    fork, out = e.attrs["fork"], _overdue(w, iv, e)
    kind = fork_kind(e, fork)
    if kind == "hub2010":
        out.append(R.NO_SAFETYNET_RESUBMIT_TO_2010.violated((e,), f"{e.node}'s Safety Net resubmitted fork {fork} to "
                          "an "
                          "Exchange 2010 Hub", observed=fork, fork_kind=kind))  # fmt: skip
    elif kind in CROSSES_BOUNDARY:
        out.append(R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY.violated((e,), f"{e.node}'s Safety Net resubmitted fork "
                          f"{fork}, "
                          "which had already crossed the boundary", observed=fork, fork_kind=kind))  # fmt: skip
    if fork not in iv.forks:
        out.append(R.SAFETYNET_TRANSITION.violated((e,), f"{e.node}'s Safety Net resubmitted fork {fork}, not a fork "
                                                   "of it",
                                                   observed=fork, expected=list(iv.forks)))  # fmt: skip
    copy = iv.copies[e.node]
    if not copy.resubmitted:
        copy.resubmitted = set()
    copy.resubmitted.add(fork)
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "safetynet")
    return out


@cython.locals(w=World)
def _promote(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, s, p, tally = e.attrs, _overdue(w, iv, e), e.node, iv.primary, w.tally
    pair, span = (s, p), w.cfg.resubmit_ms
    since = e.ts_ms - w.contact.get(pair, iv.shadow_ms)
    reasons = set()
    if not w.reach(s, p) and since >= span:
        reasons.add("resubmit_timespan")
    if w.observed_epoch.get(pair, iv.shadow_epoch) != iv.shadow_epoch:
        reasons.add("database_id")
    claimed = a.get("reason", "")
    rule = R.PROMOTION_DB_CHANGE if claimed == "database_id" else R.PROMOTION_TIMING
    tally.judge(rule)
    if not reasons:
        out.append(rule.violated((e,), f"{s} took ownership {since} ms after last reaching {p} (ShadowResubmitTimeSpan "
                          f"{span} ms, {p} {'reachable' if w.reach(s, p) else 'unreachable'}) without having seen "
                          f"a new transport database of {p}", observed_ms=since, bound_ms=span, bound="least",
                          parameter="SR-P14", reachable=w.reach(s, p), claimed=claimed))  # fmt: skip
    elif claimed:
        tally.judge(R.SHADOW_RECORD_AS_DERIVED)
        if claimed not in reasons:
            out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} gives its promotion the reason {claimed}, the "
                              f"events seen support only {sorted(reasons)}", attribute="reason", observed=claimed,
                              expected=sorted(reasons)))  # fmt: skip
    if "last_contact_ms" in a:
        tally.judge(R.SHADOW_RECORD_AS_DERIVED)
        if a["last_contact_ms"] != w.contact.get(pair):
            out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} records in its promotion last contact "
                              f"{a['last_contact_ms']}, the last session seen was at {w.contact.get(pair)}",
                              attribute="last_contact_ms", observed=a["last_contact_ms"],
                              expected=w.contact.get(pair)))  # fmt: skip
    if "resubmit_ms" in a:
        tally.judge(R.CONFIG_AS_RECORDED)
        if a["resubmit_ms"] != span:
            out.append(R.CONFIG_AS_RECORDED.violated((e,), f"{e.node} records in PROMOTE resubmit_ms "
                              f"{a['resubmit_ms']}, the "
                              f"configuration says {span}", attribute="resubmit_ms", observed=a["resubmit_ms"],
                              expected=span, parameter="SR-P14"))  # fmt: skip
    known = w.db_names.get((p, iv.shadow_epoch))
    if a.get("original_db") is not None and known is not None:
        tally.judge(R.DATABASE_ID_AS_RECORDED)
        if str(a["original_db"]) != known:
            out.append(R.DATABASE_ID_AS_RECORDED.violated((e,), f"{s} records {p}'s original database ID as "
                              f"{a['original_db']}, it was {known}", attribute="original_db",
                              observed=a["original_db"], expected=known))  # fmt: skip
    why = w.db_consistent(p, a.get("observed_db"))
    if why:
        out.append(R.DATABASE_ID_AS_RECORDED.violated((e,), why, attribute="observed_db", server=p,
                                                      observed=a.get("observed_db")))  # fmt: skip
    w.unhold(pair, (iv.msg, iv.inst))
    copy = iv.copies[s]
    copy.promoted, copy.left = True, set(iv.forks) - iv.notified
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "promotion")
    return out


@cython.locals(w=World)
def _shadow_expire(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, cfg, tally = e.attrs, [], w.cfg, w.tally
    age, life = e.ts_ms - iv.shadow_ms, cfg.safety_net_hold_ms + cfg.expiration_ms
    if age < life or late(w, e.node, iv.shadow_ms + life, e.ts_ms):
        out.append(R.SHADOW_EXPIRY.violated((e,), f"{e.node} expired an unacknowledged shadow after {age} ms, not at "
                          f"SafetyNetHoldTime + MessageExpirationTimeout ({life} ms)", observed_ms=age, bound_ms=life,
                          bound="exact", parameter=["SR-P16", "SR-P17"]))  # fmt: skip
    if "hold_ms" in a or "expiration_ms" in a:
        tally.judge(R.CONFIG_AS_RECORDED)
        if a.get("hold_ms", cfg.safety_net_hold_ms) != cfg.safety_net_hold_ms or (
            a.get("expiration_ms", cfg.expiration_ms) != cfg.expiration_ms
        ):
            out.append(R.CONFIG_AS_RECORDED.violated((e,), f"{e.node} records in SHADOW_EXPIRE hold "
                              f"{a.get('hold_ms')} and "
                              f"expiration {a.get('expiration_ms')}, not the configured values",
                              observed={"hold_ms": a.get("hold_ms"), "expiration_ms": a.get("expiration_ms")},
                              expected={"hold_ms": cfg.safety_net_hold_ms, "expiration_ms": cfg.expiration_ms},
                              parameter=["SR-P16", "SR-P17"]))  # fmt: skip
    w.unhold((e.node, iv.primary), (iv.msg, iv.inst))
    return out


@cython.locals(w=World)
def _lost(w: World, iv: Inst, e: Event) -> list[Violation]:
    copy, out = iv.copies[e.node], []
    if copy.state == LOST:  # already lost with the recorded RESTART on new storage
        return out
    role = "primary" if copy.state == QUEUED else "shadow"
    if copy.state == SHADOW:
        w.unhold((e.node, iv.primary), (iv.msg, iv.inst))
    if e.node == iv.primary:
        iv.primary_lost = True
    else:
        iv.shadow_lost = True
    if "role" in e.attrs:
        w.tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
        if e.attrs["role"] != role:
            out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"LOST says role {e.attrs['role']}, {e.node} held "
                              f"the message as {copy.state}", attribute="role", observed=e.attrs["role"],
                              expected=role))  # fmt: skip
    return out


@cython.locals(w=World)
def _discard_expire(w: World, iv: Inst, e: Event) -> list[Violation]:
    s, p, out = e.attrs.get("shadow", ""), iv.primary, []
    owed = w.owed.get((p, s), {})
    mine = sorted((k for k in owed if k[:2] == (iv.msg, iv.inst)), key=lambda k: (owed[k], k))
    if e.node != p or not mine:
        out.append(R.DISCARD_QUEUE_TRANSITION.violated((e,), f"{e.node} deleted a discard event for {s} that "
                          f"{p} had not queued (or no longer held)", primary=p, shadow=s, observed=e.node))  # fmt: skip
    queued = owed.pop(mine[0]) if mine and e.node == p else e.ts_ms
    quiet, interval = e.ts_ms - max(w.last_ok.get((s, p), NEVER), queued), w.cfg.auto_discard_ms
    if quiet < interval:
        out.append(R.AUTO_DISCARD_INTERVAL.violated((e,), f"{p} deleted discard events for {s} which had queried "
                          f"it {quiet} ms before, within the auto-discard interval ({interval} ms)", observed_ms=quiet,
                          bound_ms=interval, bound="least", parameter="SR-P15"))  # fmt: skip
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "auto-discard")
    return out


# the rules every event a guard judges is an instance of, whatever its attributes (`creation.EVERY`)
EVERY: dict[str, tuple[Rule, ...]] = {
    # a FAIL compares two bounds of SR-067 (not later than due, not earlier than RECEIVE + the timeout) and the forks
    ev.FAIL: (R.QUEUE_EXPIRY, R.QUEUE_EXPIRY, R.PRIMARY_RECORD_AS_DERIVED),
    ev.DISCARD_NOTIFY: (R.DISCARD_BY_QUERY, R.NO_PREMATURE_DISCARD),
    ev.HADISCARD: (R.ALL_FORKS_BEFORE_RELEASE,),
    ev.SAFETYNET_EXPIRE: (R.SAFETYNET_HOLD,),
    ev.RESUBMIT: (R.NO_SAFETYNET_RESUBMIT_TO_2010, R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY, R.SAFETYNET_TRANSITION),
    ev.SHADOW_EXPIRE: (R.SHADOW_EXPIRY,),
    ev.DISCARD_EXPIRE: (R.DISCARD_QUEUE_TRANSITION, R.AUTO_DISCARD_INTERVAL),
}

GUARDS = {
    ev.DELIVER: _process,
    ev.DUPLICATEDELIVER: _process,
    ev.SEND: _process,
    ev.FAIL: _fail,
    ev.DISCARD_NOTIFY: _notify,
    ev.HADISCARD: _hadiscard,
    ev.SAFETYNET: _safetynet,
    ev.SAFETYNET_EXPIRE: _safetynet_expire,
    ev.RESUBMIT: _resubmit,
    ev.PROMOTE: _promote,
    ev.SHADOW_EXPIRE: _shadow_expire,
    ev.LOST: _lost,
    ev.DISCARD_EXPIRE: _discard_expire,
}
