"""The kernel's own event kinds (mechanism `core`) as one table: the trace's start, the network and the faults
the simulated world (or the conformance harness) records, with the recorder of each kind as a checked role,
each attribute's type, format and values, and the ordering rules as checked predicates (issue 30). Rendered
into `conformance/PROTOCOL.md` and `traces/README.md` by `haconform protocol-doc` (issue 18); the emitters are
`model/kernel/network.py` and `model/kernel/sim.py`. It also builds the configuration rows of the mechanisms' tables
(`config_fields`: each field with its catalogue parameter, requirement ID and default).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from spec.catalogue import catalogue
from traces.contract import Hit, before, custom, json_object, named_by, pattern, the_entity
from traces.schema import Event
from traces.vocabulary import ConfigField, Role, Vocabulary, attr, kind

S, INT, LS, LI = "string", "integer", "list of strings", "list of integers"
GROUP = pattern("`a,b,...` (servers joined by commas)", r"[^,\s]+(,[^,\s]+)*")
DROP_REASONS = ("lost", "sender down", "receiver down", "partitioned", "no route")
NET = (
    attr("wire", INT, "wire message ID (unique per trace)"),
    attr("src", S, "the sender"),
    attr("dst", S, "the receiver"),
    attr("msg", S, "the message type carried (the payload's kind, e.g. `PING`; pf: the replication message type)"),
)
WIRE_ENTITY = "`<src>-><dst>` (the workload `net`; a mechanism's payload: its entity)"
TRACE = Role(
    "`sim` or `harness` (entity: the trace ID)", lambda e, h: e.node in ("sim", "harness") and e.entity == e.trace_id
)
NETWORK = Role(
    "`sim` or `harness` (entity `network`)", lambda e, h: e.node in ("sim", "harness") and e.entity == "network"
)


def _trace_start_first(events: list[Event]) -> Iterator[Hit]:
    for e in events:
        if (e.kind == "TRACE_START") != (e.seq == events[0].seq):
            yield e.kind, "order", "TRACE_START is the first event and only the first (TR-006)", e.seq


def _crashed_node_silent(events: list[Event]) -> Iterator[Hit]:
    """A crashed node records nothing until its RESTART (its volatile state is lost); am excepted: its events
    are the DAG's view and keep the server concerned in `node` (a crashed server's COPY_STATE `ServiceDown`)."""
    down: set[str] = set()
    for e in events:
        if e.kind == "CRASH" and e.mechanism == "core":
            down.add(e.node)
        elif e.kind == "RESTART" and e.mechanism == "core":
            down.discard(e.node)
        elif e.node in down and e.mechanism != "am" and e.kind != "NET_DROP":
            yield e.kind, "node", f"recorded by {e.node}, which crashed and has not restarted", e.seq


VOCABULARY = Vocabulary(
    "core",
    "the trace, the network and the faults",
    (
        kind(
            "TRACE_START",
            TRACE,
            "the trace ID",
            "seq 0 of every trace (TR-006)",
            attr("seed", INT, "the run's seed"),
            attr("model", S, "`sr`, `am`, `pf`, `core` (the kernel's workload `net`) or the system's name"),
            attr(
                "config",
                S,
                "canonical JSON of the run's options (sr settings under `sr`, am BCSS options under `bcss`: the "
                "configuration fields of each mechanism below)",
                fmt=json_object("JSON object"),
            ),
        ),
        kind("NET_SEND", named_by("src", "the sender (`src`)"), WIRE_ENTITY, "a message put on the wire", *NET),
        kind(
            "NET_RECV",
            named_by("dst", "the receiver (`dst`)"),
            WIRE_ENTITY,
            "a message delivered (TR-003: after its NET_SEND)",
            *NET,
        ),
        kind(
            "NET_DROP",
            named_by("src", "the sender (`src`)"),
            WIRE_ENTITY,
            "a message lost",
            *NET,
            attr("reason", S, "why it was lost", values=DROP_REASONS),
        ),
        kind("CRASH", the_entity("the node (entity: the node)"), "the node", "the node stops (volatile state lost)"),
        kind(
            "RESTART",
            the_entity("the node (entity: the node)"),
            "the node",
            "the node starts again",
            attr(
                "storage", S, "`same` (its database survived) or `new` (a new, empty database)", values=("same", "new")
            ),
            attr(
                "storage_epoch",
                INT,
                "how many times its storage was replaced (the simulators write it; the conformance harness does not)",
                optional=True,
            ),
        ),
        kind(
            "PARTITION",
            NETWORK,
            "`network`",
            "the network splits: servers in different groups cannot reach each other",
            attr(
                "groups",
                LS,
                "the isolated groups, each a list of servers; every server not listed forms one further group "
                "with the others not listed (`model/kernel/network.py`)",
                fmt=GROUP,
            ),
        ),
        kind(
            "HEAL",
            NETWORK,
            "`network`",
            "every partition heals; a `groups` attribute may restate the whole network",
            attr("groups", LS, "the groups after healing", optional=True, fmt=GROUP),
        ),
        kind(
            "NET_CONFIG",
            NETWORK,
            "`network`",
            "the network's behaviour from now on (context)",
            attr("latency_ms", LI, "[lo, hi] delivery latency (ms)"),
            attr("loss_ppm", INT, "loss, parts per million"),
            attr("duplicate_ppm", INT, "duplication, parts per million"),
        ),
    ),
    ordering=(
        custom("TRACE_START first (seq 0), and only there (TR-006)", _trace_start_first),
        before(
            "NET_RECV after its NET_SEND (TR-003), at any distance",
            frozenset({"NET_SEND"}),
            frozenset({"NET_RECV"}),
            lambda e: (e.mechanism, e.attrs.get("wire")),
            lambda e: (e.mechanism, e.attrs.get("wire")),
            instant=False,
            required=True,
        ),
        custom(
            "a fault before the events it causes: a crashed node records nothing from its CRASH until its RESTART, "
            "which so comes before that node's events at its instant (a drop of its message may still be recorded; am "
            "excepted: its events are the DAG's view and name the server concerned even when it is down)",
            _crashed_node_silent,
            lenient=False,
        ),
    ),
)


# ---- the configuration rows of the mechanisms' tables (issue 30) ----------------------------------------


def shown(v: Any) -> str:
    """A default as the docs show it: JSON-like, in backticks."""
    if isinstance(v, tuple):
        v = [list(p) if isinstance(p, tuple) else p for p in v]
    return f"`{json.dumps(v, separators=(',', ':')).strip(chr(34))}`"


def config_fields(where: str, instance: object, table: dict[str, tuple[str, str, str]]) -> tuple[ConfigField, ...]:
    """One `ConfigField` per entry of `table` (field -> (type, catalogue parameter name or "", meaning)): the
    parameter's requirement ID is looked up in the catalogue (an unknown name fails at import), the default is
    the field's value on `instance`."""
    out = []
    for name, (type_, param, meaning) in table.items():
        label = f"{param} ({catalogue().param_requirement(param).id}): " if param else ""
        out.append(ConfigField(name, where, type_, label + meaning, shown(getattr(instance, name))))
    return tuple(out)
