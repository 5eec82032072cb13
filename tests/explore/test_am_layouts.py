"""am bounds whose databases do not have a copy on every member (issue 33, session 22): a bound's `setup` may name
the copies (`"copies": {"DB1": [...], ...}`, the configuration's database -> its copies' servers in activation
preference order). The explorer suspends a copy (`block`) only where the configuration has one; before session 22
it offered `set_copy` on every member, and the model, asked to change a copy that does not exist, failed inside its
transaction (a KeyError: an internal error, exit 3, not a verdict).

Twin: the same step on a member without a copy still fails in the model, so the enumeration is what keeps the
exploration clean."""

from __future__ import annotations

import pytest

from conformance.explore.bfs import Explorer, explore
from conformance.explore.manifest import find
from conformance.explore.spaces import EMPTY, Bound, am_actions

COPIES = {"DB1": ["MBX1", "MBX2", "MBX3"], "DB2": ["MBX2"]}


def _bound(depth: int) -> Bound:
    base = find("am-3s-1db-admin").bound
    return base.with_(name="am-3s-partial", messages=2, depth=depth, setup={"copies": COPIES})


@pytest.mark.model
def test_a_copy_is_suspended_only_where_the_configuration_has_one() -> None:
    ex = Explorer(_bound(1))
    s = ex.fresh()
    blocks = [a.calls[0]["args"] for a in am_actions(s, EMPTY, ex.bound) if a.op == "block"]
    assert {(b["db"], b["server"]) for b in blocks} == {
        ("DB1", "MBX1"),
        ("DB1", "MBX2"),
        ("DB1", "MBX3"),
        ("DB2", "MBX2"),
    }
    queries = {
        (a.calls[0]["args"]["db"], a.calls[0]["args"]["server"])
        for a in am_actions(s, EMPTY, ex.bound)
        if a.op == "query"
    }
    assert ("DB2", "MBX1") in queries  # any member's SAM answers where a database is active


@pytest.mark.model
def test_a_partial_layout_explores_clean() -> None:
    res = explore(_bound(2))
    assert res.found is None and res.states > 0 and res.complete


@pytest.mark.model
def test_twin_suspending_a_copy_that_does_not_exist_fails_in_the_model() -> None:
    ex = Explorer(_bound(1))
    s = ex.fresh()
    with pytest.raises(KeyError):
        s.apply({"call": "set_copy", "args": {"db": "DB2", "server": "MBX1", "suspended": True}})
