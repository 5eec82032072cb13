"""The imported-log monitor's orders across two servers' clocks (`model.msgtrk.monitor`): a shadow received before
the message's next hop (SR-001) and discarded after it (SR-052), judged on one clock directly and across two
clocks only under a clock-skew bound (`--skew`), through the skew check (`spec.claims.skew`), one joint system
per trace. Each order on one clock, or decided by the bound (consistent, violated, jointly inconsistent), is a
judged instance of its rule; an ambiguous one, or any without a bound, is skipped with the reason.

Seed 000; interpretation SR-I27; issue 6 (trace ordering under clock skew).
"""

from __future__ import annotations

from typing import Any

from model.msgtrk.events import MECHANISM
from model.msgtrk.judging import NO_SKEW, Judge, where
from traces.schema import Event
from traces.verdict import Rule, Violation


def cross_server(j: Judge, skew_ms: int | None) -> None:
    """Cross-server orders through the skew check (`spec.claims.skew`): one joint system for the trace. An
    order on one clock, or one the skew bound decides (consistent, violated, inconsistent), is judged; an
    ambiguous one, or any cross-server order without a bound, is skipped with the reason."""
    if not j.cross:
        return
    pairs = [c for c in j.cross if c[1].node != c[2].node]
    same = [c for c in j.cross if c[1].node == c[2].node]
    for rule, b, a, entity in same:
        j.tally.judge(rule)
        if a.ts_ms < b.ts_ms:
            j.bad(
                rule,
                entity,
                [b, a],
                f"{a.kind} is recorded {b.ts_ms - a.ts_ms} ms before {b.kind} on one clock",
                before_ms=b.ts_ms,
                after_ms=a.ts_ms,
                gap_ms=a.ts_ms - b.ts_ms,
            )
    if not pairs:
        return
    if skew_ms is None:
        for rule, _, _, _ in pairs:
            j.tally.skip(rule, NO_SKEW)
        reversed_ = sum(1 for _, b, a, _ in pairs if a.ts_ms < b.ts_ms)
        j.notes.append(
            f"{j.trace}: {len(pairs)} cross-server order(s) (shadow made before the next hop, discard "
            f"after it; {reversed_} recorded in reverse) not judged: give a clock-skew bound with --skew"
        )
        return
    from spec.claims.skew import classify, resolve  # z3: loaded only when a skew bound is given

    orderings, rows = _skew_rows(pairs)
    report = resolve(classify(rows, skew_ms, orderings), skew_ms)
    entity_of = {a.event_id: ent for _, _, a, ent in pairs}
    for inst in report.instances:
        entity = entity_of.get(inst.after_event, "")
        inst.tally(j.tally)  # every ordering of `_skew_rows` carries its rule: judged, or skipped if ambiguous
        if inst.verdict in ("violation", "inconsistent"):
            name = inst.rule if inst.verdict == "violation" else f"{inst.rule}.skew_inconsistent"
            evs = [
                e
                for _, b, a, _ in pairs
                for e in (b, a)
                if (b.event_id, a.event_id) == (inst.before_event, inst.after_event)
            ]
            lines = ", ".join(where(e) for e in evs[:2])
            j.violations.append(
                Violation(
                    name,
                    inst.requirement,
                    j.trace,
                    entity,
                    tuple(x for x in (inst.before_event, inst.after_event) if x),
                    f"{inst.explanation} (log lines {lines})",
                    MECHANISM,
                    {"gap_ms": inst.gap_ms, "skew_ms": skew_ms, "verdict": inst.verdict},
                )
            )
        elif inst.verdict == "ambiguous":
            j.notes.append(f"{entity}: {inst.explanation} (skew {skew_ms} ms)")


def _skew_rows(pairs: list[tuple[Rule, Event, Event, str]]) -> tuple[list[Any], list[tuple]]:
    from spec.claims.skew import ordering  # z3: as in cross_server

    orderings: dict[tuple[str, str, str], Any] = {}
    rows: list[tuple] = []
    for i, (rule, b, a, entity) in enumerate(pairs):
        key = (rule.name, b.kind, a.kind)  # an ordering judges only its own pairs: a discard after a DELIVER
        if key not in orderings:  # is not one after a SEND whose SEND is missing (the `before` attribute)
            where = (("rule", rule.name), ("before", b.kind))
            orderings[key] = ordering(rule, b.kind, a.kind, "pair", where=where)
        rows.append((b.event_id, b.node, b.ts_ms, b.kind, entity, {"pair": i, "rule": rule.name, "before": b.kind}))
        rows.append((a.event_id, a.node, a.ts_ms, a.kind, entity, {"pair": i, "rule": rule.name, "before": b.kind}))
    return list(orderings.values()), rows
