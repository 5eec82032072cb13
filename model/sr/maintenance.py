"""Guards of the maintenance steps: processing, discard status, heartbeats, promotion, Safety Net, expiry.

Seed 000, "How shadow messages are maintained" (SR-050..SR-067), "Messages sent outside a transport high
availability boundary" and the Exchange 2010 section (SR-032, SR-033, SR-038), "Message processing after an
outage" (SR-058, SR-059, SR-068..SR-076). The last contact between a shadow and its primary, the shadows a
server holds, the primary's database generation and whether two servers can reach each other are derived
from earlier events and the recorded faults; every duration comes from the recorded configuration.
"""

from __future__ import annotations

from model.sr import events as ev
from model.sr.decisions import release_ready
from model.sr.rules import Breach, breach
from model.sr.state import CROSSES_BOUNDARY, MAILBOX_KINDS, fork_kind
from model.sr.world import LOST, QUEUED, SAFETYNET, SHADOW, Inst, World, grown
from traces.schema import Event

NEVER = -(2**62)


def _owe(w: World, iv: Inst, forks: set[str], now: int) -> None:
    """The primary queues discard events for the shadow of a message accepted with redundancy (SR-050, SR-051)."""
    if iv.redundant and iv.shadow:
        owed = w.owed.setdefault((iv.primary, iv.shadow), {})
        for f in sorted(forks):
            owed.setdefault((iv.msg, iv.inst, f), now)


def _process(w: World, iv: Inst, e: Event) -> list[Breach]:
    fork, out, m = e.attrs["fork"], [], w.msgs[iv.msg]
    copy = iv.copies[e.node]
    out += _overdue(w, iv, e)
    if copy.state == QUEUED:
        via = "promoted" if copy.promoted else "primary"
        if fork not in copy.left:
            out.append(breach("primary-copy-transition", (e,), f"{e.node} processed fork {fork}, which its queue "
                              "no longer (or never) held"))  # fmt: skip
        else:
            copy.left.discard(fork)  # a set: a fork in it came from ACCEPT or PROMOTE
        if not copy.promoted:
            iv.processed = grown(iv.processed, fork)
            _owe(w, iv, {fork}, e.ts_ms)
    else:  # in Safety Net: only a fork it was asked to resubmit
        via = "safetynet"
        if fork not in copy.resubmitted:
            out.append(breach("safetynet-transition", (e,), f"{e.node} sent fork {fork} out of Safety Net without "
                              "a resubmission request"))  # fmt: skip
        else:
            copy.resubmitted.discard(fork)  # a set: a fork in it came from RESUBMIT
    if "via" in e.attrs and e.attrs["via"] != via:
        out.append(breach("primary-record-as-derived", (e,), f"the delivery says via {e.attrs['via']}, but "
                          f"{e.node} holds the message as {via}"))  # fmt: skip
    seen = fork in m.delivered
    if seen and not m.licences:
        out.append(breach("duplicates-documented", (e,), f"fork {fork} reached its destination twice with no "
                          "sender redelivery, promotion or Safety Net resubmission to explain it"))  # fmt: skip
    if e.kind == ev.DELIVER and seen and fork_kind(fork) in MAILBOX_KINDS:
        out.append(breach("duplicate-hidden-from-mailbox", (e,), f"fork {fork} was delivered to mailbox users a "
                          "second time instead of being caught by duplicate detection"))  # fmt: skip
    if e.kind == ev.DUPLICATEDELIVER and not seen:
        out.append(breach("duplicate-hidden-from-mailbox", (e,), f"fork {fork} was dropped as a duplicate but was "
                          "never delivered before"))  # fmt: skip
    m.delivered = grown(m.delivered, fork)
    return out


def late(w: World, node: str, due: int, now: int) -> bool:
    """After its due time, unless done at the moment the server came back from an outage that spanned it."""
    boot = w.boot.get(node)
    return now > due and not (boot is not None and boot >= due and now == boot)


def _overdue(w: World, iv: Inst, e: Event) -> list[Breach]:
    """Upper bounds seen while the run goes on: a copy used after it should have expired (SR-065..SR-067)."""
    copy, cfg = iv.copies[e.node], w.cfg
    if copy.state == QUEUED:
        age = e.ts_ms - (iv.shadow_ms if copy.promoted else copy.since_ms)
        if age > cfg.expiration_ms:
            return [breach("queue-expiry", (e,), f"{e.node} used its queued copy {age} ms after the queue took "
                           f"it, after MessageExpirationTimeout ({cfg.expiration_ms} ms) had expired it")]  # fmt: skip
    elif copy.state == SAFETYNET and e.ts_ms - copy.since_ms > cfg.safety_net_hold_ms:
        return [breach("safetynet-hold", (e,), f"{e.node} used its Safety Net copy {e.ts_ms - copy.since_ms} ms "
                       f"after it entered, after SafetyNetHoldTime ({cfg.safety_net_hold_ms} ms)")]  # fmt: skip
    elif copy.state == SHADOW and e.ts_ms - iv.shadow_ms > cfg.safety_net_hold_ms + cfg.expiration_ms:
        return [breach("shadow-expiry", (e,), f"{e.node} used an unacknowledged shadow {e.ts_ms - iv.shadow_ms} ms "
                       "after it was made, after SafetyNetHoldTime + MessageExpirationTimeout")]  # fmt: skip
    return []


def _fail(w: World, iv: Inst, e: Event) -> list[Breach]:
    """Queued forks expired (SR-067): no earlier than MessageExpirationTimeout after RECEIVE."""
    copy, out = iv.copies[e.node], []
    left, exp = set(copy.left), w.cfg.expiration_ms
    due = max(copy.since_ms, (iv.shadow_ms if copy.promoted else copy.since_ms) + exp)  # promoted: SR-I21
    if late(w, e.node, due, e.ts_ms):
        out.append(breach("queue-expiry", (e,), f"forks {sorted(left)} expired {e.ts_ms - due} ms after "
                          "MessageExpirationTimeout had run out"))  # fmt: skip
    if set(e.attrs.get("forks", left)) != left:
        out.append(breach("primary-record-as-derived", (e,), f"FAIL names forks {e.attrs['forks']}, the queue "
                          f"still held {sorted(left)}"))  # fmt: skip
    if e.ts_ms - iv.received_ms < exp:
        out.append(breach("queue-expiry", (e,), f"forks {sorted(left)} expired {e.ts_ms - iv.received_ms} ms "
                          f"after the message arrived, before MessageExpirationTimeout ({exp} ms)"))  # fmt: skip
    if e.attrs.get("expiration_ms", exp) != exp:
        out.append(breach("config-as-recorded", (e,), f"FAIL records expiration_ms {e.attrs['expiration_ms']}, "
                          f"the configuration says {exp}"))  # fmt: skip
    if not copy.promoted:
        iv.processed |= left
        _owe(w, iv, left, e.ts_ms)
    iv.expired |= left
    copy.left = set()
    return out


def _notify(w: World, iv: Inst, e: Event) -> list[Breach]:
    fork, out, s, p = e.attrs["fork"], _overdue(w, iv, e), e.node, iv.primary
    if e.attrs.get("primary", p) != p:
        out.append(breach("shadow-record-as-derived", (e,), f"the notification names primary "
                          f"{e.attrs['primary']}, the shadow was made for {p}"))  # fmt: skip
    if w.last_ok.get((s, p)) != e.ts_ms or w.last_query.get((s, p)) != e.ts_ms:
        out.append(breach("discard-by-query", (e,), f"{s} got a discard notification without a successful "
                          f"XQUERYDISCARD to {p} at that moment"))  # fmt: skip
    owed = w.owed.get((p, s), {})
    if fork not in iv.processed:
        out.append(breach("no-premature-discard", (e,), f"the shadow was told fork {fork} is complete before the "
                          "primary processed it"))  # fmt: skip
    elif (iv.msg, iv.inst, fork) not in owed:
        out.append(breach("discard-queue-transition", (e,), f"{p} had no queued discard event for fork {fork} "
                          f"for {s} (already sent, deleted, or lost with its database)"))  # fmt: skip
    owed.pop((iv.msg, iv.inst, fork), None)
    iv.notified = grown(iv.notified, fork)
    return out


def _hadiscard(w: World, iv: Inst, e: Event) -> list[Breach]:
    out = []
    if not release_ready(iv.forks, frozenset(iv.notified)):
        missing = sorted(set(iv.forks) - iv.notified)
        out.append(breach("all-forks-before-release", (e,), f"the shadow was released while forks {missing} had "
                          "no discard notification"))  # fmt: skip
    w.unhold((e.node, iv.primary), (iv.msg, iv.inst))
    return out


def _safetynet(w: World, iv: Inst, e: Event) -> list[Breach]:
    copy, out = iv.copies[e.node], []
    role = "primary" if copy.state == QUEUED else "shadow"
    if copy.state == QUEUED and copy.left:
        out.append(breach("primary-keeps-copy", (e,), f"{e.node} moved the message into Safety Net while forks "
                          f"{sorted(copy.left)} were still to be processed"))  # fmt: skip
    if e.attrs.get("role", role) != role:
        out.append(breach("primary-record-as-derived", (e,), f"Safety Net entry recorded as role "
                          f"{e.attrs['role']}, the copy on {e.node} was the {role}'s"))  # fmt: skip
    return out


def _safetynet_expire(w: World, iv: Inst, e: Event) -> list[Breach]:
    held, hold = e.ts_ms - iv.copies[e.node].since_ms, w.cfg.safety_net_hold_ms
    if held < hold or late(w, e.node, iv.copies[e.node].since_ms + hold, e.ts_ms):
        return [breach("safetynet-hold", (e,), f"{e.node} removed the message from Safety Net after {held} ms, "
                       f"not at SafetyNetHoldTime ({hold} ms)")]  # fmt: skip
    return []


def _resubmit(w: World, iv: Inst, e: Event) -> list[Breach]:
    fork, out = e.attrs["fork"], _overdue(w, iv, e)
    kind = fork_kind(fork)
    if kind == "hub2010":
        out.append(breach("no-safetynet-resubmit-to-2010", (e,), f"Safety Net resubmitted fork {fork} to an "
                          "Exchange 2010 Hub"))  # fmt: skip
    elif kind in CROSSES_BOUNDARY:
        out.append(breach("no-safetynet-resubmit-across-boundary", (e,), f"Safety Net resubmitted fork {fork}, "
                          "which had already crossed the boundary"))  # fmt: skip
    if fork not in iv.forks:
        out.append(breach("safetynet-transition", (e,), f"Safety Net resubmitted fork {fork}, not a fork of it"))
    copy = iv.copies[e.node]
    if not copy.resubmitted:
        copy.resubmitted = set()
    copy.resubmitted.add(fork)
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "safetynet")
    return out


def _promote(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out, s, p = e.attrs, _overdue(w, iv, e), e.node, iv.primary
    pair, span = (s, p), w.cfg.resubmit_ms
    since = e.ts_ms - w.contact.get(pair, iv.shadow_ms)
    reasons = set()
    if not w.reach(s, p) and since >= span:
        reasons.add("resubmit_timespan")
    if w.observed_epoch.get(pair, iv.shadow_epoch) != iv.shadow_epoch:
        reasons.add("database_id")
    claimed = a.get("reason", "")
    if not reasons:
        rule = "promotion-db-change" if claimed == "database_id" else "promotion-timing"
        out.append(breach(rule, (e,), f"{s} took ownership {since} ms after last reaching {p} (ShadowResubmitTimeSpan "
                          f"{span} ms, {p} {'reachable' if w.reach(s, p) else 'unreachable'}) without having seen "
                          f"a new transport database of {p}"))  # fmt: skip
    elif claimed and claimed not in reasons:
        out.append(breach("shadow-record-as-derived", (e,), f"the promotion gives reason {claimed}, the events "
                          f"seen support only {sorted(reasons)}"))  # fmt: skip
    if "last_contact_ms" in a and a["last_contact_ms"] != w.contact.get(pair):
        out.append(breach("shadow-record-as-derived", (e,), f"the promotion records last contact "
                          f"{a['last_contact_ms']}, the last session seen was at {w.contact.get(pair)}"))  # fmt: skip
    if a.get("resubmit_ms", span) != span:
        out.append(breach("config-as-recorded", (e,), f"PROMOTE records resubmit_ms {a['resubmit_ms']}, the "
                          f"configuration says {span}"))  # fmt: skip
    known = w.db_names.get((p, iv.shadow_epoch))
    if a.get("original_db") is not None and known is not None and str(a["original_db"]) != known:
        out.append(breach("database-id-as-recorded", (e,), f"the shadow records {p}'s original database ID as "
                          f"{a['original_db']}, it was {known}"))  # fmt: skip
    why = w.db_consistent(p, a.get("observed_db"))
    if why:
        out.append(breach("database-id-as-recorded", (e,), why))
    w.unhold(pair, (iv.msg, iv.inst))
    copy = iv.copies[s]
    copy.promoted, copy.left = True, set(iv.forks) - iv.notified
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "promotion")
    return out


def _shadow_expire(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out, cfg = e.attrs, [], w.cfg
    age, life = e.ts_ms - iv.shadow_ms, cfg.safety_net_hold_ms + cfg.expiration_ms
    if age < life or late(w, e.node, iv.shadow_ms + life, e.ts_ms):
        out.append(breach("shadow-expiry", (e,), f"an unacknowledged shadow expired after {age} ms, not at "
                          f"SafetyNetHoldTime + MessageExpirationTimeout ({life} ms)"))  # fmt: skip
    if a.get("hold_ms", cfg.safety_net_hold_ms) != cfg.safety_net_hold_ms or (
        a.get("expiration_ms", cfg.expiration_ms) != cfg.expiration_ms
    ):
        out.append(breach("config-as-recorded", (e,), f"SHADOW_EXPIRE records hold {a.get('hold_ms')} and "
                          f"expiration {a.get('expiration_ms')}, not the configured values"))  # fmt: skip
    w.unhold((e.node, iv.primary), (iv.msg, iv.inst))
    return out


def _lost(w: World, iv: Inst, e: Event) -> list[Breach]:
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
    if e.attrs.get("role", role) != role:
        out.append(breach("primary-record-as-derived", (e,), f"LOST says role {e.attrs['role']}, {e.node} held "
                          f"the message as {copy.state}"))  # fmt: skip
    return out


def _discard_expire(w: World, iv: Inst, e: Event) -> list[Breach]:
    s, p, out = e.attrs.get("shadow", ""), iv.primary, []
    owed = w.owed.get((p, s), {})
    mine = sorted((k for k in owed if k[:2] == (iv.msg, iv.inst)), key=lambda k: (owed[k], k))
    if e.node != p or not mine:
        out.append(breach("discard-queue-transition", (e,), f"{e.node} deleted a discard event for {s} that "
                          f"{p} had not queued (or no longer held)"))  # fmt: skip
    queued = owed.pop(mine[0]) if mine and e.node == p else e.ts_ms
    quiet, interval = e.ts_ms - max(w.last_ok.get((s, p), NEVER), queued), w.cfg.auto_discard_ms
    if quiet < interval:
        out.append(breach("auto-discard-interval", (e,), f"{p} deleted discard events for {s} which had queried "
                          f"it {quiet} ms before, within the auto-discard interval ({interval} ms)"))  # fmt: skip
    m = w.msgs[iv.msg]
    m.licences = grown(m.licences, "auto-discard")
    return out


def _heartbeat_not_early(w: World, e: Event, pair: tuple[str, str], hb: int) -> list[Breach]:
    """SR-078, SR-I30: a heartbeat is early only when every allowed schedule forbids it: it comes sooner than
    ShadowHeartbeatFrequency after the pair's previous heartbeat in this run of the shadow server (a periodic
    timer; the smaller of the values in force at the two, should it have changed) and sooner than that after the
    pair's last successful session or the first shadow held (the seed's words: a session is opened when none was
    for the interval, so a failed one may be retried at once)."""
    last = w.last_heartbeat.get(pair)
    w.last_heartbeat[pair] = (e.ts_ms, hb)
    boot = w.boot.get(e.node, NEVER)
    if last is None or last[0] < boot:
        return []
    gap, least = e.ts_ms - last[0], min(last[1], hb)
    quiet = e.ts_ms - max(w.contact.get(pair, NEVER), w.held_since.get(pair, NEVER), boot)
    if gap >= least or quiet >= hb:
        return []
    return [breach("heartbeat-not-early", (e,), f"{e.node} sent a heartbeat to {pair[1]} {gap} ms after its previous "
                   f"one and {quiet} ms after its last session with it, both sooner than ShadowHeartbeatFrequency "
                   f"({least} ms)")]  # fmt: skip


def query(w: World, e: Event) -> list[Breach]:
    """One XQUERYDISCARD of a shadow server to a primary (entity `hb:<shadow>><primary>`; SR-053..SR-056)."""
    a, out, s = e.attrs, [], e.node
    p, ok = a["primary"], bool(a["ok"])
    pair, hb = (s, p), w.cfg.heartbeat_ms
    if ok and not w.reach(s, p):
        out.append(breach("shadow-record-as-derived", (e,), f"{s} records a successful session with {p} although "
                          "the recorded faults leave one of them down or cut off"))  # fmt: skip
    unknown = [x for x in (s, p) if w.topo is not None and x not in w.topo]
    if unknown:
        out.append(breach("topology-as-recorded", (e,), f"{' and '.join(unknown)} not a server of the recorded "
                          "topology"))  # fmt: skip
    held = w.held_count(pair)
    if "held" in a and a["held"] != held:
        out.append(breach("shadow-record-as-derived", (e,), f"{s} says it holds {a['held']} shadows for {p}; the "
                          f"events seen leave {held}"))  # fmt: skip
    if held:
        base = max(w.last_query.get(pair, NEVER), w.held_since.get(pair, NEVER), w.boot.get(s, NEVER))
        if e.ts_ms - base > hb:
            out.append(breach("heartbeat-frequency", (e,), f"{s} waited {e.ts_ms - base} ms before querying {p} "
                              f"while holding shadows for it, over ShadowHeartbeatFrequency ({hb} ms)"))  # fmt: skip
    if a.get("reason") == "heartbeat":
        out += _heartbeat_not_early(w, e, pair, hb)
    if a.get("heartbeat_ms", hb) != hb:
        out.append(breach("config-as-recorded", (e,), f"XQUERYDISCARD records heartbeat_ms {a['heartbeat_ms']}, "
                          f"the configuration says {hb}"))  # fmt: skip
    w.last_query[pair] = e.ts_ms
    if ok:
        w.contact[pair] = w.last_ok[pair] = e.ts_ms
        w.observed_epoch[pair] = w.epoch.get(p, 0)
        why = w.db_consistent(p, a.get("db"))
        if why:
            out.append(breach("database-id-as-recorded", (e,), why))
    elif held and e.ts_ms - w.contact.get(pair, NEVER) >= w.cfg.resubmit_ms:
        w.due.append((e.ts_ms, s, p, e))
    return out


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
