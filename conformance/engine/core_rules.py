"""The mechanism-independent trace rules as a table of `traces.verdict.Rule` constants (issue 29).

`traces/README.md`, "Mechanism-independent rules" and "Schema": TR-001 (sequence numbers strictly increase in
recording order), TR-002 (event IDs unique), TR-003 (a NET_RECV follows the NET_SEND of its wire message, from
the sender it names), TR-004 (a node's own clock never goes back in sequence order), TR-005 (every row
conforms to the event schema) and TR-006 (a trace begins with TRACE_START at seq 0). TR-008 decides from a
trace's first event whether TR-003 and TR-006 apply (`conformance.engine.rulesets`). Judged by the folds of
`conformance.engine.core_fold` (TR-001, TR-003, TR-004, TR-006), by the engine over a whole corpus (TR-002,
`core_fold.duplicate_id_violations`) and by the reader's quarantine (TR-005). Their violations carry mechanism
`core`.
"""

from __future__ import annotations

from spec.catalogue import require
from traces.verdict import Rule, table

SEQ_STRICTLY_INCREASING = Rule(
    "seq-strictly-increasing",
    "TR-001",
    "always",
    "within one trace, sequence numbers strictly increase in recording order",
)
EVENT_ID_UNIQUE = Rule("event-id-unique", "TR-002", "always", "every event ID appears at most once in a corpus")
RECV_AFTER_SEND = Rule(
    "recv-after-send",
    "TR-003",
    "always",
    "every NET_RECV was recorded as sent (NET_SEND, same wire) earlier in the trace, by the node it names as sender",
)
NODE_CLOCK_MONOTONIC = Rule(
    "node-clock-monotonic",
    "TR-004",
    "always",
    "within one trace, the timestamps one node records never decrease in sequence order",
)
SCHEMA_CONFORMANCE = Rule(
    "schema-conformance",
    "TR-005",
    "always",
    "every row conforms to the event schema; a row that does not is quarantined with its place and reason",
)
TRACE_START = Rule("trace-start", "TR-006", "always", "a trace begins with one TRACE_START event at sequence number 0")
RULES: dict[str, Rule] = table(
    __name__,
    "core",
    [SEQ_STRICTLY_INCREASING, EVENT_ID_UNIQUE, RECV_AFTER_SEND, NODE_CLOCK_MONOTONIC, SCHEMA_CONFORMANCE, TRACE_START],
)
SIMULATED_ONLY = (RECV_AFTER_SEND, TRACE_START)  # not applied to an imported log (TR-008, `rulesets`)
require(*(r.requirement for r in RULES.values()), "TR-008")
