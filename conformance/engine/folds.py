"""Starting a monitor's fold for one group, and the folds of one group for every monitor of a scope.

Every registered mechanism monitor folds (`traces.verdict.Monitor.start`). The two monitors that judge
imported or cross-server evidence as a whole (`model.msgtrk` for message tracking logs, whose rows
are paired across servers by identifiers in any order, and `model.skew`, a constraint system
over every ordering instance of a trace) keep a trace's own events until its end: `BufferedFold` says so
by name (`start_fold` gives one to a monitor without `start`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`folds.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from conformance.engine.core_fold import restored
from model.registry import vocabulary
from traces.event import Event
from traces.schema import CONTEXT_START, CONTEXT_SUFFIX
from traces.verdict import Fold, Monitor, MonitorResult, Tally


class BufferedFold:
    """A monitor without a fold of its own: the group's events are kept and judged by `check` at the end."""

    __slots__ = ("context", "events", "monitor")

    def __init__(self, monitor: Monitor, context: Sequence[Event]) -> None:
        self.monitor, self.context, self.events = monitor, context, []  # the context list may still grow

    def feed(self, e: Event) -> None:
        self.events.append(e)

    def finish(self) -> MonitorResult:
        return self.monitor.check(self.events, self.context)


class _Strange:
    """Counts the events of a kind not in their mechanism's vocabulary (`GroupFolds.strange`: [count, first
    event ID]), fed as a fold is."""

    __slots__ = ("seen",)

    def __init__(self, seen: list) -> None:
        self.seen = seen

    def feed(self, e: Event) -> None:
        self.seen[0] += 1


def start_fold(monitor: Monitor, context: Sequence[Event]) -> Fold:
    start = getattr(monitor, "start", None)
    return BufferedFold(monitor, context) if start is None else start(context)


def fold_finish_copy(fold: Any) -> Any | None:
    """A fold's own `finish_copy()` (a copy whose `finish()` gives what the fold's would, the fold left as it is), or
    None when it has none or declines (the caller then copies the whole tree, `conformance.explore.state`)."""
    finish_copy = getattr(fold, "finish_copy", None)
    return finish_copy() if finish_copy is not None else None


class GroupFolds:
    """One group (a trace, or an entity of a trace) being judged by several monitors at once.

    A trace-scope monitor gives a result only for a trace holding events of its mechanism (it is fed the
    whole trace, context and faults included); an entity-scope group goes only to monitors of its mechanism.
    A monitor may say which mechanisms' events its fold reads (`reads`, a set; none: every event): the others
    are not fed to it, but for context events (`traces.schema.is_context_kind`), which every fold is fed. The
    folds to feed are listed once per mechanism and kind met (`routes`, issue 32: no per-event test of each
    fold, of the context or of the vocabulary).

    An event of a monitor's mechanism whose kind is not in that mechanism's vocabulary
    (`model.registry.vocabulary`: an older trace's `SERVER_DIAL`, now `AM_CONFIG`, say) is judged by no rule:
    the group notes each such kind once, with its count and first event, as one more result of that
    monitor whose verdict is unknown, so it is counted unjudgeable in `unknown.jsonl`, never skipped in
    silence, whatever the monitor's own verdict.

    A `cdef class` in the compiled build (`folds.pxd`; issue 32, session 17): its fields are C struct members. So it
    is pickled as its class and fields (`__reduce__`, through `core_fold.restored`), which moves saved folds between
    the compiled and pure paths (a pickle of the plain slotted class it was loads too), and copied by `finish_copy`,
    never by `object.__new__` and `setattr` of its slots (tests/engine/test_fast_folds.py).
    """

    __fields__ = ("all", "first", "folds", "reads", "routes", "scope", "seen", "strange", "vocab")
    __slots__ = __fields__

    def __init__(self, scope: str, runs: Sequence[tuple[str, Monitor]], first: Event, context: Sequence[Event]) -> None:
        self.scope, self.first = scope, first
        self.folds = [(name, monitor.mechanism, start_fold(monitor, context)) for name, monitor in runs]
        self.reads = [getattr(monitor, "reads", None) for _, monitor in runs]
        self.all = [fold for _, _, fold in self.folds]  # the folds a context event goes to
        # mechanism -> kind -> what its events go to: the folds, and a `_Strange` counter for a kind not in the
        # mechanism's vocabulary (issue 32: a table built as kinds are met, no per-event test of each fold)
        self.routes: dict[str, dict[str, list]] = {}
        self.seen: set[str] = set()  # the mechanisms of the events fed
        self.vocab = {m: v for _, m, _ in self.folds if (v := vocabulary(m)) is not None}
        self.strange: dict[tuple[str, str], list] = {}  # (mechanism, kind) -> [count, first event ID]

    @cython.locals(e=Event, routes=dict, kinds=dict)  # the dicts' `get` a C call (session 16)
    def feed(self, e: Event) -> None:
        routes = self.routes
        kinds = routes.get(e.mechanism)
        if kinds is None:
            kinds = routes[e.mechanism] = {}
            self.seen.add(e.mechanism)
        folds = kinds.get(e.kind)
        if folds is None:
            folds = kinds[e.kind] = self.route(e)
        for fold in folds:
            fold.feed(e)

    def route(self, e: Event) -> list:
        """What the events of `e`'s mechanism and kind go to: every fold for a context event
        (`traces.schema.is_context_kind`), else the folds that read that mechanism (none may: an empty
        list); and a `_Strange` counter when the kind is not in the mechanism's vocabulary."""
        mech, kind = e.mechanism, e.kind
        if kind.endswith(CONTEXT_SUFFIX) or kind == CONTEXT_START:
            folds = list(self.all)
        else:
            folds = [f for f, r in zip(self.all, self.reads, strict=True) if r is None or mech in r]
        vocab = self.vocab.get(mech)
        if vocab is not None and kind not in vocab:
            folds.append(_Strange(self.strange.setdefault((mech, kind), [0, e.event_id])))
        return folds

    def _values(self) -> tuple:
        return (self.all, self.first, self.folds, self.reads, self.routes, self.scope, self.seen, self.strange,
                self.vocab)  # fmt: skip

    def __reduce__(self) -> tuple:
        return restored, (type(self), self._values())

    def finish_copy(self) -> GroupFolds | None:
        """A copy whose `finish()` gives what this group's would, this group left as it is (the explorer's edge
        verdict, `conformance.explore.edges`): its folds each copied by their own `finish_copy` (None when one has
        none: the caller copies everything); every other field, which `finish` only reads (scope, first, seen,
        strange), shared."""
        folds = []
        for name, mechanism, fold in self.folds:
            copied = fold_finish_copy(fold)
            if copied is None:
                return None
            folds.append((name, mechanism, copied))
        new = restored(type(self), self._values())
        new.folds = folds
        return new

    def finish(self) -> list[tuple[str, Event, MonitorResult]]:
        out = []
        for name, mechanism, fold in self.folds:
            if self.scope != "trace" or mechanism in self.seen:
                out.append((name, self.first, fold.finish()))
                notes = self.unknown_kinds(mechanism)
                if notes:
                    out.append((name, self.first, MonitorResult.of((), notes, Tally())))  # judges nothing
        return out

    def unknown_kinds(self, mechanism: str) -> list[str]:
        where = self.first.trace_id if self.scope == "trace" else f"{self.first.trace_id}/{self.first.entity}"
        return [
            f"{where}: {count} {mech} event(s) of kind {kind!r}, which is not in the {mech} vocabulary (first: "
            f"{first}); not judged: record it under a current kind (traces/README.md)"
            for (mech, kind), (count, first) in sorted(self.strange.items())
            if mech == mechanism
        ]
