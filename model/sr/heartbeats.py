"""The heartbeats of shadow redundancy: a shadow server's XQUERYDISCARD to each primary it holds shadows for.

Seed 000, "How shadow messages are maintained" (SR-053..SR-056: discard status by query, heartbeat frequency)
and the heartbeat schedule of SR-078 / SR-I30; a failed query after ShadowResubmitTimeSpan without contact is
queued for the deferred promotion check (SR-058, `liveness.flush_due`). The entity of a heartbeat is
`hb:<shadow>><primary>`; the last contact, the shadows held and reachability are derived from earlier events
and the recorded faults (`world.World`), every interval from the recorded configuration.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`heartbeats.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.sr import rules as R
from model.sr.liveness import stale
from model.sr.maintenance import NEVER
from model.sr.partial import HELD_UNSEEN
from model.sr.world import SHADOW, World
from traces.event import Event
from traces.verdict import Violation


@cython.locals(w=World, e=Event)
def _heartbeat_not_early(w: World, e: Event, pair: tuple[str, str], hb: int) -> list[Violation]:
    """SR-078, SR-I30: a heartbeat is early only when every allowed schedule forbids it: it comes sooner than
    ShadowHeartbeatFrequency after the pair's previous heartbeat in this run of the shadow server (a periodic
    timer; the smaller of the values in force at the two, should it have changed) and sooner than that after the
    pair's last successful session or the first shadow held (the seed's words: a session is opened when none was
    for the interval, so a failed one may be retried at once)."""
    last = w.last_heartbeat.get(pair)
    w.last_heartbeat[pair] = (e.ts_ms, hb)
    boot = w.boot.get(e.node, NEVER)
    if last is None or last[0] < boot:
        return []  # the first heartbeat of this run of the shadow server: nothing to be early after
    w.tally.judge(R.HEARTBEAT_NOT_EARLY)
    gap, least = e.ts_ms - last[0], min(last[1], hb)
    quiet = e.ts_ms - max(w.contact.get(pair, NEVER), w.held_since.get(pair, NEVER), boot)
    if gap >= least or quiet >= hb:
        return []
    return [R.HEARTBEAT_NOT_EARLY.violated((e,), f"{e.node} sent a heartbeat to {pair[1]} {gap} ms after its "
                   f"previous one and {quiet} ms after its last session with it, both sooner than "
                   f"ShadowHeartbeatFrequency ({least} ms)", observed_ms=gap, quiet_ms=quiet, bound_ms=least,
                   bound="least", parameter="SR-P13")]  # fmt: skip


@cython.locals(w=World, e=Event)
def query(w: World, e: Event) -> list[Violation]:
    """One XQUERYDISCARD of a shadow server to a primary (entity `hb:<shadow>><primary>`; SR-053..SR-056)."""
    a, out, s, tally = e.attrs, [], e.node, w.tally
    p, ok = a["primary"], bool(a["ok"])
    pair, hb = (s, p), w.cfg.heartbeat_ms
    if ok:
        tally.judge(R.SHADOW_RECORD_AS_DERIVED)
        if not w.reach(s, p):
            out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} records a successful session with {p} "
                              "although the recorded faults leave one of them down or cut off", attribute="ok",
                              observed=a["ok"], expected=False))  # fmt: skip
    if w.topo is not None:
        tally.judge(R.TOPOLOGY_AS_RECORDED)
        unknown = [x for x in (s, p) if x not in w.topo]
        if unknown:
            out.append(R.TOPOLOGY_AS_RECORDED.violated((e,), f"{' and '.join(unknown)} not a server of the "
                              "recorded topology", observed=unknown, expected=sorted(w.topo)))  # fmt: skip
    else:
        tally.skip(R.TOPOLOGY_AS_RECORDED, "no recorded topology (SR_CONFIG topology)")
    held = w.held_count(pair)
    if "held" in a and isinstance(a["held"], int) and a["held"] > held:
        tally.skip(R.SHADOW_RECORD_AS_DERIVED, HELD_UNSEEN)  # TR-I01: shadows whose beginning the trace lacks
        if pair not in w.held_unseen:
            w.held_unseen.add(pair)
            w.notes.append(
                f"{e.event_id}: {s} says it holds {a['held']} shadows for {p}, the trace shows {held} "
                f"made: {HELD_UNSEEN} (partial, not judged)"
            )
    elif "held" in a:
        tally.judge(R.SHADOW_RECORD_AS_DERIVED)
        if a["held"] != held:
            out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} says it holds {a['held']} shadows for {p}; "
                              f"the events seen leave {held}", attribute="held", observed=a["held"],
                              expected=held))  # fmt: skip
    if held:
        tally.judge(R.HEARTBEAT_FREQUENCY)
        base = max(w.last_query.get(pair, NEVER), w.held_since.get(pair, NEVER), w.boot.get(s, NEVER))
        if e.ts_ms - base > hb:
            out.append(R.HEARTBEAT_FREQUENCY.violated((e,), f"{s} waited {e.ts_ms - base} ms before querying {p} "
                              f"while holding shadows for it, over ShadowHeartbeatFrequency ({hb} ms)",
                              observed_ms=e.ts_ms - base, bound_ms=hb, bound="most",
                              parameter="SR-P13"))  # fmt: skip
    if a.get("reason") == "heartbeat":
        out += _heartbeat_not_early(w, e, pair, hb)
    if "heartbeat_ms" in a:
        tally.judge(R.CONFIG_AS_RECORDED)
        if a["heartbeat_ms"] != hb:
            out.append(R.CONFIG_AS_RECORDED.violated((e,), f"XQUERYDISCARD records heartbeat_ms {a['heartbeat_ms']}, "
                              f"the configuration says {hb}", attribute="heartbeat_ms", observed=a["heartbeat_ms"],
                              expected=hb, parameter="SR-P13"))  # fmt: skip
    w.last_query[pair] = e.ts_ms
    if ok:
        w.contact[pair] = w.last_ok[pair] = e.ts_ms
        hand_over(w, p, s)
        w.observed_epoch[pair] = w.epoch.get(p, 0)
        why = w.db_consistent(p, a.get("db"))
        if why:
            out.append(R.DATABASE_ID_AS_RECORDED.violated((e,), why, attribute="db", server=p, observed=a.get("db")))
        epoch = w.epoch.get(p, 0)
        if held and pair not in w.db_pending and (s, p, epoch) not in w.db_late and stale(w, pair):
            w.db_pending.add(pair)  # SR-059, SR-I07: promotion due within ShadowHeartbeatFrequency (`liveness`)
            heapq.heappush(w.db_due, (e.ts_ms + hb, e.seq, s, p, e, epoch))  # the database the session showed
    elif held and e.ts_ms - w.contact.get(pair, NEVER) >= w.cfg.resubmit_ms:
        w.due.append((e.ts_ms, s, p, e, frozenset(w.held.get(pair, ()))))  # what it held at the query (SR-058)
    return out


@cython.locals(w=World)
def hand_over(w: World, p: str, s: str) -> None:
    """A successful XQUERYDISCARD of `s` to `p`: the discard events `p` queued for `s` go with the answer (SR-053,
    SR-011: the primary no longer holds them, so it cannot delete them later, SR-064). The shadow server records a
    notification for each shadow it still holds; one handed over earlier and not yet recorded stays acceptable
    while its shadow is held (a notification recorded at a later query), the others are dropped (issue 33)."""
    before = w.handed.get((p, s), {})
    keep = {k: at for k, at in before.items() if _held(w, s, k)}
    keep.update(w.owed.pop((p, s), {}))
    w.handed[(p, s)] = keep


@cython.locals(w=World)
def _held(w: World, s: str, key: tuple[str, int, str]) -> bool:
    m = w.msgs.get(key[0])
    iv = m.insts.get(key[1]) if m is not None else None
    return iv is not None and iv.state(s) == SHADOW
