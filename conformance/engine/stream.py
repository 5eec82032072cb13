"""The engine's router: each event, as it is read, goes into the folds that judge it.

A trace recorded in seq order (`conformance.engine.trace_index.Group.streamed`) is judged as it is read: its core
rules fold (`core_fold.TraceRulesFold`), one `GroupFolds` of the trace-scope monitors, and one `GroupFolds`
per (mechanism, entity) for the entity-scope monitors. No event is kept: only the folds' state and the
trace's context events (TRACE_START and `*_CONFIG`), a list every fold of the trace reads through its
`ContextCursor` as it grows, so an entity's fold sees the context recorded after its own last event too,
as a fold given the whole context at its start does. A trace whose rows break seq order (TR-001) is held
and judged whole (`whole_trace`): the same folds, fed the trace sorted by seq, with TR-001 and TR-006
judged on its recording order (`core_fold.HeldRulesFold`), so the two paths give the same verdicts
(tests/engine/test_fold_stream.py). Every checker goes through here: the single-process drivers
(`conformance.pycheck`, `conformance.dataset_check`, `conformance.incremental`), the Spark trace pass
(`spark_trace_check.trace_pass`, through the engine's driver and a `Router` that checks seq order as it is
read, `watch`) and the list-based API (`conformance.check`: `verdict`, `run_monitor`).
"""

from __future__ import annotations

import pickle
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`stream.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from conformance.engine.core_fold import HeldRulesFold, TraceRulesFold, restored
from conformance.engine.folds import GroupFolds, fold_finish_copy
from conformance.engine.tally import RuleCounts
from traces.event import Event
from traces.schema import is_context_kind
from traces.verdict import Monitor, MonitorResult, Verdict, Violation

Judged = tuple[str, Event, MonitorResult]  # (monitor name, the group's first event, result)
Runs = Sequence[tuple[str, Monitor]]
_SEQ = attrgetter("seq")
# An event's group within its trace for the entity-scope monitors of its mechanism: the key of
# `TraceFolds.entities`, and of every tool that looks at one group (`groups_of`).
ENTITY_OF = attrgetter("mechanism", "entity")
# The kinds met, by whether they are context kinds (`traces.schema.is_context_kind`, asked once per kind): set
# membership per event instead of a method call and a comparison (issue 32, session 16)
_CONTEXT_KINDS: set[str] = set()
_PLAIN_KINDS: set[str] = set()


class Context(list):
    """A trace's context events, the list every fold of the trace reads (`traces.verdict.ContextCursor`), and
    `derived`: what a monitor's folds derive from those events alone, made by the first fold that needs it
    and shared by the others of the trace (issue 32: the am folds' DAG facts, `model.am.monitor_dag.DagFacts`).
    It lives and is saved (pickled) with the trace's folds."""

    __slots__ = ("derived",)

    def __init__(self) -> None:
        super().__init__()
        self.derived: dict[str, object] = {}


class TraceFolds:
    """Every fold of one streamed trace.

    A `cdef class` in the compiled build (`stream.pxd`; issue 32, session 17): its fields are C struct members. So it
    is pickled as its class and fields (`__reduce__`, through `core_fold.restored`), which moves saved folds between
    the compiled and pure paths (a pickle of the plain slotted class it was loads too), and copied by `finish_copy`,
    never by `object.__new__` and `setattr` (tests/engine/test_fast_folds.py)."""

    __fields__ = ("context", "core", "entities", "entity_runs", "trace")
    __slots__ = __fields__

    def __init__(self, first: Event, trace_runs: Runs, entity_runs, recorded: Sequence[Event] | None = None) -> None:
        """`first`: the first event fed; `recorded`: a held trace's events in recording order (`whole_trace`)."""
        self.context: list[Event] = Context()
        self.core = TraceRulesFold(first.trace_id) if recorded is None else HeldRulesFold(first.trace_id, recorded)
        self.trace = GroupFolds("trace", trace_runs, first, self.context) if trace_runs else None
        self.entity_runs: dict[str, list[tuple[str, Monitor]]] = entity_runs
        self.entities: dict[tuple[str, str], GroupFolds] = {}

    @cython.locals(e=Event, runs_of=dict, entities=dict, group=GroupFolds)  # `get` a C call (session 16)
    def feed(self, e: Event) -> None:
        kind = e.kind
        context = kind in _CONTEXT_KINDS
        if not context and kind not in _PLAIN_KINDS:  # a kind met for the first time
            context = is_context_kind(kind)
            (_CONTEXT_KINDS if context else _PLAIN_KINDS).add(kind)
        if context:
            self.context.append(e)
        self.core.feed(e)
        if self.trace is not None:
            self.trace.feed(e)
        runs_of = self.entity_runs
        runs = runs_of.get(e.mechanism)
        if runs:
            key = (e.mechanism, e.entity)  # `ENTITY_OF(e)`, inline
            entities = self.entities
            group = entities.get(key)
            if group is None:
                group = entities[key] = GroupFolds("entity", runs, e, self.context)
            group.feed(e)

    def _values(self) -> tuple:
        return (self.context, self.core, self.entities, self.entity_runs, self.trace)

    def __reduce__(self) -> tuple:
        return restored, (type(self), self._values())

    def finish_copy(self) -> TraceFolds | None:
        """A copy whose `finish()` gives what this one's would, this one left as it is (issue 33, session 15: the
        explorer's edge verdict, `conformance.explore.edges`): the core fold and every group copied by their own
        `finish_copy` (None when one of them has none: the caller copies everything); the context list and the
        entity runs shared (only `feed` changes them)."""
        core = fold_finish_copy(self.core)
        trace = None if self.trace is None else self.trace.finish_copy()
        entities = {key: group.finish_copy() for key, group in self.entities.items()}
        if core is None or (trace is None and self.trace is not None) or any(g is None for g in entities.values()):
            return None
        return restored(type(self), (self.context, core, entities, self.entity_runs, trace))

    def finish(self) -> tuple[list, list[Judged]]:
        judged: list[Judged] = []
        for key in sorted(self.entities):
            judged.extend(self.entities[key].finish())
        if self.trace is not None:
            judged.extend(self.trace.finish())
        return self.core.finish(), judged


def whole_trace(recorded: Sequence[Event], trace_runs: Runs, entity_runs) -> TraceFolds:
    """One trace held whole, its events in recording order, fed to its folds sorted by seq (see the module)."""
    ordered = sorted(recorded, key=_SEQ)  # stable: equal seqs keep their recording order
    folds = TraceFolds(ordered[0], trace_runs, entity_runs, recorded)
    for e in ordered:
        folds.feed(e)
    return folds


class OrderBroken(RuntimeError):
    """Rows reached the folds out of the order a plan promised (the Spark plan's sort is not a contract)."""


def group_key(scope: str, e: Event) -> tuple[str, ...]:
    """The group an event belongs to: its trace, or (trace, mechanism, entity) for entity scope (`TraceFolds`
    keeps one `GroupFolds` per trace and one per (mechanism, entity) of it, `ENTITY_OF`)."""
    return (e.trace_id,) if scope == "trace" else (e.trace_id, *ENTITY_OF(e))


def groups_of(monitor: Monitor, events: Iterable[Event]) -> dict[tuple[str, ...], list[Event]]:
    """The events each fold of `monitor` is fed, by `group_key`, in the order given: every event of a trace
    for a trace-scope monitor; an entity-scope monitor's own mechanism's events per entity (as `TraceFolds.
    feed` routes them). The one grouping of the list API (`conformance.check.group_for`) and the audit's
    replay (`conformance.audit.states`)."""
    groups: dict[tuple[str, ...], list[Event]] = {}
    whole, mech = monitor.scope == "trace", monitor.mechanism
    for e in events:
        if whole:
            groups.setdefault((e.trace_id,), []).append(e)
        elif e.mechanism == mech:
            groups.setdefault((e.trace_id, *ENTITY_OF(e)), []).append(e)
    return groups


def split_runs(runs: Runs) -> tuple[Runs, dict[str, list[tuple[str, Monitor]]]]:
    """The monitors judging a whole trace, and per mechanism those judging each entity of it: how every
    driver splits a trace's events among folds (`TraceFolds`)."""
    entity_runs: dict[str, list[tuple[str, Monitor]]] = {}
    for name, monitor in runs:
        if monitor.scope == "entity":
            entity_runs.setdefault(monitor.mechanism, []).append((name, monitor))
    return [(n, m) for n, m in runs if m.scope == "trace"], entity_runs


JUDGED_WHOLE = "it was judged whole (it broke TR-001): no folds were saved to continue"


def not_continued(folds: TraceFolds, begins: int) -> str | None:
    """Why a trace's saved folds cannot take its new events, the first at seq `begins` (they must go on in
    seq order, TR-001), or None: the one test of every incremental driver (`Router`, `engine.resume`)."""
    prev = folds.core.prev
    if prev is not None and begins <= prev.seq:
        return f"its new events begin at seq {begins}, not after {prev.seq}"
    return None


class Router:
    """The folds of one group of traces being read; `finish` gives (violations, unknown notes) as dicts.

    `streamed`: the traces fed to folds (None: every trace; empty: every trace held). `watch` (with
    `streamed` None, when no index said beforehand which traces are in seq order: the Spark trace pass): a
    trace whose event does not follow its previous one in seq (TR-001) has its folds dropped and is named
    in `dropped` (None: out of seq order), its later events ignored (`hold_dropped`: held; the engine adds
    those it kept before the drop, `conformance.engine.driver.Engine`): the caller judges it whole.
    `restored`: saved folds (pickled; None: the trace was judged whole) that a trace's first event
    continues if it goes on in seq (`not_continued`; else the trace is dropped with the reason), named in
    `continued`."""

    def __init__(
        self,
        runs: Runs,
        streamed: set[str] | None,
        *,
        watch: bool = False,
        restored: dict[str, bytes | None] | None = None,
        hold_dropped: bool = False,
    ) -> None:
        self.trace_runs, self.entity_runs = split_runs(runs)
        self.streamed = streamed  # None: every trace (the caller guarantees seq order, or `watch`)
        self.traces: dict[str, TraceFolds] = {}
        self.held: list[Event] = []
        self.counts = RuleCounts()  # what each rule judged, over every trace finished (`judged`)
        if watch and streamed is not None:
            raise ValueError("Router: watch checks every trace's seq order; no traces are held up front")
        if watch and type(self).feed is Router.feed:  # a subclass's own `feed` calls `watched` itself
            self.feed = self.watched  # type: ignore[method-assign]
        self.restored = restored
        self.dropped: dict[str, str | None] = {}  # trace -> why its folds were dropped (`watch`, `restored`)
        self.hold_dropped = hold_dropped  # a dropped trace's events from the drop on go to `held`
        self.continued: list[str] = []  # the restored traces continued, in the order their first event came

    @cython.locals(e=Event, folds=TraceFolds)  # `folds.feed` a C call (`cpdef`, session 17)
    def feed(self, e: Event) -> None:
        if self.streamed is not None and e.trace_id not in self.streamed:
            self.held.append(e)
            return
        folds = self.traces.get(e.trace_id)
        if folds is None:
            folds = self._begin(e)
            if folds is None:
                return
        folds.feed(e)

    def runs_fed(self) -> bool:
        """Whether `feed_run` may take a run of events at once: the plain `feed` (no seq order watched, no
        subclass's own `feed`) and no dropped trace's events held (`hold_dropped`: the engine interleaves
        those with the events it kept, event by event)."""
        return getattr(self.feed, "__func__", None) is Router.feed and not self.hold_dropped

    @cython.locals(e=Event, folds=TraceFolds)
    def feed_run(self, trace: str, run: list[Event]) -> None:
        """`feed` of each event of `run`, a run of one trace's events in recording order, the trace's folds
        looked up once (only where `runs_fed`): the same folds fed the same events in the same order."""
        if self.streamed is not None and trace not in self.streamed:
            self.held.extend(run)
            return
        folds = self.traces.get(trace)
        if folds is None:
            folds = self._begin(run[0])
            if folds is None:  # dropped at its first event (saved folds it cannot continue): as `feed` does
                for e in run[1:]:
                    self.feed(e)
                return
        if cython.compiled:  # a C call per event (`TraceFolds.feed` is `cpdef`, session 17)
            for e in run:
                folds.feed(e)
        else:
            deque(map(folds.feed, run), maxlen=0)

    @cython.locals(e=Event, folds=TraceFolds)
    def watched(self, e: Event) -> None:
        """`feed` with seq order checked (`watch`; set as `feed` then, so a router that needs no check pays
        nothing per event for it): a trace going back in seq has its folds dropped (see the class)."""
        folds = self.traces.get(e.trace_id)
        if folds is None:
            folds = self._begin(e)
            if folds is None:
                return
        elif e.seq <= folds.core.prev.seq:  # type: ignore[union-attr]
            del self.traces[e.trace_id]
            self.dropped[e.trace_id] = None
            if self.hold_dropped:
                self.held.append(e)
            return
        folds.feed(e)

    def _begin(self, e: Event) -> TraceFolds | None:
        """A trace's folds at its first event read: new, or its saved ones continued; None when dropped."""
        trace = e.trace_id
        if trace in self.dropped:
            if self.hold_dropped:
                self.held.append(e)
            return None
        restored = self.restored
        if restored is None or trace not in restored:
            folds = TraceFolds(e, self.trace_runs, self.entity_runs)
        else:
            saved = restored[trace]
            folds = pickle.loads(saved) if saved is not None else None
            why = JUDGED_WHOLE if folds is None else not_continued(folds, e.seq)
            if why is not None:
                self.dropped[trace] = why
                return None
            self.continued.append(trace)
        self.traces[trace] = folds  # type: ignore[assignment]
        return folds

    def judged(self) -> Iterator[tuple[list[Violation], list[Judged]]]:
        """Every trace's core violations and monitor results, in trace order, streamed and held traces alike
        (a held trace judged whole, `whole_trace`); the router is empty afterwards."""
        held: dict[str, list[Event]] = {}
        for e in self.held:
            held.setdefault(e.trace_id, []).append(e)
        self.held = []
        for trace in sorted(self.traces.keys() | held.keys()):
            folds = self.traces.pop(trace, None)
            if folds is None:
                folds = whole_trace(held.pop(trace), self.trace_runs, self.entity_runs)
            core, judged = folds.finish()
            count(self.counts, folds, judged)
            yield core, judged

    def finish(
        self, judge_held: Callable[[list[Event], list[dict]], list[dict]] | None = None
    ) -> tuple[list[dict], list[dict]]:
        """Every trace's violations (core rules first, then entity and trace monitors) and unknown notes, as
        report rows; the held traces judged whole by the engine, or by `judge_held` when given (tests)."""
        found: list[dict] = []
        unknown: list[dict] = []
        if judge_held is not None and self.held:
            found.extend(judge_held(self.held, unknown))
            self.held = []
        for core, judged in self.judged():
            found.extend(v.to_json() for v in core)
            for name, _, result in judged:
                found.extend(v.to_json() for v in result.violations)
                unknown.extend(unknown_rows(name, result))
        return found, unknown


def judge_whole(events: list[Event], runs: Runs, unknown: list[dict], counts: RuleCounts | None = None) -> list[dict]:
    """Whole traces held in memory, their events in recording order: every trace's violations (core rules
    but TR-002, every monitor of `runs`) as report rows; its unknown notes are added to `unknown`, what its
    rules judged to `counts` (when given)."""
    router = Router(runs, set())  # no trace streams: every one is held and judged whole
    for e in events:
        router.feed(e)
    found, notes = router.finish()
    unknown.extend(notes)
    if counts is not None:
        counts.merge(router.counts)
    return found


def count(counts: RuleCounts, folds: TraceFolds, judged: list[Judged]) -> None:
    """A finished trace's tallies (its core rules' and every monitor result's) added to `counts`."""
    counts.add("core", getattr(folds.core, "tally", None))
    for name, _, result in judged:
        counts.add(name, result.tally)


def result_of(judged: Iterator[tuple[list[Violation], list[Judged]]], first: Sequence[Violation] = ()) -> MonitorResult:
    """One verdict of every trace's results (`Router.judged`), after `first` (TR-002's violations): invalid
    on any violation, unknown if any monitor could not judge a group, else valid."""
    violations = list(first)
    notes: list[str] = []
    for core, results in judged:
        violations.extend(core)
        for _, _, result in results:
            violations.extend(result.violations)
            if result.verdict is Verdict.UNKNOWN:
                notes.extend(result.notes)
    return MonitorResult.of(violations, notes)


def unknown_rows(name: str, result: MonitorResult) -> list[dict]:
    """The report's rows (unknown.jsonl) for a group monitor `name` could not judge: one per note, none for
    a verdict of valid or invalid. The one format of both single-process drivers."""
    return [{"mechanism": name, "note": n} for n in result.notes] if result.verdict is Verdict.UNKNOWN else []


def results_of(folds: TraceFolds, counts: RuleCounts | None = None) -> tuple[list[dict], list[dict]]:
    """A trace's folds finished: its violations (report rows) and unknown notes (mechanism, note); what its
    rules judged is added to `counts` (when given)."""
    core, judged = folds.finish()
    if counts is not None:
        count(counts, folds, judged)
    found = [v.to_json() for v in core]
    unknown: list[dict] = []
    for name, _, result in judged:
        found.extend(v.to_json() for v in result.violations)
        unknown.extend(unknown_rows(name, result))
    return found, unknown
