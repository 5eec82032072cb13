"""Which Active Manager servers may be renamed among themselves in a state's fingerprint (issue 33).

The explorer (`conformance/explore`) fingerprints a state as the least hash over the renamings of
interchangeable servers. A renaming may merge two states only if the model behaves the same up to that
renaming (its transitions commute with it), so a group lists servers the model never tells apart by name:

- DAG members holding copies of the same databases, with the same configured dial, are one group. Every
  decision of the model reads the state, not the name: BCSS sorts by the seed's keys and then activation
  preference (AM-035..AM-037), which is distinct for the copies of one database and is state
  (`CopyState.preference`, renamed with its server), so the model's server-name tie-break
  (`bcss.sort_candidates`) never decides; the PAM holder among the quorum (AM-005..AM-007) is the choice
  point `am.pam-holder`, every outcome of which the explorer takes (with choice points off, the seeded pick
  from the name-sorted quorum is a name dependence: no group is sound then).
- A standalone server is never in a group: it holds its own database (`SDBn`), which a renaming of servers
  does not rename.
Seed 002: "Active Manager", "Best Copy and Server Selection".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def interchangeable(setup: Mapping[str, Any]) -> list[list[str]]:
    """Groups (each sorted, of two servers or more) of DAG members that hold copies of the same databases and
    have the same configured dial, for an explorer setup (`conformance.explore.spaces.am_setup`: `members`,
    `copies` database -> servers in activation preference order, optional per-server `dials`). Empty when no
    two members are alike (e.g. one member lacks a copy the others hold)."""
    members = list(setup.get("members", ()))
    dials: Mapping[str, str] = setup.get("dials") or {}
    default = setup.get("default_dial")
    held: dict[str, set[str]] = {m: set() for m in members}
    for db, servers in setup.get("copies", {}).items():
        for s in servers:
            if s in held:
                held[s].add(db)
    groups: dict[tuple[Any, ...], list[str]] = {}
    for m in members:
        groups.setdefault((frozenset(held[m]), dials.get(m, default)), []).append(m)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)
