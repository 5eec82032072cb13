"""The rules table of the public folder monitor (`RULES`), and the transitions and decisions re-exported.

`RULES` maps every rule name the monitor can report to its `traces.verdict.Rule`: the requirement it
enforces (seeds 001, 003, 004 via `spec/requirements/pf.toml` and `bf.toml`), its kind and the catalogue
parameters whose recorded values bound it. The transitions live in `step.py` and the decisions in
`decide.py`; their names stay importable from here (`R.receive`, `R.pack`, ...) for older callers, and
`Rules` is the old name of `decide.Decisions`.
"""

from __future__ import annotations

from model.pf.decide import (  # noqa: F401  (re-exported names)
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
from traces.verdict import Rule

Rules = Decisions  # the old name of the decision bundle

_LADDER = ("BF-P01", "BF-P02", "BF-P03", "BF-P04", "BF-P05", "BF-P06", "BF-P07", "BF-P09")


def _r(name: str, req: str, kind: str, statement: str, params: tuple[str, ...] = ()) -> Rule:
    return Rule(name, req, kind, statement, params)  # type: ignore[arg-type]


RULES: dict[str, Rule] = {
    r.name: r
    for r in (
        # --- the original invariants ------------------------------------------------------------------
        _r(
            "packing-separation",
            "PF-010",
            "always",
            "a message carries hierarchy updates only for 1-1, content updates of its own folder only",
        ),
        _r(
            "packing-limits",
            "PF-011",
            "always",
            "at most 20 folders / 500 deletes / 100 items, 300 KB per message (one oversized post alone)",
            ("PF-P08", "PF-P09", "PF-P10", "PF-P11"),
        ),
        _r("cnset-carried", "PF-013", "always", "every message carries the sender's current CNSet"),
        _r("content-to-replicas-only", "PF-016", "always", "content goes only to replicas of the folder"),
        _r("non-replicating-folder", "PF-004", "always", "a folder with no hierarchy entry never replicates"),
        _r("no-empty-broadcast", "PF-024", "always", "a replication event with nothing to send sends nothing"),
        _r(
            "status-strict-subset",
            "PF-021",
            "always",
            "a status answer only to a strict-subset requester (or a delete-pending one, derived from its state)",
        ),
        _r(
            "status-expiry",
            "PF-029",
            "always",
            "an expiry status only at a status-thread run at or after the expiry derived from local changes",
            ("PF-P04", "PF-P05", "PF-P06", "PF-P12"),
        ),
        _r(
            "backfill-before-timeout",
            "BF-006",
            "always",
            "no backfill request before its entry's time-out (derived from the recorded ladder)",
            _LADDER,
        ),
        _r("backfill-without-gap", "BF-002", "always", "no request for change numbers already held"),
        _r(
            "backfill-source-order",
            "BF-011",
            "always",
            "sources chosen by the five keys in order; any order of candidates tied on all five is allowed",
            ("BF-P10",),
        ),
        _r("backfill-response-addressing", "BF-018", "always", "a response goes only to the requester"),
        _r(
            "delete-now-after-status",
            "BF-032",
            "always",
            "delete now only after status from the other active replicas (all, or one: BF-I06) showing everything",
            ("BF-P08",),
        ),
        _r(
            "no-content-loss",
            "BF-033",
            "always",
            "at delete now, the other active replicas together hold every change of the deleted one",
        ),
        _r("redirect-to-active-replica", "BF-035", "always", "clients are redirected only to an active replica"),
        _r(
            "convergence",
            "PF-035",
            "eventually",
            "after the quiescent phase's bound (derived from the recorded configuration), all active replicas of "
            "a folder hold the same CNSet; the phase's start is taken from END only when no recorded fault (a "
            "store down, a partition, mail loss) is in force at or after it, and a trace ending before the "
            "bound leaves convergence unjudged",
            ("PF-P01", "PF-P02", "PF-P07", "BF-P02", "BF-P04", "BF-P06"),
        ),
        # --- family 1: nothing taken on trust -----------------------------------------------------------
        _r(
            "recorded-config",
            "BF-011",
            "always",
            "costs, versions, preferred servers and parameters a store records agree with the run's PF_CONFIG",
        ),
        _r(
            "requires-response-derived",
            "BF-029",
            "always",
            "a status request requires a response exactly when its sender's replica is delete pending",
        ),
        _r(
            "backfill-entry-derived",
            "BF-005",
            "always",
            "a backfill entry is filed exactly when a message reveals a gap, with the derived time-out and locality",
            _LADDER,
        ),
        _r(
            "restated-state",
            "PF-032",
            "always",
            "attributes restating replica state (END, DELETE_NOW, STATUS_EXPIRED, REPL_RECV) agree with the "
            "state derived from the events seen, and the quiescent phase an END states with the recorded faults",
        ),
        # --- family 2: the replication intervals --------------------------------------------------------
        _r(
            "broadcast-interval",
            "PF-023",
            "always",
            "an active replica's unsent local changes go out at the next replication event, within the "
            "hierarchy (5 min) or content (15 min) interval while the store is up",
            ("PF-P01", "PF-P02"),
        ),
        _r(
            "broadcast-not-early",
            "PF-038",
            "always",
            "two regular broadcasts of a store, hierarchy (content), come at least ReplicationSendFolderTree "
            "(ReplicationSendAlways) apart while it stays up; a broadcast at the instant of a local change is "
            "allowed at any time (PF-I17)",
            ("PF-P01", "PF-P02"),
        ),
        _r(
            "status-thread-late",
            "PF-030",
            "always",
            "a folder whose status expiry is reached gets its status at the first thread run at or after it",
            ("PF-P04", "PF-P05", "PF-P06", "PF-P12"),
        ),
        _r(
            "backfill-check-late",
            "BF-007",
            "always",
            "an entry whose time-out expired is acted on within ReplicationTimeout while the store is up",
            ("PF-P07", *_LADDER),
        ),
        _r(
            "backfill-check-not-early",
            "BF-036",
            "always",
            "two backfill checks of a store that act on due entries come at least ReplicationTimeout apart while it "
            "stays up",
            ("PF-P07",),
        ),
        _r(
            "maintenance-removal",
            "BF-034",
            "always",
            "a delete-now replica is removed at the next maintenance cycle (hierarchy event, BF-I13)",
            ("PF-P01",),
        ),
        _r(
            "delete-pending-requests",
            "BF-029",
            "always",
            "a delete-pending replica with other replicas repeats its status request every content interval (BF-I12)",
            ("PF-P02",),
        ),
        # --- family 3: state changes only through the protocol -------------------------------------------
        _r(
            "replica-list-derived",
            "PF-025",
            "always",
            "a store's replica list is the fold of the hierarchy changes it holds (PF-I14)",
        ),
        _r(
            "replica-created-by-hierarchy",
            "BF-021",
            "always",
            "a content replica is created only when the store's replica list (from hierarchy changes) names it",
        ),
        _r(
            "replica-state-transition",
            "BF-029",
            "always",
            "a replica's state changes only along step.REPLICA_TRANSITIONS, each route with its condition",
        ),
        _r(
            "removal-announced-after-delete-now",
            "BF-034",
            "always",
            "a hierarchy change removing a store's replica is made only by that store after its delete now",
        ),
        _r(
            "served-by-active-replica",
            "BF-028",
            "always",
            "a store serves a client from its replica only when that replica is active",
        ),
        _r(
            "message-route",
            "PF-018",
            "always",
            "every message has a route the seeds allow: a status is a reply or follows STATUS_EXPIRED, a push "
            "comes from a delete-pending replica, a backfill response answers a request to its sender",
        ),
    )
}

require(*(r.requirement for r in RULES.values()))
