"""A seed statement z3 refuted as stated, shown as a behaviour of the model by exploration (issue 22, item 5):
seed 003's "step 1 always precedes step 2" when a replica is added (BF-025, spec/CLAIMS.md Finding 6)."""

from __future__ import annotations

import pytest

from conformance.explore.bfs import Explorer, explore
from conformance.explore.spaces import Bound
from conformance.explore.witness import WITNESSES, status_request_before_hierarchy

CLAIM = "pf.replica_add.step1_before_step2"
BOUND = Bound("pf", "witness", 2, 1, 0, ("add_replica",), 5)


@pytest.mark.model
def test_the_refuted_claim_is_a_behaviour_of_the_model() -> None:
    res = explore(BOUND, ends=False, goal=WITNESSES[CLAIM])
    # depth 4 from a root whose mail sent at start takes the longest latency (`net.latency` at its upper end;
    # session 13), 5 from the seed's construction
    assert res.found is not None and res.found.kind == "witness" and res.found.depth == 4
    assert res.found.start != ()
    seeded = explore(BOUND.with_(construction=False), ends=False, goal=WITNESSES[CLAIM])
    assert seeded.found is not None and seeded.found.depth == 5
    add = res.found.steps[-1]["calls"][0]
    assert add["call"] == "add_replica" and add["args"]["via"] == add["args"]["server"] == "B"


@pytest.mark.model
def test_twin_the_change_made_on_a_store_with_a_content_replica_keeps_the_order() -> None:
    """The same path with the replica added through A (which holds the folder's content): step 1 comes first."""
    res = explore(BOUND, ends=False, goal=WITNESSES[CLAIM])
    assert res.found is not None
    steps = [dict(s) for s in res.found.steps]
    last = steps[-1]["calls"][0]
    steps[-1] = {"op": "add_replica", "calls": [{**last, "args": {**last["args"], "via": "A"}}]}
    ex = Explorer(BOUND)
    session = ex.replay(steps, res.found.start)  # under the root's construction choices
    session.apply({"call": "advance", "args": {"ms": 3_600_000}})
    assert not status_request_before_hierarchy(session.events())
    assert status_request_before_hierarchy(ex.replay(res.found.steps, res.found.start).events())
