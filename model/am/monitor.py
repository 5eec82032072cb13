"""The Active Manager trace monitor: a fold of the recorded events over the model's own transitions.

Seed 002, all sections. The monitor rebuilds the world with `step.apply` (the very function the generator
changes its world with) and, before each event, asks whether the seed allows it: the transition tables of
`step.py` (mount state, PAM role, copy status), and at each BCSS decision the same functions the
generator used (`decisions.snapshot`, `bcss.select`, `bcss.dial_allows`, `World.quorum`). Every configured
value (the BCSS reading, the dial thresholds, each server's dial, each copy's activation policy) comes
from the recorded configuration (TRACE_START `config.bcss`, AM_CONFIG events); every other fact from the
events seen before. What an event restates about itself is compared with that derivation, never trusted.
Where copies tie on every key the seed names, any of them may be tried (`bcss.allowed_next`; the BCSS
checks are in `monitor_bcss.py`).
The monitor is a fold (issue 19, `traces.verdict`): `AmMonitor.start(context)` gives an `AmFold` holding
mutable state for one group, fed one event at a time in sequence order and finished into the verdict;
it never sorts, copies or holds its input, and it can be saved and restored between any two events.
Scope is the entity: the DAG's events form one group, each database's another. A database's group reads
the DAG-level facts it needs (view, PAM claims, health) from the AM_DAG_CONFIG events of its context,
which the DAG's own group checks against the DAG events (rule `dag-record`); so memory and parallelism are
per database. Each violation is made by its rule object (`rules.DIAL.violated`, issue 29): rule, requirement
ID, events, one sentence and the values compared (`Violation.data`).
What each rule judged is counted in the replay's `Tally` (`judge` where a rule compares an instance, `skip`
where the recorded configuration does not let it) and returned with the result. The fold catches only
`InputFault`, the faults of a partial or foreign trace listed in one place, `model/am/faults.py`, and turns
them into an unknown note naming the event; any other exception is a bug and propagates (exit 3).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`monitor.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.am import events as ev
from model.am import partial
from model.am.bcss import Options, default_options
from model.am.faults import check_attrs
from model.am.monitor_dag import DagFacts
from model.am.monitor_describe import describe
from model.am.replay import Replay
from model.am.replay_state import ReplayState
from model.am.rules import RULES
from traces.event import Event
from traces.schema import is_context_kind
from traces.verdict import ContextCursor, InputFault, MonitorResult, Tally, fold_all, in_seq_order, reduced

__all__ = ["AmFold", "AmMonitor", "Config", "Replay"]


@dataclass(frozen=True)
class Config:
    """What the recorded configuration says: the BCSS reading and whether the dial thresholds are recorded
    (the seed gives no numbers for them, AM-I09: without a recorded value the dial is not judged)."""

    opts: Options
    thresholds_recorded: bool

    @staticmethod
    def from_events(context: Sequence[Event]) -> Config:
        for e in context:
            if e.kind == "TRACE_START":
                return Config.from_start(e)
        return Config(default_options(), False)

    @staticmethod
    @cython.locals(e=Event)
    def from_start(e: Event) -> Config:
        """The configuration TRACE_START records; an unusable one is an input fault (`model.am.faults`, 5):
        `config` that is not a JSON object, `bcss` that is not one, an option `Options` does not have, or a
        threshold list that is not (dial, number) pairs."""
        return _config_of(str(e.attrs.get("config") or "{}"))


@lru_cache(maxsize=256)
def _config_of(text: str) -> Config:
    """`Config.from_start` of one recorded `config` text, read once: every fold of a trace (each database's group)
    starts from the same TRACE_START (issue 32, session 13: 0.8% of a compiled check at 10^6). A `Config` is frozen,
    its `Options` too; an unusable text raises every time (a raise is not cached)."""
    try:
        cfg = json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError: the recorded text is not JSON
        raise InputFault(str(exc)) from exc
    bcss = (cfg.get("bcss") if isinstance(cfg, dict) else None) or {}
    if not isinstance(bcss, dict):
        raise InputFault(f"config.bcss is {type(bcss).__name__}, not an object")
    unknown = sorted(set(bcss) - _OPTIONS)
    if unknown:
        raise InputFault(f"Options.__init__() got an unexpected keyword argument {unknown[0]!r}")
    changes = dict(bcss)
    if "thresholds" in bcss:
        changes["thresholds"] = _thresholds(bcss["thresholds"])
    return Config(default_options().with_(**changes), "thresholds" in bcss)


_OPTIONS = frozenset(f.name for f in fields(Options))


def _thresholds(v: Any) -> tuple[tuple[str, int], ...]:
    """config.bcss.thresholds: a list of [dial, missing logs] pairs (AM-P02..AM-P04)."""
    if not isinstance(v, list) or not all(isinstance(p, list) and len(p) == 2 for p in v):
        raise InputFault(f"config.bcss.thresholds is {v!r}, not a list of [dial, logs] pairs")
    return tuple((p[0], p[1]) for p in v)


class AmMonitor:
    """Scope `entity`: the DAG's events are judged as one group (PAM, quorum, maintenance), each database's
    as another. A database's group folds the DAG-level facts it needs from the AM_DAG_CONFIG events of its
    context (checked against the DAG events by the DAG's group, rule `dag-record`) and the configuration
    from TRACE_START and AM_CONFIG. Given a whole trace (or any events holding the DAG events), it folds
    those and judges every entity."""

    mechanism = "am"
    scope: Literal["entity", "trace"] = "entity"

    def start(self, context: Sequence[Event] = ()) -> AmFold:
        return AmFold(context)

    def check(self, events: Sequence[Event], context: Sequence[Event] = ()) -> MonitorResult:
        """One pass of the fold. Without a context, the context events among `events` are it (as before)."""
        ordered = in_seq_order(events)
        if not context:  # the context is among the events, fed inline: only the configuration is needed first
            context = next(([e] for e in ordered if e.kind == "TRACE_START"), [])
        return fold_all(self, ordered, context)


_TABLE = Replay.TABLE  # kind -> (check, transition), as `Replay.step` dispatches
_NOTHING = (None, None)
_WATCHED = ev.DAG_STATE_KINDS | {ev.AM_DAG_CONFIG, ev.DB_CREATE}
# kinds whose database may be one the trace never began (`AmFold._unseen`): every database kind but its creation
_UNSEEN_CHECKED = ev.KINDS - ev.DAG_KINDS - {ev.DB_CREATE, ev.AM_CONFIG, ev.AM_DAG_CONFIG}
_AM_DAG_CONFIG = ev.AM_DAG_CONFIG  # bound once: the fold compares each am event with it (issue 32)
_CONTEXT_KIND: dict[str, bool] = {}  # kind -> is_context_kind(kind), asked once per kind
_FACTS = "am: DAG facts"  # the key of the trace's `DagFacts` among what its folds derive from the context


def _is_context(kind: str) -> bool:
    known = _CONTEXT_KIND.get(kind)
    if known is None:
        known = _CONTEXT_KIND[kind] = is_context_kind(kind)
    return known


class AmFold:
    """One group's judgement in progress (`traces.verdict.Fold`): the replay, the context cursor, and
    three flags and the group's entities in place of the look at the whole group the old `check` took.

    - `fold_dag` (the replay's: are the DAG events folded, AM_DAG_CONFIG only checked against them?) was
      "the group holds a DAG_VIEW/PAM_*/SERVER_HEALTH event". It is decided when first needed: at the first
      AM_DAG_CONFIG, from the group's events seen so far and the one being fed (a DAG's group starts with
      its view: generated traces always decide it as the whole group would), else at `finish`. A DAG-state
      event arriving after a decision of False turns it on from there on.
    - "no DAG facts" (a database of a DAG whose context records no AM_DAG_CONFIG and whose group holds no
      DAG event: judged unknown) needs the whole context: decided at `finish` from the flags.
    - Violations are kept for the group's own entities (those of the `am` events fed) only: filtered at
      `finish`, when that set is complete.
    A malformed event stops the replay (its note says where); the flags and entities are still taken.
    A context event fed inline counts as the group's (as every event given to `check` did) and is taken
    once, whether or not it was also given at start (`ContextCursor`). State kept for the whole run: the
    replay's (`replay.Replay`), the context still to come, the flags, the group's entities, the last
    event; the flags stop being watched once decided (`watched`), the rest is what a verdict still reads.
    While `fold_dag` is false, the DAG facts of each AM_DAG_CONFIG come from the trace's `DagFacts` (issue 32):
    shared by the folds of a trace when the context list offers a `derived` mapping (the engine's), else
    this fold's own; `facts` is the node this fold's world was last given.
    A `cdef class` in the compiled build (`monitor.pxd`; issue 32, session 25): its fields are C struct members, read
    per event without an attribute lookup; pickled as its class and fields (`__reduce__`), so a fold saved by one
    path loads in the other.
    """

    __fields__ = (
        "configured", "cursor", "dag_config", "dag_db", "dag_state", "error", "facts", "last", "live", "own",
        "partial_mounted", "replay", "result", "stopped", "unseen", "watched",
    )  # fmt: skip
    __slots__ = __fields__

    def __init__(self, context: Sequence[Event] = ()) -> None:
        self.cursor = ContextCursor(context)
        self.error: str | None = None  # unusable configuration: the only note, nothing judged
        self.configured = bool(context)  # else the first TRACE_START fed inline configures
        cfg = Config(default_options(), False)
        if context:
            try:
                cfg = Config.from_events(context)
            except InputFault as exc:
                self.error = f"am monitor: unusable BCSS options in TRACE_START: {exc}"
        self.replay = Replay(cfg.opts, cfg.thresholds_recorded, fold_dag=None)
        derived = getattr(context, "derived", None)  # what the folds of the trace share (the engine's context)
        if derived is None:
            self.facts: DagFacts | None = DagFacts.root()
        else:
            self.facts = derived.get(_FACTS) or derived.setdefault(_FACTS, DagFacts.root())
        self.live = self.error is None  # the replay goes on (no configuration error, no malformed event)
        self.own: set[str] = set()
        self.watched: frozenset[str] = _WATCHED  # the kinds a flag below still waits for
        self.dag_state = False  # a DAG-state event in the group
        self.dag_config = False  # an AM_DAG_CONFIG in the group or its context
        self.dag_db = False  # a DB_CREATE of a DAG database in the group
        self.last: Event | None = None  # the last `am` event folded: the end-of-trace checks cite it
        self.stopped: str | None = None  # where a malformed event stopped the replay
        self.result: MonitorResult | None = None
        self.unseen: dict[str, list] = {}  # what no rule can judge -> [count, first event ID, its kind]: notes
        self.partial_mounted: dict[str, set[str]] = {}  # a database without DB_CREATE -> where seen mounted

    @cython.locals(e=Event, r=ReplayState, cursor=ContextCursor)
    def feed(self, e: Event) -> None:
        """Take one event of the group (in sequence order), after the context events due before it."""
        kind = e.kind
        if kind in self.watched:
            self._watch(e)
        cursor = self.cursor  # the context list may still grow (a streaming engine appends as it reads)
        if cursor.index < len(cursor.events) and cursor.events[cursor.index].seq < e.seq:
            self._due(e.seq)
        am = e.mechanism == "am"
        if am:
            self.own.add(e.entity)
        is_context = _CONTEXT_KIND.get(kind)
        if is_context is None:
            is_context = _is_context(kind)
        if is_context:
            if self.cursor.taken(e):
                return  # already taken from the context given at start
            if kind == "TRACE_START" and not self.configured:
                self._configure(e)
        if am and self.live:  # `_step` and `Replay.step`, written out: the path of nearly every event
            r = self.replay
            if kind in _UNSEEN_CHECKED and self._unseen(r, e):
                return
            self.last = e
            try:
                if kind == _AM_DAG_CONFIG:
                    if r.fold_dag is None:
                        r.fold_dag = self.dag_state
                    if r.fold_dag:
                        r.step(e)
                    else:
                        self._facts(r, e)
                else:
                    check_attrs(e)
                    check, transition = _TABLE.get(kind, _NOTHING)
                    if check is not None:
                        check(r, e, e.attrs)
                    if transition is not None:
                        transition(r.w, e.entity, e.attrs)
            except InputFault as exc:  # a foreign or truncated trace (`model.am.faults`): cannot judge on
                self._stop(exc)

    def __reduce__(self) -> tuple:
        return reduced(self)

    def finish(self) -> MonitorResult:
        """The rest of the context, the end-of-trace checks, and the verdict (the same on a second call)."""
        if self.result is None:
            self.result = self._finish()
        return self.result

    # --- the parts ------------------------------------------------------------------------------------
    @cython.locals(e=Event)
    def _unseen(self, r: Replay, e: Event) -> bool:
        """An event of a database whose beginning the trace does not show (issue 18, family 2): recorded before
        the database's DB_CREATE (a trace cut at the front, or a database of another system). No rule can judge
        it: it is counted, with the reason, in the notes (verdict unknown) and not replayed, where it used to stop
        the replay with a KeyError. True: the event is not judged."""
        if e.entity in r.w.dbs:
            return False
        why = f"database {e.entity}, whose DB_CREATE is not in the trace"
        seen = self.unseen.setdefault(why, [0, e.event_id, e.kind])
        seen[0] += 1
        partial.judge(r, self.partial_mounted, e)  # issue 30, TR-I01: what it shows by itself is judged
        return True

    @cython.locals(e=Event)
    def _watch(self, e: Event) -> None:
        kind = e.kind
        if kind in ev.DAG_STATE_KINDS:
            self.dag_state = True
            if self.replay.fold_dag is False:
                self.replay.fold_dag = True
            self.watched = frozenset()  # fold_dag is true from here, and the group has DAG facts
        elif kind == _AM_DAG_CONFIG:
            self.dag_config = True
            if not self.dag_state:
                self.watched = ev.DAG_STATE_KINDS  # the group has DAG facts; fold_dag still waits
        elif e.attrs.get("dag"):  # DB_CREATE
            self.dag_db = True

    def _due(self, seq: int) -> None:
        """The context events due before an event with sequence number `seq` (the cursor's `due`)."""
        cursor = self.cursor
        for c in cursor.due(seq):
            self._take(c)

    @cython.locals(c=Event)
    def _take(self, c: Event) -> None:
        """A context event from the list given at start: only the `am` ones matter (as they always did)."""
        if c.mechanism != "am":
            return
        if c.kind == _AM_DAG_CONFIG and not self.dag_config:
            self._watch(c)
        if self.live:
            self._step(c)

    @cython.locals(e=Event)
    def _configure(self, e: Event) -> None:
        self.configured = True
        try:
            cfg = Config.from_start(e)
        except InputFault as exc:
            self.error = f"am monitor: unusable BCSS options in TRACE_START: {exc}"
            self.live = False
            return
        r = self.replay
        r.opts = r.w.opts = cfg.opts
        r.thresholds_recorded = cfg.thresholds_recorded

    @cython.locals(e=Event, r=ReplayState)
    def _step(self, e: Event) -> None:
        r = self.replay
        if r.fold_dag is None and e.kind == _AM_DAG_CONFIG:
            r.fold_dag = self.dag_state
        self.last = e
        try:
            if r.fold_dag is False and e.kind == _AM_DAG_CONFIG:
                self._facts(r, e)
            else:
                r.step(e)
        except InputFault as exc:  # a foreign or truncated trace (`model.am.faults`): cannot judge on
            self._stop(exc)

    @cython.locals(e=Event)
    def _facts(self, r: Replay, e: Event) -> None:
        """An AM_DAG_CONFIG of a database's group (`fold_dag` false): `Replay.step`'s checks and transition
        (`DagChecks.on_am_dag_config`, `step.dag_config`), the DAG facts taken from the trace's `DagFacts`.
        An event it finds faulty is stepped on this fold's own world, which raises the same fault."""
        facts = self.facts
        if facts is not None:
            try:
                facts = facts.after(e)
            except InputFault:
                facts = None
        self.facts = facts
        if facts is None:
            r.step(e)
            return
        if facts.changes:
            r.new_view(e)
        facts.put(r.w)

    def describe(self, entity: str | None = None) -> dict[str, Any]:
        """A compact, JSON-able summary of the replay's state now, for the report (`monitor_describe.describe`)."""
        return describe(self, entity)

    def _stop(self, exc: InputFault) -> None:
        at = self.last
        where = f"{at.kind} seq {at.seq} ({at.event_id})" if at is not None else "the trace"
        self.stopped = f"am monitor stopped at {where}: {exc}"
        self.live = False

    def _finish(self) -> MonitorResult:
        for c in self.cursor.rest():
            self._take(c)
        if self.error is not None:  # nothing judged: each rule is not judged, for that reason
            return MonitorResult.of((), [self.error], tally=_unjudged(self.error))
        if not self.dag_state and not self.dag_config and self.dag_db:
            why = (
                f"am monitor: no DAG facts for {', '.join(sorted(self.own))} (neither the "
                "DAG events nor AM_DAG_CONFIG in its context): cannot judge"
            )
            return MonitorResult.of((), [why], tally=_unjudged(why, self.replay.tally))
        r = self.replay
        if r.fold_dag is None:
            r.fold_dag = self.dag_state
        if self.stopped is None and self.last is not None:
            try:
                r.end(self.last)
            except InputFault as exc:
                self._stop(exc)
        if self.stopped is not None:  # what the open runs' records restated wrongly is still reported
            for db in sorted(r.runs):
                r.flush_record(r.runs[db])
        own = self.own
        violations = [v for v in r.out if v.entity in own]
        notes = [*r.notes, self.stopped] if self.stopped else list(r.notes)
        notes += [
            f"am: {n} event(s) of {why} (first: {kind} {first}): its beginning is not in the trace, not judged"
            for why, (n, first, kind) in sorted(self.unseen.items())
        ]
        return MonitorResult.of(violations, notes, tally=r.tally)


def _unjudged(why: str, tally: Tally | None = None) -> Tally:
    """What the replay judged, as not judged, since its verdicts are not given (a database without DAG facts);
    with nothing judged (an unusable configuration), every rule once: the group it could not judge."""
    out = Tally()
    for rule in RULES.values():
        n = tally.judged.get(rule.name, 0) if tally is not None else 1
        if n:
            out.skip(rule, why, n)
    return out
