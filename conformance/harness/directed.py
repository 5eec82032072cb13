"""Directed perturbations for the coverage sweep (issue 34): rare structure that one-event perturbations drawn at
random reach too seldom to count in every run of a budget, stated per mechanism as (the events, the perturbation).

`report._tampered` draws its perturbations kind first, then variant, then event, and sweeps one of each kind per
run; a rule that judges only a rare event *and* only one of its attributes (BF-018: a backfill response's
`recipients`) or only the loss of one set-up event (PF-004, BF-035: the creating store's hierarchy
REPLICA_CREATE) was reached in about 1 run of 100. Each entry below names the first event of a trace that matches
it and the one perturbation made to it, once per run (so its cost is one judgement of the trace per entry):

- `drop`: the event removed;
- `alter ATTR`: ATTR set to each other value the trace holds for it (one perturbation each, in sorted order);
- `edit ATTR`: one element of the list-valued attribute ATTR dropped (the last) and, as a second variant, one
  element the trace holds for ATTR elsewhere added (a generic list perturbation: `edited`).

The sweep stays deterministic (no draw) and bounded by the table's length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from traces.schema import Event


@dataclass(frozen=True)
class Directed:
    """The first event of `kind` whose attributes hold `match` (and, `node_of`, recorded at the store of the
    first `node_of` event), and what is done to it (`drop`, `alter` of `attr`, or `edit` of the list attribute
    `attr`); `reaches`: the rules it exists for (checked by tests/harness/test_directed_coverage.py)."""

    kind: str
    match: tuple[tuple[str, Any], ...]
    what: str
    reaches: tuple[str, ...]
    attr: str = ""
    node_of: str = ""  # if set: only an event at the store (`node`) of the trace's first event of this kind


DIRECTED: dict[str, tuple[Directed, ...]] = {
    "pf": (
        # BF-018: a backfill response goes only to the requester (about 1 in 6,000 random perturbations)
        Directed(
            "REPL_SEND", (("type", "backfill_response"),), "edit", ("backfill-response-addressing",), "recipients"
        ),
        # PF-004 / BF-035: without the creating store's hierarchy replica no folder has a hierarchy entry it shows
        # (the store that records the first FOLDER_CREATE: the one store that holds its hierarchy entry at first)
        Directed(
            "REPLICA_CREATE",
            (("new", False),),
            "drop",
            ("non-replicating-folder", "redirect-to-active-replica"),
            node_of="FOLDER_CREATE",
        ),
        # BF-028 / BF-035: a client access the store could not serve, recorded as served or as a redirect (to no
        # replica); the served and redirected accesses of a run are to active replicas, so random alterations
        # of their target seldom pick a store that is not
        Directed(
            "CLIENT_ACCESS",
            (("outcome", "unavailable"),),
            "alter",
            ("served-by-active-replica", "redirect-to-active-replica"),
            "outcome",
        ),
    ),
}


def edited(v: list[Any], pool: Sequence[Any], add: bool) -> list[Any] | None:
    """A list with one element dropped (the last) or, `add`, one element of `pool` it does not hold added
    (the first in sorted order); None when there is nothing to drop or to add."""
    if not add:
        return list(v[:-1]) if v else None
    extra = sorted({str(x) for x in pool} - {str(x) for x in v})
    return [*v, extra[0]] if extra else None


def directed(events: list[Event], mechanism: str) -> list[list[Event]]:
    """The directed perturbations of `events` for `mechanism` (`DIRECTED`): one per entry, two for an edit (it
    drops and adds), one per other value for an alter; none for an entry no event matches; not renumbered (the
    caller does)."""
    out: list[list[Event]] = []
    for d in DIRECTED.get(mechanism, ()):
        node = next((e.node for e in events if e.kind == d.node_of), None) if d.node_of else None
        i = next((i for i, e in enumerate(events) if e.kind == d.kind and _holds(e, d.match, node)), None)
        if i is None:
            continue
        e = events[i]
        if d.what == "drop":
            out.append(events[:i] + events[i + 1 :])
            continue
        v = e.attrs.get(d.attr)
        if d.what == "alter":
            others = sorted({str(o.attrs[d.attr]) for o in events if o.kind == d.kind and d.attr in o.attrs} - {v})
            out += [[*events[:i], replace(e, attrs={**e.attrs, d.attr: x}), *events[i + 1 :]] for x in others]
            continue
        if not isinstance(v, list):
            continue
        pool = [x for o in events if isinstance(o.attrs.get(d.attr), list) for x in o.attrs[d.attr]]
        for add in (False, True):
            new = edited(v, pool, add)
            if new is not None:
                out.append([*events[:i], replace(e, attrs={**e.attrs, d.attr: new}), *events[i + 1 :]])
    return out


def _holds(e: Event, match: tuple[tuple[str, Any], ...], node: str | None) -> bool:
    return all(e.attrs.get(k) == v for k, v in match) and node in (None, e.node)
