"""The kernel's own event kinds (mechanism `core`) as one table: the trace's start, the network and the faults
the simulated world (or the conformance harness) records. Rendered into `conformance/PROTOCOL.md` and
`traces/README.md` by `haconform protocol-doc` (issue 18).
"""

from __future__ import annotations

from traces.vocabulary import Vocabulary, attr, kind

S, INT, LS, LI = "string", "integer", "list of strings", "list of integers"
NET = (
    attr("wire", INT, "wire message ID"),
    attr("src", S, "the sender"),
    attr("dst", S, "the receiver"),
    attr("msg", S, "the message type or ID carried"),
)

VOCABULARY = Vocabulary(
    "core",
    "the trace, the network and the faults",
    (
        kind(
            "TRACE_START",
            "`sim`",
            "the trace ID",
            "seq 0 of every trace (TR-006)",
            attr("seed", INT, "the run's seed"),
            attr("model", S, "`sr`, `am`, `pf`, `net` or the system's name"),
            attr(
                "config",
                S,
                "canonical JSON of the run's options (sr settings under `sr`, am BCSS options under `bcss`)",
            ),
        ),
        kind(
            "NET_SEND", "sender", "the payload's entity", "a message put on the wire (mechanism: the payload's)", *NET
        ),
        kind("NET_RECV", "receiver", "the payload's entity", "a message delivered (TR-003: after its NET_SEND)", *NET),
        kind(
            "NET_DROP",
            "sender",
            "the payload's entity",
            "a message lost",
            *NET,
            attr("reason", S, "`lost`, `sender down`, `receiver down`, `partitioned`, `no route`"),
        ),
        kind("CRASH", "the node", "the node", "the node stops (its volatile state is lost)"),
        kind(
            "RESTART",
            "the node",
            "the node",
            "the node starts again",
            attr("storage", S, "`same` (its database survived) or `new` (a new, empty database)"),
            attr("storage_epoch", INT, "how many times its storage was replaced"),
        ),
        kind(
            "PARTITION",
            "`sim`",
            "the trace ID",
            "the network splits",
            attr("groups", LS, "the node groups that reach each other, each `a+b`"),
        ),
        kind(
            "HEAL",
            "`sim`",
            "the trace ID",
            "every partition heals; a `groups` attribute may restate the whole network",
            attr("groups", LS, "the groups after healing", optional=True),
        ),
        kind(
            "NET_CONFIG",
            "`sim`",
            "the trace ID",
            "the network's behaviour from now on (context)",
            attr("latency_ms", LI, "[lo, hi] delivery latency"),
            attr("loss_ppm", INT, "loss, parts per million"),
            attr("duplicate_ppm", INT, "duplication, parts per million"),
        ),
    ),
    ordering=(
        "TRACE_START first (seq 0); a fault (CRASH, RESTART, PARTITION, HEAL) before the events it causes at the "
        "same instant; NET_RECV after its NET_SEND (TR-003)",
    ),
)
