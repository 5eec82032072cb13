"""Named invariants of the Active Manager model, each with its requirement ID.

Seed 002. Safety properties ("always") are checked two ways: on the model's state after every step
(`check_world`, used by the stateful tests) and on recorded traces by the monitor rule of the same name
(`monitor.RULES`). Liveness ("eventually") is stated with its fairness assumption and checked only in the
scripted scenarios of the tests, since random fault schedules need not be fair.
"""

from __future__ import annotations

from dataclasses import dataclass

from model.am.rules import World
from model.am.state import MOUNTED
from spec.catalogue import require


@dataclass(frozen=True, slots=True)
class Property:
    name: str
    requirement: str
    kind: str  # "always" | "eventually"
    rule: str  # the monitor rule that checks it on traces
    statement: str
    fairness: str = ""


PROPERTIES: tuple[Property, ...] = (
    Property("one-active-copy", "AM-009", "always", "one-active-copy",
             "at most one copy of each database is mounted at any time, through PAM moves, crashes and "
             "partitions"),
    Property("single-pam", "AM-005", "always", "single-pam",
             "at most one member of the DAG acts as PAM"),
    Property("pam-owns-quorum", "AM-005", "always", "pam-owns-quorum",
             "the PAM is a member of the partition holding a majority of the DAG"),
    Property("only-pam-activates", "AM-008", "always", "only-pam-activates",
             "every change of the active designation and every BCSS run is made by the PAM, never a SAM"),
    Property("sam-asks-pam", "AM-013", "always", "sam-asks-pam",
             "a failure a SAM detects reaches the PAM as a failover request before BCSS runs"),
    Property("mount-within-dial", "AM-024", "always", "dial",
             "a copy is mounted only if its missing logs after ACLL are within the dial's threshold"),
    Property("never-blocked", "AM-034", "always", "never-blocked",
             "a blocked, suspended or unreachable copy is never activated"),
    Property("first-allowed-copy", "AM-039", "always", "selection-order",
             "the copies tried, and so the copy activated, follow the order the seed allows"),
    Property("responder-target-healthier", "AM-032", "always", "responder-target",
             "a failover started by a component's responder lands on a server healthier in that component"),
    Property("acll-before-mount", "AM-051", "always", "acll-before-mount",
             "within a BCSS run, ACLL for a copy is recorded before the mount request for it"),
    Property("location-from-last-mount", "AM-019", "always", "location-answer",
             "a SAM's answer to where a database is active names the copy mounted last"),
    Property("pam-moved-before-maintenance", "AM-007", "always", "pam-before-maintenance",
             "the server taken offline for maintenance is not the PAM at that moment"),
    Property("pam-moves-with-quorum", "AM-006", "eventually", "pam-moves-with-quorum",
             "once a view with a quorum is recorded, a member of that quorum is PAM before the next view",
             fairness="the PAM reaction to a view change is recorded before the next view (model: at once)"),
    Property("failover-mounts", "AM-020", "eventually", "",
             "after the active copy fails, some copy is mounted",
             fairness="a quorum exists and some copy passes a tier and a criteria set, is within the dial "
                      "and mounts; holds in the scripted scenarios, not under arbitrary faults"),
)
require(*(p.requirement for p in PROPERTIES))


def check_world(w: World) -> list[str]:
    """The state-level safety properties; returns one message per broken property."""
    out: list[str] = []
    for db, d in sorted(w.dbs.items()):
        mounted = sorted(s for s, c in d.copies.items() if c.status == MOUNTED)
        if len(mounted) > 1:
            out.append(f"one-active-copy (AM-009): {db} is mounted on {', '.join(mounted)}")
    if len(w.claims) > 1:
        out.append(f"single-pam (AM-005): {', '.join(sorted(w.claims))} all act as PAM")
    q = w.quorum() or frozenset()
    for c in sorted(w.claims - q):
        out.append(f"pam-owns-quorum (AM-005): {c} acts as PAM outside the quorum")
    return out
