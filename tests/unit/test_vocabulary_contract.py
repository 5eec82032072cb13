"""The vocabulary as a checked contract (issue 30): every trace the simulators record (model and every mutant
of every mechanism, several seeds) keeps the tables' recorders, types, formats, allowed values, required
attributes and ordering rules (`traces/contract.py`); a drift of each sort, planted in a trace or in a table,
is reported naming the kind and the attribute (the twins). The mutants whose planted bug is itself a breach
of a documented ordering must produce exactly that finding.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from functools import cache

import pytest

from conformance.harness.protocol_doc import VOCABULARIES
from model.registry import get, simulate
from traces.contract import Finding, check_trace
from traces.schema import Event
from traces.vocabulary import Role, Vocabulary

pytestmark = pytest.mark.unit
MECHANISMS = ("net", "sr", "am", "pf")
OPTION_RUNS = [  # settings that reach the expiries, Safety Net, exact timers, deletes (as test_vocabulary_docs)
    ("sr", 1, {"config": {"safety_net_hold_ms": 40 * 60_000, "expiration_ms": 20 * 60_000}}),
    ("sr", 2, {"config": {"auto_discard_ms": 30 * 60_000, "safety_net_hold_ms": 40 * 60_000}}),
    ("sr", 3, {"config": {"promotion_check": "exactTimer", "reject_on_failure": True}}),
    ("pf", 4, {"concurrent_removal": True}),
]
# Mutants whose planted bug breaks a documented ordering or recorder: (mechanism, kind, attribute) findings they
# may produce; those in REQUIRED must appear on some seed (the contract catches the planted drift).
ALLOWED: dict[tuple[str, str], set[tuple[str, str, str]]] = {
    ("net", "recv-without-send"): {("core", "NET_RECV", "order")},
    ("net", "no-trace-start"): {("core", "NET_SEND", "order"), ("core", "NET_DROP", "order")},
    ("sr", "ack-before-store"): {("sr", "SHADOW_ACK", "order")},
    ("am", "no-pam-move-before-maintenance"): {("am", "MAINTENANCE", "order")},
    ("am", "second-pam-after-partition"): {("am", "MAINTENANCE", "order")},
    ("am", "sam-activates"): {("am", "BCSS_START", "node")},  # a SAM runs BCSS: not the PAM (AM-022)
    ("pf", "replicate-local-folder"): {("pf", "REPL_SEND", "node"), ("pf", "REPL_SEND", "order")},
}
REQUIRED = {
    ("net", "recv-without-send"): ("core", "NET_RECV", "order"),
    ("sr", "ack-before-store"): ("sr", "SHADOW_ACK", "order"),
    ("am", "no-pam-move-before-maintenance"): ("am", "MAINTENANCE", "order"),
    ("am", "sam-activates"): ("am", "BCSS_START", "node"),
    ("pf", "replicate-local-folder"): ("pf", "REPL_SEND", "node"),
}


def _runs(seeds: range) -> Iterator[tuple[str, str, int, Callable[[], list[Event]]]]:
    for m in MECHANISMS:
        for s in seeds:
            yield m, "model", s, lambda m=m, s=s: simulate(m, s)
        for name, sim in get(m).mutants.items():
            for s in seeds:
                yield m, name, s, lambda sim=sim, s=s: sim(s)
    for m, s, opts in OPTION_RUNS:
        yield m, f"model {opts}", s, lambda m=m, s=s, opts=opts: simulate(m, s, **opts)


def _key(f: Finding) -> tuple[str, str, str]:
    return f.mechanism, f.kind, f.attr


def breaches(seeds: range) -> tuple[list[str], set[tuple[str, str, tuple[str, str, str]]]]:
    """Findings no mutant's planted bug explains, and the explained ones seen (mechanism, mutant, finding)."""
    bad: list[str] = []
    seen: set[tuple[str, str, tuple[str, str, str]]] = set()
    for m, name, seed, sim in _runs(seeds):
        allowed = ALLOWED.get((m, name), set())
        for f in check_trace(sim(), VOCABULARIES):
            if _key(f) in allowed:
                seen.add((m, name, _key(f)))
            else:
                bad.append(f"{m} {name} seed {seed}: {f}")
    return bad, seen


def test_every_simulated_trace_keeps_the_contract() -> None:
    bad, seen = breaches(range(2))
    assert bad == []
    assert {(m, n, k) for (m, n), k in REQUIRED.items()} <= seen, "a planted ordering bug was not caught"


@pytest.mark.slow
def test_every_simulated_trace_keeps_the_contract_more_seeds() -> None:
    bad, _ = breaches(range(2, 8))
    assert bad == []


# ---- twins: a drift planted in a model trace ---------------------------------------------------------------


@cache
def _trace(m: str, seed: int = 0) -> tuple[Event, ...]:
    return tuple(simulate(m, seed))


def _renumber(events: list[Event]) -> list[Event]:
    return [dataclasses.replace(e, seq=i) for i, e in enumerate(events)]


def _found(events: list[Event]) -> set[tuple[str, str, str]]:
    return {_key(f) for f in check_trace(events, VOCABULARIES)}


def _edit(m: str, pick: Callable[[Event], bool], change: Callable[[Event], Event], seed: int = 0) -> list[Event]:
    events = list(_trace(m, seed))
    i = next(i for i, e in enumerate(events) if pick(e))
    events[i] = change(events[i])
    return events


def _swap(events: list[Event], first: Callable[[Event], bool], then: Callable[[Event, Event], bool]) -> list[Event]:
    """Move the first event matching `first` after the next event `then(first, e)` accepts (same instant)."""
    i = next(i for i, e in enumerate(events) if first(e) and any(then(e, x) for x in events[i + 1 :]))
    j = next(j for j in range(i + 1, len(events)) if then(events[i], events[j]))
    moved = events[:i] + events[i + 1 : j + 1] + [events[i]] + events[j + 1 :]
    return _renumber(moved)


def _attrs(e: Event, **changes: object) -> Event:
    return dataclasses.replace(e, attrs={**e.attrs, **changes})


def test_the_model_traces_used_by_the_twins_are_clean() -> None:
    for m in MECHANISMS:
        assert check_trace(list(_trace(m)), VOCABULARIES) == [], m


def test_twin_a_recorder_changed_is_named() -> None:
    # the shadow's HARECEIVE recorded by the primary; FAILOVER_REQUEST recorded by the SAM (the old docs' reading)
    hr = _edit("sr", lambda e: e.kind == "HARECEIVE", lambda e: dataclasses.replace(e, node=e.attrs["primary"]))
    assert ("sr", "HARECEIVE", "node") in _found(hr)
    fo = _edit("am", lambda e: e.kind == "FAILOVER_REQUEST", lambda e: dataclasses.replace(e, node=e.attrs["server"]))
    assert ("am", "FAILOVER_REQUEST", "node") in _found(fo)
    ns = _edit("pf", lambda e: e.kind == "NET_SEND", lambda e: dataclasses.replace(e, node=e.attrs["dst"]))
    assert ("pf", "NET_SEND", "node") in _found(ns)


def test_twin_an_attribute_format_changed_is_named() -> None:
    db = _edit("sr", lambda e: e.kind == "RECEIVE", lambda e: _attrs(e, db=e.attrs["db"].replace("-db", "/")))
    assert ("sr", "RECEIVE", "db") in _found(db)
    msg = _edit("pf", lambda e: e.kind == "NET_SEND" and e.mechanism == "pf", lambda e: _attrs(e, msg="pf00#0/1"))
    assert ("pf", "NET_SEND", "msg") in _found(msg)  # the message ID where the type is recorded
    grp = _edit("net", lambda e: e.kind == "PARTITION", lambda e: _attrs(e, groups=["srv00 + srv02"]))
    assert ("core", "PARTITION", "groups") in _found(grp)
    prio = _edit("am", lambda e: e.kind == "SERVER_HEALTH", lambda e: _attrs(e, priority="Medium"))
    assert ("am", "SERVER_HEALTH", "priority") in _found(prio)
    typ = _edit("am", lambda e: e.kind == "COPY_STATE", lambda e: _attrs(e, lli=str(e.attrs["lli"])))
    assert ("am", "COPY_STATE", "lli") in _found(typ)


def test_twin_a_required_attribute_dropped_is_named() -> None:
    def drop(name: str) -> Callable[[Event], Event]:
        return lambda e: dataclasses.replace(e, attrs={k: v for k, v in e.attrs.items() if k != name})

    assert ("sr", "ACCEPT", "inst") in _found(_edit("sr", lambda e: e.kind == "ACCEPT", drop("inst")))
    assert ("pf", "REPL_SEND", "cnset") in _found(_edit("pf", lambda e: e.kind == "REPL_SEND", drop("cnset")))
    assert ("am", "BCSS_START", "sort") in _found(_edit("am", lambda e: e.kind == "BCSS_START", drop("sort")))


def _mounted_report(a: Event, b: Event) -> bool:
    return b.kind == "COPY_STATE" and b.ts_ms == a.ts_ms and b.attrs.get("server") == a.attrs.get("server")


def test_twin_an_ordering_broken_is_named() -> None:
    am = _swap(list(_trace("am")), lambda e: e.kind == "MOUNTED", _mounted_report)
    assert ("am", "COPY_STATE", "order") in _found(am)
    sr = _swap(
        list(_trace("sr")),
        lambda e: e.kind == "XQUERYDISCARD",
        lambda q, e: e.kind == "DISCARD_NOTIFY" and e.ts_ms == q.ts_ms and e.node == q.node,
    )
    assert ("sr", "DISCARD_NOTIFY", "order") in _found(sr)
    pf = _swap(
        list(_trace("pf")),
        lambda e: e.kind == "REPLICA_REMOVED",
        lambda r, e: e.kind == "CHANGE" and e.ts_ms == r.ts_ms and e.attrs.get("detail") == f"{r.node}:removed",
    )
    assert ("pf", "CHANGE", "detail") in _found(pf)


def test_twin_acll_without_its_copy_state_is_named() -> None:
    events = list(_trace("am"))
    ends = [e for e in events if e.kind == "ACLL_END" and e.attrs["lli"] != e.attrs["lli_before"]]
    assert ends, "the model trace has an ACLL that copied logs"
    end = ends[0]
    start = max(e.seq for e in events if e.kind == "ACLL_START" and e.seq < end.seq)
    cut = [
        e
        for e in events
        if not (e.kind == "COPY_STATE" and start < e.seq < end.seq and e.attrs.get("server") == end.attrs["server"])
    ]
    assert ("am", "ACLL_END", "lli") in _found(_renumber(cut))


# ---- twins: a drift planted in a table ------------------------------------------------------------------


def _with_kind(vocabs: tuple[Vocabulary, ...], mech: str, kind: str, **changes: object) -> tuple[Vocabulary, ...]:
    out = []
    for v in vocabs:
        if v.mechanism == mech:
            kinds = tuple(dataclasses.replace(k, **changes) if k.kind == kind else k for k in v.kinds)
            v = dataclasses.replace(v, kinds=kinds)
        out.append(v)
    return tuple(out)


def test_twin_a_table_recorder_changed_fails_on_the_simulated_traces() -> None:
    sam = Role("the SAM (`server`)", lambda e, h: e.node == e.attrs.get("server"))
    vocabs = _with_kind(VOCABULARIES, "am", "FAILOVER_REQUEST", role=sam, recorder=sam.text)
    found = {_key(f) for s in range(2) for f in check_trace(simulate("am", s), vocabs)}
    assert found == {("am", "FAILOVER_REQUEST", "node")}


def test_twin_a_table_format_changed_fails_on_the_simulated_traces() -> None:
    am = next(v for v in VOCABULARIES if v.mechanism == "am")
    health = am.get("SERVER_HEALTH")
    assert health is not None
    old = tuple(
        dataclasses.replace(a, values=("High", "Medium", "Low")) if a.name == "priority" else a for a in health.attrs
    )
    vocabs = _with_kind(VOCABULARIES, "am", "SERVER_HEALTH", attrs=old)
    assert {_key(f) for f in check_trace(simulate("am", 0), vocabs)} == {("am", "SERVER_HEALTH", "priority")}
