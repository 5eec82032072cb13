"""The shadow redundancy trace monitor: a fold of a whole trace over `step.step`, the generator's own steps.

Seed 000, all sections; every rule it can report is a row of `rules.RULES`. Scope is the trace: the fold
needs the recorded configuration (`TRACE_START` `config.sr`, `SR_CONFIG` events), the recorded topology
(`SR_CONFIG` `topology`, or `config.sr_topology`), the recorded faults (the kernel's CRASH, RESTART,
PARTITION, HEAL) and the heartbeat records next to each message's events. Verdicts: invalid on any breach;
unknown when the trace is too incomplete to judge (no recorded topology, an unreadable configuration, a
message whose RECEIVE is missing, unreadable attributes, or no end-of-run SNAPSHOT, so the liveness rules
SR-075 and SR-057 cannot be applied); valid otherwise.

What each rule judged is counted in the world's `Tally` (`World.tally`, returned by `finish`); the
fold turns only the input faults of a partial or foreign trace into notes (`traces.verdict.InputFault`; the list
of them is `model/sr/inputs.py`), and any other exception of the rule code propagates: it is a bug.

The fold follows `traces.verdict`: `SrMonitor.start(context)` gives an `SrFold`, `feed` takes the trace's
events in sequence order (context events given at start and fed inline are taken once, `ContextCursor`),
`finish` runs the deferred checks at the last event's time. Settled messages are retired (the notes above `DEAD`), so
the live state follows the messages in flight, not the history. A fold pickles at any point
(`traces.verdict.save_fold`).
"""

from __future__ import annotations

import pickle
import zlib
from collections import deque
from collections.abc import Sequence
from copy import copy as shallow
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`monitor.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.sr import events as ev
from model.sr import rules as R
from model.sr.liveness import at_end, flush_due, liveness_findings, liveness_judged, skip_liveness
from model.sr.step import step, tally_of
from model.sr.world import ABORTED, EXPIRED, FAILED, GONE, LOST, REFUSED, Msg, World
from traces.event import Event
from traces.schema import CONTEXT_START, CONTEXT_SUFFIX, is_context_kind
from traces.verdict import (
    ContextCursor,
    InputFault,
    MonitorResult,
    Rule,
    Tally,
    Violation,
    fold_all,
    in_seq_order,
    reduced,
)

_FAULTS = frozenset({"CRASH", "RESTART"})
_MECH, _SR_CONFIG, _SNAPSHOT, _RECEIVE = ev.MECH, ev.SR_CONFIG, ev.SNAPSHOT, ev.RECEIVE  # bound once (hot path)
# kinds known not to be context (`traces.schema.is_context_kind`): one set lookup per event instead of two tests
_NOTED = frozenset({_RECEIVE, _SNAPSHOT})
_READ = frozenset({_MECH, "core"})  # the mechanisms whose events `step` folds (of the others: only their time)
_CONFIGURING = frozenset({"TRACE_START", _SR_CONFIG})  # kinds `feed` reads whatever their mechanism
_PLAIN = frozenset(k for k in (*ev.ALL_KINDS, "CRASH", "RESTART", "PARTITION", "HEAL") if not is_context_kind(k))


# --- retiring settled messages -------------------------------------------------------------------------------
# A message the fold can no longer learn anything from is retired, and revived if it must be. Seed 000, "How
# shadow messages are maintained" (SR-057, SR-065..SR-067) and "Message processing after an outage" (SR-075):
# a message is *settled* when every copy of every instance is in a state no recorded fault changes and no
# end-of-run rule reads (`DEAD`: refused, aborted, failed, expired, gone, lost) and the end-of-run liveness
# rules (`liveness.liveness_findings`: no loss, SR-075; shadow released, SR-057) would report nothing for it.
# Such a message is retired: its state leaves `World.msgs` and the node index `World.at` and is kept as
# compressed bytes (`retire`); the fold brings it back (`revive`) before any later event that names it, except
# its end-of-run SNAPSHOT. That is why retiring never changes a verdict:
#
# - no event about another message reads it: the only scans over messages are a CRASH's or a RESTART's
#   (`step._apply`), and `step.LIFECYCLE` changes no `DEAD` state; the heartbeat and promotion checks read
#   `World.held`, `World.contact` and `World.owed`, which are not per message and stay live;
# - its SNAPSHOT finds no message and reports nothing of it (`liveness.end_of_run`), which is what the live
#   message would have given: the age checks there read only shadows, Safety Net and queued copies (not
#   `DEAD`), and the liveness findings read the instance and its message, never the time, and were empty;
# - any other event about it (a sender's redelivery, a stray record of a faulty transport) meets the very
#   state it would have met: pickle gives back the same dataclasses, and every explanation sorts its sets.
#
# So a retired message costs one compressed blob (a few hundred bytes) instead of its objects, and the work
# of a CRASH no longer grows with the messages already settled.

# states of a copy that no recorded fault changes (`step.LIFECYCLE`) and no end-of-run age check reads
DEAD = frozenset({REFUSED, ABORTED, FAILED, EXPIRED, GONE, LOST})
# event kinds that can put a message's last live copy into a `DEAD` state (faults: CRASH and RESTART)
SETTLING = frozenset({ev.REJECT, ev.FAIL, ev.SHADOW_EXPIRE, ev.SAFETYNET_EXPIRE, ev.LOST})


def settled(m: Msg) -> bool:
    """Every copy of every instance `DEAD`, and nothing for the liveness rules to report (notes above)."""
    for iv in m.insts.values():
        for copy in iv.copies.values():
            if copy.state not in DEAD:
                return False
    return not any(liveness_findings(iv, m.delivered, m.licences) for iv in m.insts.values())


@cython.locals(w=World)
def retire(w: World, name: str) -> bytes:
    """Take message `name` out of the world (and the node index); return its state as compressed bytes."""
    m = w.msgs.pop(name)
    for iv in m.insts.values():
        for node in iv.copies:
            w.at[node].pop((iv.msg, iv.inst), None)
    return zlib.compress(pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL), 1)


@cython.locals(w=World)
def revive(w: World, name: str, blob: bytes) -> None:
    """Put a retired message back exactly as it was retired (a later event names it)."""
    m: Msg = pickle.loads(zlib.decompress(blob))
    w.msgs[name] = m
    for iv in m.insts.values():
        for node in iv.copies:
            w.at.setdefault(node, {})[(iv.msg, iv.inst)] = iv


class SrFold:
    """One trace's judgement in progress (`traces.verdict.Fold`); the stateful tests feed it step by step.

    State beside the `World`: the context cursor, the last event fed (the deferred checks of `finish` run at
    its time), the violations and notes so far, the names of the messages received, snapshotted, judged
    without their RECEIVE, or with an unreadable event (one string each, for the whole run: the notes name
    them at the end), and the retired messages (the retirement notes above `DEAD`).

    A `cdef class` in the compiled build (`monitor.pxd`; issue 32, session 26): its fields are C struct members, read
    per event without an attribute lookup (its cursor a `ContextCursor`). Pickled and copied as its class and fields
    (`__reduce__`, through `traces.verdict.restored`), on either path alike; `__slots__`: no field outside the list.
    """

    __fields__ = ("world", "accept_variant", "cursor", "last", "violations", "malformed", "receives", "orphans",
                  "snapshots", "broken", "retired", "retired_judged", "foreign")  # fmt: skip
    __slots__ = __fields__

    def __init__(self, context: Sequence[Event] = (), accept_variant: bool | None = None) -> None:
        self.world = World()
        self.accept_variant = accept_variant
        if accept_variant is not None:
            self.world.cfg = self.world.cfg.replace(accept_variant=accept_variant)
        self.cursor = ContextCursor(context)
        self.last: Event | None = None
        self.violations: list[Violation] = []
        self.malformed: list[str] = []  # events the rules could not read (missing or mistyped attributes)
        self.receives: set[str] = set()
        self.orphans: set[str] = set()
        self.snapshots: set[str] = set()
        self.broken: set[str] = set()  # entities with an unreadable event: their later verdicts would be guesses
        self.retired: dict[str, bytes] = {}  # message -> its settled state, compressed (`retire`)
        # message retired -> the liveness rules its instances are instances of (`liveness.liveness_judged`): a
        # settled message reports nothing at its SNAPSHOT, and these count as judged there (held)
        self.retired_judged: dict[str, list[Rule]] = {}
        self.foreign: dict[tuple[str, str], list] = {}  # (server, version) -> [count, first event]: not judged

    def __reduce__(self) -> tuple:
        return reduced(self)

    # --- traces.verdict.Fold ------------------------------------------------------------------------------
    @cython.locals(e=Event, cursor=ContextCursor, w=World)
    def feed(self, e: Event, _context: bool = False) -> None:
        """One event of the trace, in sequence order; the context events due before it are taken first
        (`_context`: one of those, from the cursor). The hot path, so `step.step`'s bookkeeping is inline: the
        notes, the breaches kept, the revival and retirement of settled messages (the retirement notes above `DEAD`)."""
        kind = e.kind
        if not _context:
            self.last = e
            cursor = self.cursor
            if cursor.index < len(cursor.events):
                for c in cursor.due(e.seq):
                    self.feed(c, True)
            if kind not in _PLAIN and (kind == CONTEXT_START or kind.endswith(CONTEXT_SUFFIX)) and cursor.taken(e):
                return  # a context event already taken (`ContextCursor.taken`)
        w, name = self.world, e.entity
        if e.mechanism not in _READ and kind not in _CONFIGURING:  # another mechanism's event (issue 32): `step`
            due, db_due, now = w.due, w.db_due, e.ts_ms  # only flushes the checks due before its time, if any
            if not (due and due[0][0] < now) and not (db_due and db_due[0][0] < now):
                return
        touched: Sequence[str] = ()
        if e.mechanism == _MECH and w.topo is not None and self._foreign(w.topo, e):
            return
        if e.mechanism == _MECH:
            receives = self.receives  # the notes on the messages the trace does not show whole (`notes`)
            if kind in _NOTED or name not in receives:  # else nothing to note
                if kind == _SR_CONFIG or name.startswith("hb:"):
                    pass  # not a message
                elif kind == _RECEIVE:
                    receives.add(name)
                elif kind == _SNAPSHOT:
                    self.snapshots.add(name)
                else:
                    self.orphans.add(name)
            if name in self.retired and kind != _SNAPSHOT:
                revive(w, name, self.retired.pop(name))  # a later event names it (notes above `DEAD`)
                self.retired_judged.pop(name, None)
        elif kind in _FAULTS and e.mechanism == "core":
            touched = self._on_node(e)
        try:
            found = step(w, e)
        except InputFault as exc:  # a partial or foreign trace (`inputs`); any other exception is a bug
            self.malformed.append(f"{exc}; skipped, and {name} is not judged from there on")
            self.broken.add(name)
            if kind == ev.XQUERYDISCARD:  # the notifications it carried are not judged against it (SR-053)
                w.unread_queries.add((e.node, e.ts_ms))
            return
        if found:
            broken = self.broken
            self.violations.extend(v for v in found if v.entity not in broken)
        if kind == _SNAPSHOT and name in self.retired_judged and e.attrs.get("quiesced"):
            for rule in self.retired_judged.pop(name):  # a retired message's liveness, judged when it retired
                w.tally.judge(rule)
        if self.accept_variant is not None and kind in ("TRACE_START", _SR_CONFIG):
            w.cfg = w.cfg.replace(accept_variant=self.accept_variant)
        if kind in SETTLING and e.mechanism == _MECH:
            self._retire_if_settled(name)
        for msg in touched:
            self._retire_if_settled(msg)

    def finish_copy(self) -> SrFold | None:
        """A copy whose `finish()` gives what this fold's would, this fold left as it is (issue 33, session 15: the
        explorer judges every edge by finishing a copy of the source state's fold fed the step's events,
        `conformance.explore.edges`), sharing what `finish` only reads. `finish` changes: `violations` (extended),
        the world's deferred checks (`due`, `db_due`, `db_pending`, `db_late`: `liveness.flush_due`) and its
        `tally`; `at_end`, `tally_of` and `notes` read. None while context events not yet taken are left for
        `finish` to feed (`cursor.rest`: they could change anything; the caller copies the whole fold then)."""
        cursor = self.cursor
        if any(c.seq > cursor.last for c in cursor.events[cursor.index :]):  # those already taken are skipped
            return None
        new = shallow(self)
        new.cursor = shallow(cursor)
        new.violations = list(self.violations)
        w = new.world = shallow(self.world)
        w.due, w.db_due = deque(w.due), list(w.db_due)
        w.db_pending, w.db_late = set(w.db_pending), set(w.db_late)
        w.tally = w.tally.copy()
        return new

    def finish(self) -> MonitorResult:
        """The context events still to come, then the deferred checks at the last event's time (SR-058)."""
        if self.last is None:
            return MonitorResult.of(())
        for c in self.cursor.rest():
            self.feed(c, True)
        self.violations.extend(flush_due(self.world, self.last.ts_ms, final=True))
        self.violations.extend(v for v in at_end(self.world, self.last) if v.entity not in self.broken)
        tally = tally_of(self.world)  # a new Tally: the liveness instances the trace cannot show are added to it
        unsnapped = len(self.receives - self.snapshots)
        if unsnapped:
            skip_liveness(tally, "no end-of-run SNAPSHOT", unsnapped)
        if self.orphans:
            skip_liveness(tally, "a message whose RECEIVE is not in the trace", len(self.orphans))
        return MonitorResult.of(self.violations, self.notes(), tally=tally)

    @property
    def tally(self) -> Tally:
        """What each rule judged so far (`step.tally_of`: a new `Tally`)."""
        return tally_of(self.world)

    # --- the fold ----------------------------------------------------------------------------------------
    @cython.locals(e=Event)
    def _foreign(self, topo: dict[str, tuple[str, str | None, str]], e: Event) -> bool:
        """An sr event recorded by, or a heartbeat to, a server of the recorded topology whose version takes no
        part in 2013 shadow redundancy (an Exchange 2010 Hub: seed 000, "Shadow redundancy with Exchange 2010
        Hub Transport servers"): no rule judges it, so it is counted as unjudgeable with the reason (issue 18,
        family 2: an entity whose beginning the monitor cannot see). True: the event is not judged."""
        server = e.node
        found = topo.get(server)
        if (found is None or found[2] == "2013") and e.kind == ev.XQUERYDISCARD:
            server = str(e.attrs.get("primary"))
            found = topo.get(server)
            if found is not None and found[2] != "2013":
                self._shadows_for_foreign(e, server, found[2])
        if found is None or found[2] == "2013":
            return False
        seen = self.foreign.setdefault((server, found[2]), [0, e.event_id])
        seen[0] += 1
        return True

    @cython.locals(e=Event)
    def _shadows_for_foreign(self, e: Event, primary: str, version: str) -> None:
        """A 2013 server that says it holds shadows (`held` above 0) for a primary of another version: seed 000
        (SR-015, the Exchange 2010 section) forbids such a shadow whatever came before (TR-I01, issue 30)."""
        held = e.attrs.get("held")
        if not isinstance(held, int) or isinstance(held, bool) or e.node not in (self.world.topo or {}):
            return
        self.world.tally.judge(R.SHADOW_IN_BOUNDARY)
        if held > 0:
            why = (
                f"{e.node} says it holds {held} shadows for {primary}, an Exchange {version} server: a shadow "
                "lives only on another Exchange 2013 server of the primary's boundary"
            )
            rule = R.SHADOW_IN_BOUNDARY
            self.violations.append(rule.violated((e,), why, observed=held, primary=primary, version=version))

    @cython.locals(e=Event)
    def _on_node(self, e: Event) -> list[str]:
        """The messages with a copy on the node of a CRASH or RESTART (the fault may settle them)."""
        return sorted({inst.msg for inst in (self.world.at.get(e.node) or {}).values()})

    def _retire_if_settled(self, name: str) -> None:
        m = self.world.msgs.get(name)
        if m is not None and settled(m):
            judged = [rule for iv in m.insts.values() for rule in liveness_judged(iv)]
            if judged:
                self.retired_judged[name] = judged
            else:
                self.retired_judged.pop(name, None)
            self.retired[name] = retire(self.world, name)

    def live(self) -> int:
        """Messages whose state is held in full (not retired)."""
        return len(self.world.msgs)

    def describe(self, entity: str | None = None) -> dict[str, Any]:
        """A compact, JSON-able summary of the fold's state now, for the report (`conformance.audit`): the
        configuration that bounds the creation rules (SR-018..SR-031), the servers recorded down, and, for
        `entity` (a message), each delivery attempt's shadow progress and where its copies sit. Read only."""
        w, cfg = self.world, self.world.cfg
        out: dict[str, Any] = {
            "config": {
                "ShadowRedundancyEnabled": cfg.enabled,
                "RejectMessageOnShadowFailure": cfg.reject_on_failure,
                "ShadowMessagePreference": cfg.preference,
            },
            "servers down": sorted(n for n, up in w.up.items() if not up),
            "violations so far": len(self.violations),
        }
        if entity is None:
            return out
        if entity in self.retired:
            out[entity] = "settled and retired (every copy gone, nothing left to judge)"
            return out
        m = w.msgs.get(entity)
        if m is None:
            out[entity] = "not seen yet"
            return out
        for n, iv in sorted(m.insts.items()):
            out[f"{entity} attempt {n}"] = {
                "primary": iv.primary,
                "shadow session open to": iv.attempt_open or "-",
                "shadow stored on": iv.shadow or "-",
                "shadow acknowledged": iv.shadow_acked,
                "shadow attempts": iv.tries,
                "shadow creation failed": iv.failed,
                "sender session open": iv.inbound_open,
                "outcome": iv.outcome or "-",
                "copies": {node: c.state for node, c in sorted(iv.copies.items())},
            }
        return out

    def notes(self) -> list[str]:
        out = [*self.malformed, *self.world.notes]
        out += [
            f"{n} sr event(s) recorded by or addressed to {server}, an Exchange {version} server of the recorded "
            f"topology, which takes no part in 2013 shadow redundancy (first: {first}): not judged"
            for (server, version), (n, first) in sorted(self.foreign.items())
        ]
        if self.world.topo is None and self.receives:
            out.append("no recorded topology (SR_CONFIG topology): boundaries and placement not judged")
        out += [f"{m}: the trace does not start with the message's RECEIVE" for m in sorted(self.orphans)]
        out += [
            f"{m}: no end-of-run SNAPSHOT, liveness (SR-075, SR-057) not judged"
            for m in sorted(self.receives - self.snapshots)
        ]
        return out


class SrMonitor:
    mechanism = ev.MECH
    scope: Literal["entity", "trace"] = "trace"

    def __init__(self, accept_variant: bool | None = None) -> None:
        self.accept_variant = accept_variant

    def start(self, context: Sequence[Event] = ()) -> SrFold:
        return SrFold(context, self.accept_variant)

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        return fold_all(self, in_seq_order(events), context)


def monitor() -> SrMonitor:
    return SrMonitor()
