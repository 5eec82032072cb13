"""The rules table of the Active Manager monitor: every rule it can report, with its requirement ID, kind,
statement and the catalogue parameters whose recorded values bound it (seed 002, all sections).

Each rule is a module constant (`DIAL`, `SELECTION_ORDER`...) and `RULES` the one table built from them
(`traces.verdict.table`); the monitor reports violations through these objects only (issue 29), the
properties of `properties.py` are these rows, and `tests/am/test_monitor.py::TWINS` names the twin that
must fail for each. The state-level invariants both the generator's state (`properties.check_world`) and
the monitor evaluate are the functions at the end, so there is one statement of each.
"""

from __future__ import annotations

from model.am.state import World
from spec.catalogue import require
from traces.verdict import Rule, table

DIAL_PARAMS = ("AM-P01", "AM-P02", "AM-P03", "AM-P04", "AM-P10")
ORDER_PARAMS = ("AM-P01", "AM-P05", "AM-P06", "AM-P07", "AM-P08", "AM-P09", "AM-P11", "AM-P12")

# --- PAM and quorum (AM-005..AM-007) ---
SINGLE_PAM = Rule("single-pam", "AM-005", "always", "at most one member of the DAG acts as PAM")
PAM_OWNS_QUORUM = Rule(
    "pam-owns-quorum",
    "AM-005",
    "always",
    "the PAM is a member of the partition holding a strict majority of the DAG (AM-I13)",
)
PAM_MOVES_WITH_QUORUM = Rule(
    "pam-moves-with-quorum",
    "AM-006",
    "eventually",
    "once a view with a quorum is recorded, a member of that quorum is PAM before the next view "
    "(fairness: the reaction to a view is recorded before the next view)",
)
PAM_TRANSITION = Rule(
    "pam-transition",
    "AM-006",
    "always",
    "the PAM role changes only as step.PAM_TABLE allows: released for lost quorum only by a server "
    "outside the quorum, or moved by an administrator; never released by a server that is not PAM",
)
DAG_RECORD = Rule(
    "dag-record",
    "AM-005",
    "always",
    "the DAG facts an AM_DAG_CONFIG records for the databases' monitors (view, PAM claims, changed health) "
    "equal the fold of the DAG events before it",
)
PAM_BEFORE_MAINTENANCE = Rule(
    "pam-before-maintenance",
    "AM-007",
    "always",
    "the server taken offline for maintenance is not the PAM at that moment",
)
ROLE_RECORD = Rule(
    "role-record",
    "AM-003",
    "always",
    "what an event restates about roles (PAM_ACQUIRE's quorum, FAILURE's role, FAILOVER_REQUEST's PAM) "
    "equals what the recorded views and PAM changes make it",
)

# --- the active copy (AM-008, AM-009, AM-016, AM-019) ---
ONLY_PAM_ACTIVATES = Rule(
    "only-pam-activates",
    "AM-008",
    "always",
    "every change of the active designation, every mount request and every BCSS run of a DAG database "
    "is made by the PAM, never a SAM",
)
SAM_ASKS_PAM = Rule(
    "sam-asks-pam",
    "AM-013",
    "always",
    "a failure a SAM detects reaches the PAM as a failover request before BCSS runs",
)
ONE_ACTIVE_COPY = Rule(
    "one-active-copy",
    "AM-009",
    "always",
    "at most one copy of each database is mounted at any time, through PAM moves, crashes and partitions",
)
MOUNT_TRANSITION = Rule(
    "mount-transition",
    "AM-025",
    "always",
    "a copy's mount state changes only as step.MOUNT_TABLE allows: mounted only after a mount request, "
    "dismounted only when mounted, a mount failure only for a pending request",
)
MOUNT_NOT_ACTIVE = Rule(
    "mount-not-active",
    "AM-009",
    "always",
    "a mount request names the copy holding the active designation: the designation moves first",
)
MINORITY_MOUNT = Rule(
    "minority-mount",
    "AM-009",
    "always",
    "a DAG database is never mounted on a server outside the quorum (AM-I13): no mount request or "
    "mount there, and a copy left mounted there is dismounted before the majority next acts",
)
COPY_STATUS_TRANSITION = Rule(
    "copy-status-transition",
    "AM-016",
    "always",
    "a copy's reported status changes only as step.STATUS_TABLE allows: Mounted follows a mount, leaving "
    "Mounted follows a dismount, ServiceDown follows the view, other changes only while the server runs",
)
ACTIVE_RECORD = Rule(
    "active-record", "AM-016", "always", "an ACTIVE_MOVE's source is the copy that holds the active designation"
)
COPY_CONFIG_RECORD = Rule(
    "copy-config-record",
    "AM-034",
    "always",
    "the activation policy a COPY_STATE restates (blocked, suspended) is the one configured (AM_CONFIG)",
)
LOCATION_ANSWER = Rule(
    "location-answer",
    "AM-019",
    "always",
    "a SAM's answer to where a database is active names the copy mounted last",
)
STANDALONE_NO_FAILOVER = Rule(
    "standalone-no-failover", "AM-002", "always", "no BCSS run for a database outside any DAG"
)

# --- BCSS (AM-022..AM-051) ---
MOUNT_OUTSIDE_BCSS = Rule(
    "mount-outside-bcss",
    "AM-022",
    "always",
    "after its first mount a DAG database is mounted only by a BCSS run, or remounted on the source "
    "after a switchover or responder run found nothing",
)
ACLL_SOURCE = Rule(
    "acll-source",
    "AM-023",
    "always",
    "ACLL brings a copy no further than the logs generated, and not at all from an unreachable source",
)
DIAL = Rule(
    "dial",
    "AM-024",
    "always",
    "a copy is mounted only if its missing logs after ACLL are within the recorded dial's threshold, "
    "and a copy within it is not passed over",
    DIAL_PARAMS,
)
ACLL_RECORD = Rule(
    "acll-record",
    "AM-024",
    "always",
    "what ACLL_END restates (logs before, missing logs, threshold, verdict) equals what the recorded "
    "copy states, last log and configured dials and thresholds make it",
    DIAL_PARAMS,
)
NEVER_BLOCKED = Rule(
    "never-blocked",
    "AM-034",
    "always",
    "a blocked, suspended or unreachable copy is left out of the candidates: never tried, never activated",
)
NEXT_BEST_COPY = Rule(
    "next-best-copy",
    "AM-025",
    "always",
    "after a copy does not mount (or is over the dial) the PAM goes on with the next best copy: no copy is "
    "tried or mounted twice in one BCSS run (AM-I12)",
)
SORT_COPY_QUEUE = Rule(
    "sort-copy-queue",
    "AM-035",
    "always",
    "with no Lossless server and no lossless switchover, copies admitted at the same tier and criteria set "
    "are tried by copy queue length, then activation preference",
    ORDER_PARAMS,
)
SORT_LOSSLESS_DIAL = Rule(
    "sort-lossless-dial",
    "AM-036",
    "always",
    "when a server of the database is Lossless, copies admitted at the same tier and criteria set are "
    "tried by activation preference",
    ORDER_PARAMS,
)
SORT_LOSSLESS_SWITCHOVER = Rule(
    "sort-lossless-switchover",
    "AM-037",
    "always",
    "in a lossless switchover without a target, copies admitted at the same tier and criteria set are "
    "tried by activation preference, whatever the dials",
    ORDER_PARAMS,
)
SELECTION_ORDER = Rule(
    "selection-order",
    "AM-039",
    "always",
    "the copies tried follow the tiers and criteria sets in the order the seed allows (copies equal on "
    "every sort key in any order), and a run gives up only after trying them all",
    ORDER_PARAMS,
)
BCSS_RECORD = Rule(
    "bcss-record",
    "AM-039",
    "always",
    "what BCSS_START restates (trigger, source, sort, the ordered list) equals what the preceding events "
    "make it; the recorded list is one of the orders the seed allows (a record: where a rule on the run's "
    "behaviour fires too, that rule is reported, this one as its evidence)",
    ORDER_PARAMS,
)
RESPONDER_TARGET = Rule(
    "responder-target",
    "AM-032",
    "always",
    "a failover started by a component's responder lands on a server healthier in that component",
    ("AM-P11",),
)
ACLL_BEFORE_MOUNT = Rule(
    "acll-before-mount",
    "AM-051",
    "always",
    "within a BCSS run, ACLL for a copy is recorded before the mount request for it",
)

RULES: dict[str, Rule] = table(
    __name__,
    "am",
    [
        SINGLE_PAM,
        PAM_OWNS_QUORUM,
        PAM_MOVES_WITH_QUORUM,
        PAM_TRANSITION,
        DAG_RECORD,
        PAM_BEFORE_MAINTENANCE,
        ROLE_RECORD,
        ONLY_PAM_ACTIVATES,
        SAM_ASKS_PAM,
        ONE_ACTIVE_COPY,
        MOUNT_TRANSITION,
        MOUNT_NOT_ACTIVE,
        MINORITY_MOUNT,
        COPY_STATUS_TRANSITION,
        ACTIVE_RECORD,
        COPY_CONFIG_RECORD,
        LOCATION_ANSWER,
        STANDALONE_NO_FAILOVER,
        MOUNT_OUTSIDE_BCSS,
        ACLL_SOURCE,
        DIAL,
        ACLL_RECORD,
        NEVER_BLOCKED,
        NEXT_BEST_COPY,
        SORT_COPY_QUEUE,
        SORT_LOSSLESS_DIAL,
        SORT_LOSSLESS_SWITCHOVER,
        SELECTION_ORDER,
        BCSS_RECORD,
        RESPONDER_TARGET,
        ACLL_BEFORE_MOUNT,
    ],
)
require(*(r.requirement for r in RULES.values()), *(p for r in RULES.values() for p in r.params))


# ---- state-level invariants, one statement each (used by the monitor and by check_world) --------------


def doubly_mounted(w: World) -> list[tuple[str, list[str]]]:
    """AM-009: databases mounted on more than one copy."""
    return [(db, sorted(d.on)) for db, d in sorted(w.dbs.items()) if len(d.on) > 1]


def pams_outside_quorum(w: World) -> list[str]:
    """AM-005: servers acting as PAM without being in the quorum."""
    return sorted(w.claims - (w.quorum() or frozenset()))


def minority_mounted(w: World, db: str) -> list[str]:
    """AM-009 with AM-I13: servers outside the quorum on which a DAG database is mounted."""
    d = w.dbs[db]
    if d.dag is None:
        return []
    q = w.quorum() or frozenset()
    return sorted(d.on - q)
