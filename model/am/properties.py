"""Named invariants of the Active Manager model: the rows of `rules.RULES`, plus one liveness property.

Seed 002. Safety rules ("always") are checked on recorded traces by the monitor (`monitor.py`) and, for
the state-level ones, on the model's state after every step (`check_world`, used by the scripted
scenarios) through the same functions of `rules.py`. Liveness ("eventually") is stated with its fairness
assumption; `failover-mounts` is checked only in the scripted scenarios, since random fault schedules need
not be fair.
"""

from __future__ import annotations

from model.am.rules import RULES, doubly_mounted, pams_outside_quorum
from model.am.state import World
from spec.catalogue import require
from traces.verdict import Rule

LIVENESS: dict[str, tuple[Rule, str]] = {
    "failover-mounts": (
        Rule("failover-mounts", "AM-020", "eventually", "after the active copy fails, some copy is mounted"),
        "a quorum exists and some copy passes a tier and a criteria set, is within the dial and mounts; holds "
        "in the scripted scenarios (`simulate(liveness=True)`), not under arbitrary faults",
    ),
}
PROPERTIES: tuple[Rule, ...] = (*RULES.values(), *(r for r, _ in LIVENESS.values()))
require(*(p.requirement for p in PROPERTIES))


def check_world(w: World) -> list[str]:
    """The state-level safety rules on a world; one message per broken rule (same functions as the monitor)."""
    out = [f"one-active-copy (AM-009): {db} is mounted on {', '.join(on)}" for db, on in doubly_mounted(w)]
    if len(w.claims) > 1:
        out.append(f"single-pam (AM-005): {', '.join(sorted(w.claims))} all act as PAM")
    out += [f"pam-owns-quorum (AM-005): {c} acts as PAM outside the quorum" for c in pams_outside_quorum(w)]
    return out
