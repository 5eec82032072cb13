"""Seed statements z3 refuted as stated (`spec/CLAIMS.md`, Findings), shown as behaviours of the model.

`haconform prove` refutes a claim on the claim's own abstraction; where exploration reaches the situation, the
shortest path to a model state whose trace shows the counterexample is the same finding as a behaviour of
the reference model, and a replay file any system can be run on. A `Witness` is a predicate over the
recorded trace (it judges from the events alone, as a monitor does); `explore(bound, goal=witness)` stops at
the first state whose trace satisfies it.

- `pf.replica_add.step1_before_step2` (seed 003, "Adding a replica", steps 1 and 2; BF-025, Finding 6): "the
  hierarchy message (step 1) always precedes the new server's status request (step 2)". Refuted when the
  administrator makes the change on the new replica's server: its status request for the folder goes out at
  once, while its hierarchy message waits for the next hierarchy tick. The twin (the change made on a store
  already holding a content replica) keeps the order (`tests/explore/test_witness.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spec.catalogue import require
from traces.schema import Event

HIERARCHY = "1-1"  # the FID of the top level hierarchy (model.pf.state.HIERARCHY)


@dataclass(frozen=True)
class Witness:
    claim: str  # the claim's ID in spec/claims (refuted as stated)
    requirement: str
    statement: str  # the seed's statement that does not hold
    shown: Callable[[Sequence[Event]], bool]  # the trace shows the counterexample


def _sends(events: Sequence[Event], start: int, node: str, kind: str, entity: str) -> int | None:
    """Index of the first REPL_SEND of `kind` by `node` for `entity` after `start` (None: none yet)."""
    for j in range(start + 1, len(events)):
        e = events[j]
        if e.kind == "REPL_SEND" and e.node == node and e.attrs.get("type") == kind and e.entity == entity:
            return j
    return None


def _made_here(events: Sequence[Event], i: int) -> bool:
    """The replica created at event i is the administrator's change made on this store: a CHANGE of the folder's
    replica list numbered by this store, recorded in the same instant (a change heard in a hierarchy message
    carries its origin's change number and is not recorded as a CHANGE here)."""
    e = events[i]
    for j in range(i - 1, -1, -1):
        x = events[j]
        if x.ts_ms != e.ts_ms:
            return False
        if (
            x.node == e.node
            and x.kind == "CHANGE"
            and x.attrs.get("op") == "replica"
            and x.attrs.get("target") == e.entity
        ):
            return str(x.attrs.get("cn", "")).startswith(f"{e.node}#")
    return False


def status_request_before_hierarchy(events: Sequence[Event]) -> bool:
    """The administrator's change made on the new replica's store (`_made_here`): the store
    sends its status request for the folder (step 2) before the hierarchy message announcing the change
    (step 1), which it is the one to send."""
    for i, e in enumerate(events):
        if e.kind != "REPLICA_CREATE" or e.entity == HIERARCHY or e.attrs.get("new") is not True:
            continue
        if not _made_here(events, i):
            continue
        request = _sends(events, i, e.node, "status_request", e.entity)
        hierarchy = _sends(events, i, e.node, "hierarchy", HIERARCHY)
        if request is not None and (hierarchy is None or request < hierarchy):
            return True
    return False


WITNESSES: dict[str, Witness] = {
    w.claim: w
    for w in (
        Witness(
            "pf.replica_add.step1_before_step2",
            "BF-025",
            "Adding a replica: the hierarchy message (step 1) always precedes the new server's status request "
            "(step 2).",
            status_request_before_hierarchy,
        ),
    )
}
require(*(w.requirement for w in WITNESSES.values()))
