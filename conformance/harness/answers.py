"""Random well-typed answers of a system under test, for testing the harness itself (issue 36).

Hypothesis strategies derived from the protocol's JSON schemas (`schemas/*.json`): `from_schema` turns a schema
fragment (types, properties, items, anyOf, `$ref`, minimum, minLength) into a strategy; `result` gives one
operation's result; `event` a well-typed event (a kind of the mechanism's vocabulary, `model/*/vocabulary.py`,
its attributes typed as the vocabulary types them, a time at or after the request's `now_ms`).
`ScriptedClient` stands in for `process.ProcessClient`: no child process, each request answered from a drawn
script (per operation, a list of replies used in turn), every reply checked against the schema as the real
client checks it. `scripted_factory` builds the mechanism's adapter system (`systems.SYSTEMS`) over one, so that
`haconform conform` runs its whole path (search, minimisation, coverage floor) on whatever a system might answer.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from conformance.harness.process import check_event_times, schema, validate_reply
from conformance.harness.systems import SYSTEMS

NAMES = {  # the names a system of each mechanism would use (the setups' servers, stores, databases, folders)
    "sr": ("MBX01", "MBX02", "MBX03", "HUB01", "m1", "m2", "outside"),
    "am": ("MBX1", "MBX2", "MBX3", "MBX4", "MBX5", "MBXS1", "DB1", "DB2", "DB3", "SDB1", "DAG1"),
    "pf": ("A", "B", "C", "1-1", "1-2", "1-3", "L-A-4", "A:1-3"),
}


def _names(mechanism: str) -> st.SearchStrategy[str]:
    """Mostly names of the mechanism's setups; sometimes any short text."""
    return st.sampled_from(NAMES.get(mechanism, ("x",))) | st.text(min_size=1, max_size=6)


def from_schema(node: Mapping[str, Any], defs: Mapping[str, Any], names: st.SearchStrategy[str]) -> Any:
    """A strategy for the JSON values `node` accepts (the subset of JSON Schema the protocol's schemas use);
    strings are drawn from `names` (stores, servers, folders a system would use), so answers can mean something."""
    if "$ref" in node:
        return from_schema(defs[node["$ref"].rsplit("/", 1)[-1]], defs, names)
    if "anyOf" in node:
        return st.one_of([from_schema(n, defs, names) for n in node["anyOf"]])
    if "enum" in node:
        return st.sampled_from(list(node["enum"]))
    kinds = node.get("type")
    if isinstance(kinds, list):
        return st.one_of([from_schema({**node, "type": k}, defs, names) for k in kinds])
    if kinds == "null":
        return st.none()
    if kinds == "boolean":
        return st.booleans()
    if kinds == "integer":
        return st.integers(min_value=node.get("minimum", -5), max_value=node.get("minimum", 0) + 10**6)
    if kinds == "string":
        return names
    if kinds == "array":
        return st.lists(from_schema(node.get("items", {"type": "string"}), defs, names), max_size=4)
    if kinds == "object":
        props = node.get("properties", {})
        required = {k: from_schema(props[k], defs, names) for k in node.get("required", ()) if k in props}
        optional = {k: from_schema(v, defs, names) for k, v in props.items() if k not in required}
        extra = node.get("additionalProperties")
        base = st.fixed_dictionaries(required, optional=optional)
        if isinstance(extra, dict):
            more = st.dictionaries(names, from_schema(extra, defs, names), max_size=3)
            return st.tuples(base, more).map(lambda t: {**t[1], **t[0]})
        return base
    return st.one_of(st.none(), st.booleans(), st.integers(0, 9), names)  # no type: any JSON scalar


PLAUSIBLE: dict[tuple[str, str], st.SearchStrategy[Any]] = {  # answers a working system gives, drawn first
    ("sr", "servers"): st.lists(st.sampled_from(["MBX01", "MBX02"]), min_size=1, max_size=2, unique=True),
    ("pf", "replicas"): st.dictionaries(st.sampled_from("ABC"), st.sampled_from(["active", "delete_pending"])),
}


def result(mechanism: str, op: str) -> st.SearchStrategy[Any]:
    """The operation's result as the schema types it; for a few operations an answer a working system would give
    is drawn first (a run whose first answer is refused tests little of the harness)."""
    doc = schema(mechanism)
    typed = from_schema(doc["operations"][op]["result"], doc["$defs"], _names(mechanism))
    first = PLAUSIBLE.get((mechanism, op))
    return typed if first is None else first | typed


def _attr_value(type_: str, names: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    types: dict[str, st.SearchStrategy[Any]] = {
        "string": names,
        "integer": st.integers(-1, 10**6),
        "boolean": st.booleans(),
        "list of strings": st.lists(names, max_size=3),
        "list of integers": st.lists(st.integers(0, 10**6), max_size=3),
    }
    base = types.get(type_.replace(" or null", ""), names)
    return base | st.none() if "or null" in type_ else base


def event(mechanism: str) -> st.SearchStrategy[dict[str, Any]]:
    """One event as a reply carries it, `ts_ms` an offset from the request's `now_ms` (`Script.reply` adds it):
    a kind of the mechanism's vocabulary other than the harness's own context kinds, its attributes typed."""
    vocab = importlib.import_module(f"model.{mechanism}.vocabulary").VOCABULARY
    kinds = [k for k in vocab.kinds if not k.kind.endswith("_CONFIG") and k.kind != "TRACE_START"]

    names = _names(mechanism)

    def one(doc: Any) -> st.SearchStrategy[dict[str, Any]]:
        attrs = st.fixed_dictionaries(
            {a.name: _attr_value(a.type, names) for a in doc.attrs if not a.optional},
            optional={a.name: _attr_value(a.type, names) for a in doc.attrs if a.optional},
        )
        return st.fixed_dictionaries(
            {
                "ts_ms": st.integers(0, 120_000),
                "node": names,
                "entity": names,
                "kind": st.just(doc.kind),
                "attrs": attrs,
            }
        )

    return st.one_of([one(k) for k in kinds])


@dataclass
class Script:
    """Per operation, the replies a scripted system gives in turn: (result, events) pairs."""

    mechanism: str
    replies: dict[str, list[tuple[Any, list[dict[str, Any]]]]]

    def reply(self, op: str, n: int, now_ms: int) -> tuple[Any, list[dict[str, Any]]]:
        answers = self.replies.get(op) or [(_least(self.mechanism, op), [])]
        res, evs = answers[n % len(answers)]
        return res, [{**e, "ts_ms": now_ms + e["ts_ms"]} for e in evs]


def _least(mechanism: str, op: str) -> Any:
    """The simplest result the schema allows (an operation a hand-written script leaves out); `setup`: a fresh
    program's."""
    if op == "setup":
        return {"resumed": False}
    kind = schema(mechanism)["operations"][op]["result"].get("type")
    return {"boolean": False, "string": "", "array": [], "object": {}, "integer": 0}.get(kind)


def script(mechanism: str, events: bool = True) -> st.SearchStrategy[Script]:
    """A script for every operation of the mechanism's protocol (`setup` answers `{"resumed": false}`, as a fresh
    program does; its events are drawn too)."""
    ops = [op for op in schema(mechanism)["operations"] if op != "setup"]
    evs = st.lists(event(mechanism), max_size=3) if events else st.just([])
    pair = lambda op: st.tuples(result(mechanism, op), evs)  # noqa: E731
    replies = {op: st.lists(pair(op), min_size=1, max_size=3) for op in ops}
    replies["setup"] = st.lists(st.tuples(st.just({"resumed": False}), evs), min_size=1, max_size=1)
    return st.fixed_dictionaries(replies).map(lambda r: Script(mechanism, r))


class ScriptedClient:
    """`process.ProcessClient`'s interface over a `Script`: every reply validated against the schema and its
    event times checked, as the real client does (a scripted reply breaking them is a bug of the script)."""

    def __init__(self, plan: Script) -> None:
        self.plan, self.mechanism = plan, plan.mechanism
        self.next_id = self.crashes = 0
        self.timeout_s = 1.0
        self.counts: dict[str, int] = {}

    def call(self, op: str, args: dict[str, Any], now_ms: int) -> dict[str, Any]:
        self.next_id += 1
        n = self.counts[op] = self.counts.get(op, -1) + 1
        res, evs = self.plan.reply(op, n, now_ms)
        reply = {"id": self.next_id, "events": evs, "result": res}
        validate_reply(self.mechanism, op, reply)
        check_event_times(op, self.next_id, now_ms, evs)
        return reply

    def restart(self, new_state: bool) -> None:
        self.counts.clear() if new_state else None

    def close(self) -> None:
        pass


def scripted_factory(plan: Script) -> Any:
    """A system factory for the harness: each run a fresh adapter system over a `ScriptedClient`."""
    return lambda setup: SYSTEMS[plan.mechanism](ScriptedClient(plan), setup)  # type: ignore[arg-type]
