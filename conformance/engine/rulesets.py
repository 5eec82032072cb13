"""Which rule sets apply to a trace, decided from its first event (requirement TR-008).

A trace whose first event (in recording order) is the `IMPORT_START` of mechanism `msgtrk` is an imported
log (`haconform import msgtrk`): the rules that only make sense for simulated traces (TR-003 NET_SEND/NET_RECV
pairing, TR-006 TRACE_START) do not apply to it; every other trace is held to every core rule. The audit
monitor (`model.msgtrk.monitor`) flags a trace holding imported rows that does not begin with the marker,
so the decision cannot be dodged. Every checker calls this module through the engine's core rules
(`conformance.engine.core_fold`: `TraceRulesFold` decides from the first event it is fed, `HeldRulesFold` from
the first recorded event of a trace held whole), which both engines and `conformance.check` run.
"""

from __future__ import annotations

from typing import Any

from conformance.engine.core_rules import SIMULATED_ONLY as _SIMULATED_RULES
from model.msgtrk.events import IMPORT_KIND, MECHANISM
from spec.catalogue import require
from traces.schema import Event

require("TR-003", "TR-006", "TR-008")

IMPORTED_MECHANISM = MECHANISM
IMPORTED_KIND = IMPORT_KIND
SIMULATED_ONLY = frozenset(r.name for r in _SIMULATED_RULES)  # TR-003 recv-after-send, TR-006 trace-start
RULE_SETS = {
    "core": "TR-001 seq-strictly-increasing, TR-002 event-id-unique, TR-004 node-clock-monotonic, "
    "TR-005 schema-conformance: every trace",
    "simulated": "TR-003 recv-after-send, TR-006 trace-start: traces that do not begin with IMPORT_START",
    "msgtrk": "the imported-log monitor (TR-008, SR-I26..SR-I29): traces that begin with IMPORT_START",
}


def is_imported(first: Event) -> bool:
    """Whether a trace whose first recorded event is `first` is an imported log."""
    return first.mechanism == IMPORTED_MECHANISM and first.kind == IMPORTED_KIND


def applies(rule: str, first: Event) -> bool:
    """Whether core rule `rule` applies to the trace that begins with `first`."""
    return not (rule in SIMULATED_ONLY and is_imported(first))


def summary_rule_sets(events_by_mechanism: dict[str, int], monitors: list[str]) -> dict[str, Any]:
    """What the check summary says about the rule sets that applied (written by `haconform check`)."""
    imported = events_by_mechanism.get(IMPORTED_MECHANISM, 0) > 0
    simulated = any(n for m, n in events_by_mechanism.items() if m != IMPORTED_MECHANISM)
    applied = ["core"] + (["simulated"] if simulated else []) + (["msgtrk"] if imported else [])
    return {
        "applied": applied,
        "descriptions": {k: RULE_SETS[k] for k in applied},
        "not_applied": sorted(set(RULE_SETS) - set(applied)),
        "cross_server_orders_judged": "skew" in monitors,
    }
