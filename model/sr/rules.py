"""The rules table of shadow redundancy: every rule the monitor can report, as `traces.verdict.Rule`.

Seed 000, all sections. Each row names the requirement it enforces, its kind (`always`: checked at every
step of the fold in `step.py`; `eventually`: judged at a quiesced end-of-run SNAPSHOT under the fairness of
`properties.FAIRNESS`) and the catalogue parameters whose recorded values bound it (`Rule.params`). The
parameters no trace can show are listed with a reason in `spec/observability/sr.toml`. Rows are grouped by
what they guard: message creation, maintenance, state changes (`step.TRANSITIONS`), parameters, and the
records that restate something the monitor derives itself (issue 9, family 1).
"""

from __future__ import annotations

from spec.catalogue import require
from traces.verdict import Rule, table

# creation (SR-018..SR-048)
SHADOW_BEFORE_ACK = Rule(
    "shadow-before-ack",
    "SR-031",
    "always",
    "the sender is acknowledged only after the shadow server acknowledged the copy, or after creation failed",
)
REJECT_REQUIRED = Rule(
    "reject-required",
    "SR-021",
    "always",
    "with RejectMessageOnShadowFailure no message is accepted without a shadow",
    ("SR-P02",),
)
SHADOW_WHILE_INBOUND_OPEN = Rule(
    "shadow-while-inbound-open",
    "SR-028",
    "always",
    "the shadow session is opened while the sender's session is open",
)
SHADOW_IN_BOUNDARY = Rule(
    "shadow-in-boundary",
    "SR-015",
    "always",
    "the shadow lives on another Exchange 2013 server of the primary's boundary (recorded topology)",
)
SHADOW_PLACEMENT = Rule(
    "shadow-placement",
    "SR-044",
    "always",
    "shadow attempts follow the plan derived from the recorded ShadowMessagePreference of the primary, "
    "the retry counts and the topology; an attempt is skipped only when the topology has no eligible "
    "server",
    ("SR-P03", "SR-P04", "SR-P05", "SR-P18", "SR-P21"),
)
SHADOW_DISABLED = Rule(
    "shadow-disabled",
    "SR-018",
    "always",
    "no shadow is made when shadow redundancy is disabled",
    ("SR-P01",),
)
SHADOW_ACK_AFTER_STORE = Rule(
    "shadow-ack-after-store",
    "SR-030",
    "always",
    "a shadow acknowledgement follows the shadow's store",
)
FAILURE_OUTCOME = Rule(
    "failure-outcome",
    "SR-040",
    "always",
    "a failed shadow leads to reject or accept exactly as configured",
    ("SR-P01", "SR-P02"),
)
REJECTION_TEXT = Rule(
    "rejection-text",
    "SR-020",
    "always",
    "the rejection is exactly 451 4.4.0 Message failed to be made redundant",
    ("SR-P20",),
)
NO_XSHADOW_ADVERTISED = Rule(
    "no-xshadow-advertised",
    "SR-036",
    "always",
    "a 2013 server never advertises XSHADOW",
)
SESSION_TIMEOUT = Rule(
    "session-timeout",
    "SR-039",
    "always",
    "a shadow session times out no earlier than min(Send, Receive ConnectionInactivityTimeout) after it "
    "opened; the sender's session at any moment after RECEIVE (ConnectionTimeout counts from the "
    "connection's opening) but is neither timed out nor answered later than ConnectionTimeout after "
    "RECEIVE (SR-I22)",
    ("SR-P06", "SR-P09", "SR-P12"),
)
# maintenance (SR-050..SR-067)
NO_PREMATURE_DISCARD = Rule(
    "no-premature-discard",
    "SR-062",
    "always",
    "a fork's discard notification follows its processing by the primary",
)
DISCARD_BY_QUERY = Rule(
    "discard-by-query",
    "SR-053",
    "always",
    "a discard notification arrives only in answer to a successful XQUERYDISCARD of that primary",
)
ALL_FORKS_BEFORE_RELEASE = Rule(
    "all-forks-before-release",
    "SR-063",
    "always",
    "the shadow is released only after every fork's discard notification",
)
PRIMARY_KEEPS_COPY = Rule(
    "primary-keeps-copy",
    "SR-007",
    "always",
    "the primary keeps its copy until every fork is processed",
)
PROMOTION_TIMING = Rule(
    "promotion-timing",
    "SR-058",
    "always",
    "a shadow takes ownership for ShadowResubmitTimeSpan only when it has not reached the primary "
    "(derived from the recorded sessions and faults) for that long and the primary is unreachable",
    ("SR-P14",),
)
PROMOTION_DB_CHANGE = Rule(
    "promotion-db-change",
    "SR-059",
    "always",
    "a database-ID promotion needs a successful session that saw the primary's new transport database; after "
    "such a session the shadows made under the old database are promoted within ShadowHeartbeatFrequency (SR-I07)",
    ("SR-P13",),
)
PROMOTION_OVERDUE = Rule(
    "promotion-overdue",
    "SR-058",
    "always",
    "after a failed session to a primary unreached for ShadowResubmitTimeSpan, no shadow for it stays unpromoted",
    ("SR-P14",),
)
HEARTBEAT_FREQUENCY = Rule(
    "heartbeat-frequency",
    "SR-055",
    "always",
    "a running shadow server queries each primary it holds shadows for at least every ShadowHeartbeatFrequency",
    ("SR-P13",),
)
HEARTBEAT_NOT_EARLY = Rule(
    "heartbeat-not-early",
    "SR-078",
    "always",
    "a shadow server's heartbeats to one primary come no sooner than ShadowHeartbeatFrequency apart while"
    " it stays up (queries carried by other sessions are not heartbeats; SR-I30)",
    ("SR-P13",),
)
NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY = Rule(
    "no-safetynet-resubmit-across-boundary",
    "SR-033",
    "always",
    "Safety Net never resubmits what crossed the boundary",
)
NO_SAFETYNET_RESUBMIT_TO_2010 = Rule(
    "no-safetynet-resubmit-to-2010",
    "SR-038",
    "always",
    "Safety Net never resubmits to an Exchange 2010 Hub",
)
DUPLICATES_DOCUMENTED = Rule(
    "duplicates-documented",
    "SR-076",
    "always",
    "a second delivery happens only in a documented scenario",
)
DUPLICATE_HIDDEN_FROM_MAILBOX = Rule(
    "duplicate-hidden-from-mailbox",
    "SR-073",
    "always",
    "duplicates never reach Exchange mailbox users",
)
# parameters that bound how long something is kept (issue 9, family 2)
SHADOW_EXPIRY = Rule(
    "shadow-expiry",
    "SR-066",
    "always",
    "an unacknowledged shadow expires SafetyNetHoldTime + MessageExpirationTimeout after it was made: not"
    " earlier, and not later than a quiesced end of run",
    ("SR-P16", "SR-P17"),
)
QUEUE_EXPIRY = Rule(
    "queue-expiry",
    "SR-067",
    "always",
    "queued forks expire no earlier than MessageExpirationTimeout after RECEIVE, and none is still queued"
    " at a quiesced end of run more than MessageExpirationTimeout after its queue took it",
    ("SR-P17",),
)
SAFETYNET_HOLD = Rule(
    "safetynet-hold",
    "SR-065",
    "always",
    "a processed message stays in Safety Net SafetyNetHoldTime: removed not earlier, and not still there "
    "later at a quiesced end of run",
    ("SR-P16",),
)
AUTO_DISCARD_INTERVAL = Rule(
    "auto-discard-interval",
    "SR-064",
    "always",
    "a primary deletes queued discard events only after the shadow server has not queried it for "
    "ShadowMessageAutoDiscardInterval",
    ("SR-P15",),
)
# state changes outside the protocol (issue 9, family 3): `step.TRANSITIONS`
PRIMARY_COPY_TRANSITION = Rule(
    "primary-copy-transition",
    "SR-027",
    "always",
    "the primary copy (receiving, queued, refused, failed) changes only by the events of step.TRANSITIONS",
)
SHADOW_COPY_TRANSITION = Rule(
    "shadow-copy-transition",
    "SR-008",
    "always",
    "a shadow copy is stored only when asked for and leaves the shadow queue only by release, promotion, "
    "expiry or loss (step.TRANSITIONS)",
)
SAFETYNET_TRANSITION = Rule(
    "safetynet-transition",
    "SR-012",
    "always",
    "a copy enters Safety Net only once processed or released, and is resubmitted or removed only from there",
)
DISCARD_QUEUE_TRANSITION = Rule(
    "discard-queue-transition",
    "SR-011",
    "always",
    "a discard notification or deletion concerns a discard event the primary queued and still holds",
)
# records that restate what the monitor derives (issue 9, family 1)
CONFIG_AS_RECORDED = Rule(
    "config-as-recorded",
    "SR-077",
    "always",
    "a record restating a setting shows the recorded configuration's value",
)
TOPOLOGY_AS_RECORDED = Rule(
    "topology-as-recorded",
    "SR-006",
    "always",
    "a record naming a boundary or a site agrees with the recorded topology",
)
DATABASE_ID_AS_RECORDED = Rule(
    "database-id-as-recorded",
    "SR-068",
    "always",
    "a server's database ID changes exactly when it restarts with a new transport database",
)
PRIMARY_RECORD_AS_DERIVED = Rule(
    "primary-record-as-derived",
    "SR-060",
    "always",
    "the primary's records (attempt numbers, final failures, reachability, which copy delivered) agree "
    "with the events seen",
)
SHADOW_RECORD_AS_DERIVED = Rule(
    "shadow-record-as-derived",
    "SR-061",
    "always",
    "the shadow's records (its primary, forks, shadows held, last contact, session success) agree with "
    "the events and recorded faults seen",
)
# end of run
NO_LOSS = Rule(
    "no-loss",
    "SR-075",
    "eventually",
    "every accepted message reaches all its destinations unless both copy holders lost their database",
)
SHADOW_RELEASED = Rule(
    "shadow-released",
    "SR-057",
    "eventually",
    "every shadow of a fully processed message is eventually released (discard persisted)",
)

RULES: dict[str, Rule] = table(
    __name__,
    "sr",
    [
        SHADOW_BEFORE_ACK,
        REJECT_REQUIRED,
        SHADOW_WHILE_INBOUND_OPEN,
        SHADOW_IN_BOUNDARY,
        SHADOW_PLACEMENT,
        SHADOW_DISABLED,
        SHADOW_ACK_AFTER_STORE,
        FAILURE_OUTCOME,
        REJECTION_TEXT,
        NO_XSHADOW_ADVERTISED,
        SESSION_TIMEOUT,
        NO_PREMATURE_DISCARD,
        DISCARD_BY_QUERY,
        ALL_FORKS_BEFORE_RELEASE,
        PRIMARY_KEEPS_COPY,
        PROMOTION_TIMING,
        PROMOTION_DB_CHANGE,
        PROMOTION_OVERDUE,
        HEARTBEAT_FREQUENCY,
        HEARTBEAT_NOT_EARLY,
        NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY,
        NO_SAFETYNET_RESUBMIT_TO_2010,
        DUPLICATES_DOCUMENTED,
        DUPLICATE_HIDDEN_FROM_MAILBOX,
        SHADOW_EXPIRY,
        QUEUE_EXPIRY,
        SAFETYNET_HOLD,
        AUTO_DISCARD_INTERVAL,
        PRIMARY_COPY_TRANSITION,
        SHADOW_COPY_TRANSITION,
        SAFETYNET_TRANSITION,
        DISCARD_QUEUE_TRANSITION,
        CONFIG_AS_RECORDED,
        TOPOLOGY_AS_RECORDED,
        DATABASE_ID_AS_RECORDED,
        PRIMARY_RECORD_AS_DERIVED,
        SHADOW_RECORD_AS_DERIVED,
        NO_LOSS,
        SHADOW_RELEASED,
    ],
)
require(*(r.requirement for r in RULES.values()), "SR-045", "SR-046", "SR-047", "SR-016", "SR-029")
require(*(p for r in RULES.values() for p in r.params))
