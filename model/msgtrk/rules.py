"""The rules table of the imported-log monitor (`model.msgtrk.monitor`), as `traces.verdict.Rule` constants.

Seed 000 ("How shadow messages are created", "How shadow messages are maintained", "SMTP timeouts",
"Message processing after an outage", "Messages sent outside a transport high availability boundary"),
read for tracking logs as interpretations SR-I26, SR-I27, SR-I28 and SR-I31 (`S:Replication`), and for SMTP
protocol logs as SR-I29. The
monitor reports only these rules, named by their constants (`R.SHADOW_IN_BOUNDARY.violated(...)`).
"""

from __future__ import annotations

from spec.catalogue import require
from traces.verdict import Rule, table

IMPORT_START_FIRST = Rule(
    "msgtrk-import-start-first",
    "TR-008",
    "always",
    "a trace holding imported log rows begins with IMPORT_START, so its rule set can be decided",
)
SHADOW_ON_OTHER_SERVER = Rule(
    "msgtrk-shadow-on-other-server", "SR-028", "always", "a primary server makes its shadow on another server"
)
SHADOW_IN_BOUNDARY = Rule(
    "msgtrk-shadow-in-boundary", "SR-015", "always", "the shadow server is inside the primary's boundary"
)
SHADOW_BEFORE_NEXT_HOP = Rule(
    "msgtrk-shadow-before-next-hop",
    "SR-001",
    "always",
    "the primary records the shadow's acknowledgement (HAREDIRECT) before the message's next hop",
)
SHADOW_UNCONFIRMED = Rule(
    "msgtrk-shadow-unconfirmed",
    "SR-030",
    "always",
    "a shadow acknowledgement the primary records has its HARECEIVE in the shadow's log, where that log covers it",
)
DISCARD_AFTER_NEXT_HOP = Rule(
    "msgtrk-discard-after-next-hop",
    "SR-052",
    "always",
    "a shadow is discarded only after the primary delivered the message to its next hop",
)
PROMOTION_AFTER_DISCARD = Rule(
    "msgtrk-promotion-after-discard",
    "SR-062",
    "always",
    "a shadow already discarded is not promoted (resubmitted) afterwards",
)
RESUBMIT_ACROSS_BOUNDARY = Rule(
    "msgtrk-resubmit-across-boundary",
    "SR-025",
    "always",
    "a shadow is resubmitted only by a server inside the boundary of the primary that made it",
)
SAFETYNET_AFTER_BOUNDARY_EXIT = Rule(
    "msgtrk-safetynet-after-boundary-exit",
    "SR-033",
    "always",
    "a primary does not resubmit from Safety Net a message it already sent across its boundary",
)
SHADOW_FAILURE_ACCEPT = Rule(
    "msgtrk-shadow-failure-accept",
    "SR-019",
    "always",
    "with RejectMessageOnShadowFailure off, a failed shadow attempt still accepts the message",
)
SHADOW_FAILURE_REJECT = Rule(
    "msgtrk-shadow-failure-reject",
    "SR-021",
    "always",
    "with RejectMessageOnShadowFailure on, a message whose shadow failed does not go on without one",
)
REJECTION_TEXT = Rule(
    "msgtrk-rejection-text",
    "SR-020",
    "always",
    "a rejection for a failed shadow reads 451 4.4.0 (or 450 4.5.1 where that variant is recorded)",
)
# judged on the primary's RECEIVE rows' custom-data `S:Replication` (`model.msgtrk.replication`, SR-I31)
REPLICATION_OTHER_SERVER = Rule(
    "msgtrk-replication-other-server",
    "SR-028",
    "always",
    "the shadow server a primary's RECEIVE names in S:Replication is another server than the primary",
)
REPLICATION_FAILED_REJECT = Rule(
    "msgtrk-replication-failed-reject",
    "SR-021",
    "always",
    "with RejectMessageOnShadowFailure on, a message whose RECEIVE records S:Replication=Failed does not go on",
)
# judged on SMTP protocol logs (`model.msgtrk.smtpmon`, interpretation SR-I29)
SMTP_ACK_AFTER_SHADOW = Rule(
    "smtp-ack-after-shadow",
    "SR-031",
    "always",
    "the primary acknowledges the message to the sender only after the shadow's acknowledgement, on its clock",
)
SMTP_ACK_DESPITE_SHADOW_FAILURE = Rule(
    "smtp-ack-despite-shadow-failure",
    "SR-021",
    "always",
    "with RejectMessageOnShadowFailure on, a message whose shadow failed is not acknowledged to the sender",
)
SMTP_SHADOW_SESSION_ANNOUNCED = Rule(
    "smtp-shadow-session-announced",
    "SR-030",
    "always",
    "a session that queues mail for redundancy sent XSHADOWREQUEST (or XSHADOW) before MAIL FROM",
)
SMTP_SHADOW_SESSION_DISCARD_QUERY = Rule(
    "smtp-shadow-session-discard-query",
    "SR-054",
    "always",
    "a shadow server holding a primary's shadow queries discard status in every session it opens to it",
)
RULES: dict[str, Rule] = table(
    __name__,
    "msgtrk",
    [
        IMPORT_START_FIRST,
        SHADOW_ON_OTHER_SERVER,
        SHADOW_IN_BOUNDARY,
        SHADOW_BEFORE_NEXT_HOP,
        SHADOW_UNCONFIRMED,
        DISCARD_AFTER_NEXT_HOP,
        PROMOTION_AFTER_DISCARD,
        RESUBMIT_ACROSS_BOUNDARY,
        SAFETYNET_AFTER_BOUNDARY_EXIT,
        SHADOW_FAILURE_ACCEPT,
        SHADOW_FAILURE_REJECT,
        REJECTION_TEXT,
        REPLICATION_OTHER_SERVER,
        REPLICATION_FAILED_REJECT,
        SMTP_ACK_AFTER_SHADOW,
        SMTP_ACK_DESPITE_SHADOW_FAILURE,
        SMTP_SHADOW_SESSION_ANNOUNCED,
        SMTP_SHADOW_SESSION_DISCARD_QUERY,
    ],
)
SMTP_RULES = (
    SMTP_ACK_AFTER_SHADOW,
    SMTP_ACK_DESPITE_SHADOW_FAILURE,
    SMTP_SHADOW_SESSION_ANNOUNCED,
    SMTP_SHADOW_SESSION_DISCARD_QUERY,
)
BOUNDARY_RULES = (SHADOW_IN_BOUNDARY, RESUBMIT_ACROSS_BOUNDARY, SAFETYNET_AFTER_BOUNDARY_EXIT)
require(*(r.requirement for r in RULES.values()))
