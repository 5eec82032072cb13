"""The events a report card shows, and the model's state after each, replayed from the trace files.

The monitors are folds (`traces.verdict`: `Monitor.start(context)`, `Fold.feed`, `Fold.finish`). For each
trace holding a card, the trace is replayed through the card's mechanism's monitor exactly as the engines
group it (`conformance.engine.stream.groups_of`: the whole trace for a trace-scope monitor, the entity's events of
that mechanism for an entity-scope one; the trace's context events at start, `conformance.engine.folds`),
and after each event shown on a card the fold's `describe(entity)` is kept: a compact, JSON-able summary
(`model/{sr,am,pf}/monitor.py`, `model.msgtrk.monitor.AuditFold`). Nothing is computed for events no
card shows, the replay stops after the last shown event, and it is never judged (`finish` is not called).
Only the traces that hold a card are kept in memory; a trace may span several files.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from conformance.audit.report_data import Card, shown_events
from conformance.check import trace_contexts
from conformance.engine.folds import start_fold
from conformance.engine.stream import groups_of
from model.msgtrk.events import IMPORT_KIND
from model.registry import mechanisms, monitor_factories
from traces.io import expand_paths, read_events
from traces.schema import Event
from traces.verdict import Monitor

FAULTS = frozenset({"CRASH", "RESTART", "PARTITION", "HEAL"})
MAX_FAULTS = 12
MAX_REPLAY_EVENTS = 2_000_000  # a trace longer than this is not replayed for states (the page says so)


def monitor_for(mechanism: str) -> Monitor | None:
    """The monitor that judges events of `mechanism` (the trace's `mechanism` value); None for `core`."""
    for spec in mechanisms().values():
        if spec.records == mechanism and spec.monitor is not None:
            return spec.monitor()
    for name, factory in monitor_factories():
        if name == mechanism:
            return factory()
    return None


def describe(fold: Any, entity: str) -> dict[str, Any]:
    summary = getattr(fold, "describe", None)
    if summary is None:
        return {"state": f"the {type(fold).__name__} fold gives no summary of its state"}
    try:
        return summary(entity)
    except Exception as exc:  # a summary that cannot be read is shown as such, never hidden
        return {"state": f"unreadable ({type(exc).__name__}: {exc})"}


def gather(cards: list[Card], paths: Iterable[str]) -> dict[str, Any]:
    """For the cards: the entity's events (`rows`, by card key), the trace's first timestamp (`t0`, by trace),
    the model's state after each shown event (`states`, by card key then event ID) and notes on what could
    not be replayed."""
    wanted = {c.key for c in cards}
    traces = {c.trace_id for c in cards}
    kept: dict[str, list[Event]] = defaultdict(list)
    imports = []  # every import's IMPORT_START (the chain of custody, `conformance.audit.custody`): one pass
    for path in expand_paths(list(paths)):
        for e in read_events(path).events:
            if e.trace_id in traces:
                kept[e.trace_id].append(e)
            if e.kind == IMPORT_KIND:
                imports.append({"trace_id": e.trace_id, "attrs": dict(e.attrs)})
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    t0: dict[str, int] = {}
    for trace, events in kept.items():
        events.sort(key=lambda e: e.seq)
        t0[trace] = events[0].ts_ms
        for e in events:
            if f"{trace}\x1f{e.entity}" in wanted:
                rows[f"{trace}\x1f{e.entity}"].append(e.to_row())
    shown: dict[str, list[dict[str, Any]]] = {}
    for c in cards:
        involved = {x for _, v in c.all() for x in v.get("event_ids", [])}
        extra = {r["event_id"]: r for _, v in c.all() for r in v.get("events", [])}
        have = {r["event_id"]: r for r in rows.get(c.key, [])}
        shown[c.key] = _with_faults(shown_events(list({**extra, **have}.values()), involved), kept.get(c.trace_id, []))
    states, notes = _replay(cards, kept, shown)
    return {"rows": shown, "t0": t0, "states": states, "notes": notes, "complete": set(rows), "imports": imports}


def _with_faults(rows: list[dict[str, Any]], events: list[Event]) -> list[dict[str, Any]]:
    """The card's events plus the recorded faults while they happen (at most `MAX_FAULTS`): the kernel's
    CRASH and RESTART of its servers, and every PARTITION and HEAL: a monitor reads them, so they are shown."""
    if not rows:
        return rows
    nodes = {r["node"] for r in rows}
    lo, hi = min(r["ts_ms"] for r in rows), max(r["ts_ms"] for r in rows)
    have = {r["event_id"] for r in rows}
    faults = [
        e.to_row()
        for e in events
        if e.mechanism == "core" and e.kind in FAULTS and lo <= e.ts_ms <= hi and e.event_id not in have
        and (e.node in nodes or e.kind in ("PARTITION", "HEAL"))
    ][:MAX_FAULTS]  # fmt: skip
    return sorted(rows + faults, key=lambda r: (r["seq"], r["event_id"]))


def _replay(
    cards: list[Card], kept: dict[str, list[Event]], shown: dict[str, list[dict[str, Any]]]
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    states: dict[str, dict[str, Any]] = defaultdict(dict)
    notes: list[str] = []
    plan: dict[tuple[str, str], dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for c in cards:  # (trace, mechanism) -> event ID -> [(card key, entity)]
        mech = c.head[1].get("mechanism", "core")
        for r in shown[c.key]:
            plan[(c.trace_id, mech)][r["event_id"]].append((c.key, c.entity))
    for (trace, mech), at in sorted(plan.items()):
        events = kept.get(trace)
        monitor = monitor_for(mech)
        if monitor is None or not events:
            why = "the core rules keep no model state" if monitor is None else "the trace file is not at hand"
            notes.append(f"{trace} ({mech}): no model state shown: {why}")
            continue
        if len(events) > MAX_REPLAY_EVENTS:
            notes.append(f"{trace}: {len(events)} events, more than {MAX_REPLAY_EVENTS}: not replayed for states")
            continue
        context = trace_contexts(events).get(trace, [])
        if monitor.scope == "trace":
            groups = [(None, events)]
        else:
            entities = {entity for targets in at.values() for _, entity in targets}
            split = groups_of(monitor, events)
            groups = [(n, split.get((trace, mech, n), [])) for n in sorted(entities)]
        for entity, group in groups:
            fold, left = start_fold(monitor, context), sum(1 for e in group if e.event_id in at)
            for e in group:
                if not left:
                    break  # no shown event further on: the rest of the trace is not replayed
                try:
                    fold.feed(e)
                except Exception as exc:  # said on the page, never a verdict: the check's own run judged it
                    notes.append(f"{trace} ({mech}): the replay for states stopped at {e.event_id}: {exc!r}")
                    break
                left -= e.event_id in at
                for key, card_entity in at.get(e.event_id, ()):
                    if entity is None or entity == card_entity:
                        states[key][e.event_id] = describe(fold, card_entity)
    return states, notes
