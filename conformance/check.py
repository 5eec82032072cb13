"""The trace checker's list-based API: a corpus held in memory, judged by the engine (`conformance.engine`).

The harness, the shrinker, the suites, the samples, the audit and the tests judge a list of events in
recording order (file order, which is what TR-001 is about). They go through the same engine as
`haconform check`: `verdict` feeds the events to a `conformance.engine.stream.Router` (core rules TR-001,
TR-003, TR-004, TR-006 and every registered monitor, `model.registry.monitor_runs`; each trace judged
whole, as the drivers judge a trace out of seq order) and adds TR-002 over the whole list
(`spec/requirements/tr.toml`). The grouping helpers (`group_key` and `groups_of`, from
`conformance.engine.stream`; `group_for`, `trace_contexts`) say how the engine splits events, for tests and
tools that look at one group.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from conformance.engine.core_fold import CORE_RULES, duplicate_id_violations  # noqa: F401 (CORE_RULES: re-exported)
from conformance.engine.stream import (  # noqa: F401 (OrderBroken, group_key: re-exported)
    OrderBroken,
    Router,
    group_key,
    groups_of,
    result_of,
)
from model.registry import monitor_runs
from traces.schema import Event, is_context_kind
from traces.verdict import Monitor, MonitorResult, Violation


def _router(events: Sequence[Event], runs: Sequence[tuple[str, Monitor]]) -> Router:
    """The events fed to a Router that holds every trace (they are in memory anyway): `Router.judged` then
    judges one trace at a time, whole (`whole_trace`), so only one trace's folds are alive at once (the
    streaming path keeps every trace's folds until the end: measured 10-15 % more CPU here, in the cyclic
    collector). A trace recorded in seq order gets the streamed verdict (tests/engine/test_fold_stream.py)."""
    router = Router(runs, set())
    for e in events:
        router.feed(e)
    return router


def _runs(monitors: Sequence[Monitor] | None) -> list[tuple[str, Monitor]]:
    return monitor_runs() if monitors is None else [(m.mechanism, m) for m in monitors]


def verdict(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> MonitorResult:
    """Overall verdict of core rules and every monitor (default: all registered) over events in recording
    order: invalid on any violation, unknown if any monitor could not judge, else valid. Violations: TR-002
    first, then trace by trace its core rules, entity monitors and trace monitors."""
    return result_of(_router(events, _runs(monitors)).judged(), duplicate_id_violations(events))


def check_events(events: Sequence[Event], monitors: Sequence[Monitor] | None = None) -> list[Violation]:
    """The violations of `verdict`."""
    return list(verdict(events, monitors).violations)


def core_violations(events: Sequence[Event]) -> list[Violation]:
    """The mechanism-independent rules (TR-001..TR-004, TR-006) over a corpus given in recording order."""
    return list(verdict(events, []).violations)


def run_monitor(monitor: Monitor, events: Sequence[Event]) -> list[MonitorResult]:
    """One monitor's result for every group it judges, in group-key order (trace, then mechanism and
    entity), each group given its trace's context events. An entity-scope monitor is fed only what it reads:
    its mechanism's events and the context events (the core rules' results are not asked for here)."""
    if monitor.scope == "entity":
        events = [e for e in events if e.mechanism == monitor.mechanism or is_context_kind(e.kind)]
    return [result for _, judged in _router(events, [("", monitor)]).judged() for _, _, result in judged]


def group_for(monitor: Monitor, events: Sequence[Event]) -> list[list[Event]]:
    """The groups the engine forms for `monitor`, each in seq order: by trace, and by (trace, mechanism,
    entity) for entity scope (the engine's `TraceFolds` keeps one fold per such group)."""
    groups = groups_of(monitor, events)
    return [sorted(groups[k], key=lambda e: e.seq) for k in sorted(groups)]


def trace_contexts(events: Iterable[Event]) -> dict[str, list[Event]]:
    """Each trace's context events (TRACE_START and `*_CONFIG`), in sequence order."""
    found: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if is_context_kind(e.kind):
            found[e.trace_id].append(e)
    return {t: sorted(evs, key=lambda e: e.seq) for t, evs in found.items()}
