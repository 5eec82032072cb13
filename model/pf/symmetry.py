"""Which public folder stores may be renamed among themselves in a state's fingerprint (issue 33): none.

A renaming may merge two explored states only if the model behaves the same up to that renaming. Under the
recorded configuration (PF_CONFIG: routing group, transport costs, Exchange version, preferred backfill
servers), the stores that are alike are those of one routing group with one version and the same preferred
status (`configuration_classes`). Those are exactly the stores the model tells apart by name where the seeds
leave the choice open:

- backfill source selection (seed 003 "Backfill Requests and Backfill Messages", BF-011..BF-013): candidates
  equal on the seed's five keys are taken in server-name order (`decisions.Candidate.key`; the monitor
  accepts any order, `decisions.choice_allowed`);
- client redirection (seed 001 "Hierarchy Replication", PF-026): among the active replicas of least
  transport cost, the first by name (`node.Store.client_access`).

Both are deterministic tie-breaks, not draws of the seeded generator, so they are not choice points, and
renaming two alike stores changes which one is asked or named (`tests/pf/test_pf_symmetry.py` shows it).
Events of one instant are also ordered by name: stores start, and messages go to their recipients, in name
order, and the kernel runs timers due at the same millisecond in the order they were set, so two stores whose
timers fall due together (both phases at an end of their range) act in name order. Until all of these are
explored as choices, no renaming is sound: `interchangeable` returns no group.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def configuration_classes(setup: Mapping[str, Any]) -> list[list[str]]:
    """Groups (sorted, two stores or more) of stores alike under the configuration of an explorer setup
    (`conformance.explore.spaces.pf_setup`: `stores` as [name, routing group, version], optional `preferred`):
    same routing group (hence the same transport cost to every store), same version, same preferred status."""
    preferred = set(setup.get("preferred") or ())
    groups: dict[tuple[Any, ...], list[str]] = {}
    for name, group, version in setup.get("stores", ()):
        groups.setdefault((group, version, name in preferred), []).append(name)
    return sorted(sorted(g) for g in groups.values() if len(g) > 1)


def interchangeable(setup: Mapping[str, Any]) -> list[list[str]]:
    """No group: the stores alike under the configuration (`configuration_classes`) are told apart by the
    model's name tie-breaks (the module docstring), so no renaming of them is sound."""
    return []
