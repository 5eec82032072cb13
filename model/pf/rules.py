"""The rules table of the public folder monitor (`RULES`), and the transitions and decisions re-exported.

One module-level `traces.verdict.Rule` constant per rule the monitor can report (`R.PACKING_LIMITS`), used
as an object at every call site, and `RULES`, the table of them by name in the same order (issue 29;
`traces.verdict.table` stamps each with the mechanism "pf"). Each names the requirement it enforces (seeds
001, 003, 004 via `spec/requirements/pf.toml` and `bf.toml`), its kind and the catalogue parameters whose
recorded values bound it. The transitions live in `step.py` and the decisions in `decisions.py`; their names
stay importable from here (`R.receive`, `R.pack`, ...) for older callers, and `Rules` is the old name of
`decisions.Decisions`.
"""

from __future__ import annotations

from model.pf.decisions import (  # noqa: F401  (re-exported names)
    DECISIONS,
    Candidate,
    Decisions,
    candidates,
    choice_allowed,
    delete_ready,
    entry_delay,
    entry_due,
    file_entry,
    fits,
    fold_view,
    is_local,
    may_answer,
    others,
    pack,
    requires_response,
    retry_delay,
    select_sources,
    should_answer,
)
from model.pf.step import (  # noqa: F401
    REPLICA_TRANSITIONS,
    Reaction,
    backfill_tick,
    delete_now,
    due_entries,
    enter_delete_pending,
    is_thread_time,
    local_change,
    new_replica,
    next_thread_time,
    receive,
    relocalise,
    status_due,
    status_sent,
    take_unsent,
    transition,
)
from spec.catalogue import require
from traces.verdict import Rule, table

Rules = Decisions  # the old name of the decision bundle

_LADDER = ("BF-P01", "BF-P02", "BF-P03", "BF-P04", "BF-P05", "BF-P06", "BF-P07", "BF-P09")


# --- the original invariants ------------------------------------------------------------------
PACKING_SEPARATION = Rule(
    "packing-separation",
    "PF-010",
    "always",
    "a message carries hierarchy updates only for 1-1, content updates of its own folder only",
)
PACKING_LIMITS = Rule(
    "packing-limits",
    "PF-011",
    "always",
    "at most 20 folders / 500 deletes / 100 items, 300 KB per message (one oversized post alone)",
    ("PF-P08", "PF-P09", "PF-P10", "PF-P11"),
)
CNSET_CARRIED = Rule("cnset-carried", "PF-013", "always", "every message carries the sender's current CNSet")
CONTENT_TO_REPLICAS_ONLY = Rule(
    "content-to-replicas-only", "PF-016", "always", "content goes only to replicas of the folder"
)
NON_REPLICATING_FOLDER = Rule(
    "non-replicating-folder", "PF-004", "always", "a folder with no hierarchy entry never replicates"
)
NO_EMPTY_BROADCAST = Rule(
    "no-empty-broadcast", "PF-024", "always", "a replication event with nothing to send sends nothing"
)
STATUS_STRICT_SUBSET = Rule(
    "status-strict-subset",
    "PF-021",
    "always",
    "a status answer only to a strict-subset requester (or a delete-pending one, derived from its state)",
)
STATUS_EXPIRY = Rule(
    "status-expiry",
    "PF-029",
    "always",
    "an expiry status only at a status-thread run at or after the expiry derived from local changes",
    ("PF-P04", "PF-P05", "PF-P06", "PF-P12"),
)
BACKFILL_BEFORE_TIMEOUT = Rule(
    "backfill-before-timeout",
    "BF-006",
    "always",
    "no backfill request before its entry's time-out (derived from the recorded ladder)",
    _LADDER,
)
BACKFILL_WITHOUT_GAP = Rule("backfill-without-gap", "BF-002", "always", "no request for change numbers already held")
BACKFILL_SOURCE_ORDER = Rule(
    "backfill-source-order",
    "BF-011",
    "always",
    "sources chosen by the five keys in order, a server down or unavailable (marked down, crashed and not "
    "restarted, across a partition: BF-I16) last; any order of candidates tied on all five is allowed",
    ("BF-P10",),
)
BACKFILL_RESPONSE_ADDRESSING = Rule(
    "backfill-response-addressing", "BF-018", "always", "a response goes only to the requester"
)
DELETE_NOW_AFTER_STATUS = Rule(
    "delete-now-after-status",
    "BF-032",
    "always",
    "delete now only after status from the other active replicas (all, or one: BF-I06) showing everything",
    ("BF-P08",),
)
NO_CONTENT_LOSS = Rule(
    "no-content-loss",
    "BF-033",
    "always",
    "at delete now, the other active replicas together hold every change of the deleted one",
)
REDIRECT_TO_ACTIVE_REPLICA = Rule(
    "redirect-to-active-replica", "BF-035", "always", "clients are redirected only to an active replica"
)
CONVERGENCE = Rule(
    "convergence",
    "PF-035",
    "eventually",
    "after the quiescent phase's bound (derived from the recorded configuration), all active replicas of "
    "a folder hold the same CNSet; the phase's start is taken from END only when no recorded fault (a "
    "store down, a partition, mail loss) is in force at or after it, and a trace ending before the "
    "bound leaves convergence unjudged; an END after the bound is judged for the bound",
    ("PF-P01", "PF-P02", "PF-P07", "BF-P02", "BF-P04", "BF-P06"),
)

# --- family 1: nothing taken on trust -----------------------------------------------------------
RECORDED_CONFIG = Rule(
    "recorded-config",
    "BF-011",
    "always",
    "costs, versions, preferred servers and parameters a store records agree with the run's PF_CONFIG",
)
REQUIRES_RESPONSE_DERIVED = Rule(
    "requires-response-derived",
    "BF-029",
    "always",
    "a status request requires a response exactly when its sender's replica is delete pending",
)
BACKFILL_ENTRY_DERIVED = Rule(
    "backfill-entry-derived",
    "BF-005",
    "always",
    "a backfill entry is filed exactly when a message reveals a gap, with the derived time-out and locality "
    "(a new replica's under any reading of BF-I17, one per store)",
    _LADDER,
)
RESTATED_STATE = Rule(
    "restated-state",
    "PF-032",
    "always",
    "attributes restating replica state (END, DELETE_NOW, STATUS_EXPIRED, REPL_RECV) agree with the "
    "state derived from the events seen, and the quiescent phase an END states with the recorded faults",
)

# --- family 2: the replication intervals --------------------------------------------------------
BROADCAST_INTERVAL = Rule(
    "broadcast-interval",
    "PF-023",
    "always",
    "an active replica's unsent local changes go out at the next replication event, within the "
    "hierarchy (5 min) or content (15 min) interval while the store is up",
    ("PF-P01", "PF-P02"),
)
BROADCAST_NOT_EARLY = Rule(
    "broadcast-not-early",
    "PF-038",
    "always",
    "two regular broadcasts of a store, hierarchy (content), come at least ReplicationSendFolderTree "
    "(ReplicationSendAlways) apart while it stays up; a broadcast at the instant of a local change is "
    "allowed at any time (PF-I17)",
    ("PF-P01", "PF-P02"),
)
STATUS_THREAD_LATE = Rule(
    "status-thread-late",
    "PF-030",
    "always",
    "a folder whose status expiry is reached gets its status at the first thread run at or after it",
    ("PF-P04", "PF-P05", "PF-P06", "PF-P12"),
)
BACKFILL_CHECK_LATE = Rule(
    "backfill-check-late",
    "BF-007",
    "always",
    "an entry whose time-out expired is acted on within ReplicationTimeout while the store is up",
    ("PF-P07", *_LADDER),
)
BACKFILL_CHECK_NOT_EARLY = Rule(
    "backfill-check-not-early",
    "BF-036",
    "always",
    "two backfill checks of a store that act on due entries come at least ReplicationTimeout apart while it stays up",
    ("PF-P07",),
)
MAINTENANCE_REMOVAL = Rule(
    "maintenance-removal",
    "BF-034",
    "always",
    "a delete-now replica is removed, and its removal announced by a 1-1 change of its store, at the next "
    "maintenance cycle (hierarchy event, BF-I13)",
    ("PF-P01",),
)
DELETE_PENDING_REQUESTS = Rule(
    "delete-pending-requests",
    "BF-029",
    "always",
    "a delete-pending replica with other replicas repeats its status request every content interval (BF-I12)",
    ("PF-P02",),
)

# --- family 3: state changes only through the protocol -------------------------------------------
REPLICA_LIST_DERIVED = Rule(
    "replica-list-derived",
    "PF-025",
    "always",
    "a store's replica list is the fold of the hierarchy changes it holds (PF-I14)",
)
REPLICA_CREATED_BY_HIERARCHY = Rule(
    "replica-created-by-hierarchy",
    "BF-021",
    "always",
    "a content replica is created only when the store's replica list (from hierarchy changes) names it",
)
REPLICA_STATE_TRANSITION = Rule(
    "replica-state-transition",
    "BF-029",
    "always",
    "a replica's state changes only along step.REPLICA_TRANSITIONS, each route with its condition",
)
REMOVAL_ANNOUNCED_AFTER_DELETE_NOW = Rule(
    "removal-announced-after-delete-now",
    "BF-034",
    "always",
    "a hierarchy change removing a store's replica is made only by that store once its replica is delete now "
    "(before or after the maintenance cycle removes it)",
)
SERVED_BY_ACTIVE_REPLICA = Rule(
    "served-by-active-replica",
    "BF-028",
    "always",
    "a store serves a client from its replica only when that replica is active",
)
MESSAGE_ROUTE = Rule(
    "message-route",
    "PF-018",
    "always",
    "every message has a route the seeds allow: a status is a reply or follows STATUS_EXPIRED, a push "
    "comes from a delete-pending replica, a backfill response answers a request to its sender",
)

RULES: dict[str, Rule] = table(
    __name__,
    "pf",
    [
        PACKING_SEPARATION,
        PACKING_LIMITS,
        CNSET_CARRIED,
        CONTENT_TO_REPLICAS_ONLY,
        NON_REPLICATING_FOLDER,
        NO_EMPTY_BROADCAST,
        STATUS_STRICT_SUBSET,
        STATUS_EXPIRY,
        BACKFILL_BEFORE_TIMEOUT,
        BACKFILL_WITHOUT_GAP,
        BACKFILL_SOURCE_ORDER,
        BACKFILL_RESPONSE_ADDRESSING,
        DELETE_NOW_AFTER_STATUS,
        NO_CONTENT_LOSS,
        REDIRECT_TO_ACTIVE_REPLICA,
        CONVERGENCE,
        RECORDED_CONFIG,
        REQUIRES_RESPONSE_DERIVED,
        BACKFILL_ENTRY_DERIVED,
        RESTATED_STATE,
        BROADCAST_INTERVAL,
        BROADCAST_NOT_EARLY,
        STATUS_THREAD_LATE,
        BACKFILL_CHECK_LATE,
        BACKFILL_CHECK_NOT_EARLY,
        MAINTENANCE_REMOVAL,
        DELETE_PENDING_REQUESTS,
        REPLICA_LIST_DERIVED,
        REPLICA_CREATED_BY_HIERARCHY,
        REPLICA_STATE_TRANSITION,
        REMOVAL_ANNOUNCED_AFTER_DELETE_NOW,
        SERVED_BY_ACTIVE_REPLICA,
        MESSAGE_ROUTE,
    ],
)

require(*(r.requirement for r in RULES.values()))
