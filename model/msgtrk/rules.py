"""The rules table of the imported-log monitor (`model.msgtrk.monitor`), as `traces.verdict.Rule` rows.

Seed 000 ("How shadow messages are created", "How shadow messages are maintained", "SMTP timeouts",
"Message processing after an outage", "Messages sent outside a transport high availability boundary"),
read for tracking logs as interpretations SR-I26, SR-I27 and SR-I28, and for SMTP protocol logs as SR-I29. The
monitor reports only these names.
"""

from __future__ import annotations

from spec.catalogue import require
from traces.verdict import Rule

_ROWS = (
    Rule(
        "msgtrk-import-start-first",
        "TR-008",
        "always",
        "a trace holding imported log rows begins with IMPORT_START, so its rule set can be decided",
    ),
    Rule("msgtrk-shadow-on-other-server", "SR-028", "always", "a primary server makes its shadow on another server"),
    Rule("msgtrk-shadow-in-boundary", "SR-015", "always", "the shadow server is inside the primary's boundary"),
    Rule(
        "msgtrk-shadow-before-next-hop",
        "SR-001",
        "always",
        "the primary records the shadow's acknowledgement (HAREDIRECT) before the message's next hop",
    ),
    Rule(
        "msgtrk-shadow-unconfirmed",
        "SR-030",
        "always",
        "a shadow acknowledgement the primary records has its HARECEIVE in the shadow's log, where that log covers it",
    ),
    Rule(
        "msgtrk-discard-after-next-hop",
        "SR-052",
        "always",
        "a shadow is discarded only after the primary delivered the message to its next hop",
    ),
    Rule(
        "msgtrk-promotion-after-discard",
        "SR-062",
        "always",
        "a shadow already discarded is not promoted (resubmitted) afterwards",
    ),
    Rule(
        "msgtrk-resubmit-across-boundary",
        "SR-025",
        "always",
        "a shadow is resubmitted only by a server inside the boundary of the primary that made it",
    ),
    Rule(
        "msgtrk-safetynet-after-boundary-exit",
        "SR-033",
        "always",
        "a primary does not resubmit from Safety Net a message it already sent across its boundary",
    ),
    Rule(
        "msgtrk-shadow-failure-accept",
        "SR-019",
        "always",
        "with RejectMessageOnShadowFailure off, a failed shadow attempt still accepts the message",
    ),
    Rule(
        "msgtrk-shadow-failure-reject",
        "SR-021",
        "always",
        "with RejectMessageOnShadowFailure on, a message whose shadow failed does not go on without one",
    ),
    Rule(
        "msgtrk-rejection-text",
        "SR-020",
        "always",
        "a rejection for a failed shadow reads 451 4.4.0 (or 450 4.5.1 where that variant is recorded)",
    ),
)
_SMTP_ROWS = (  # judged on SMTP protocol logs (`model.msgtrk.smtpmon`, interpretation SR-I29)
    Rule(
        "smtp-ack-after-shadow",
        "SR-031",
        "always",
        "the primary acknowledges the message to the sender only after the shadow's acknowledgement, on its clock",
    ),
    Rule(
        "smtp-ack-despite-shadow-failure",
        "SR-021",
        "always",
        "with RejectMessageOnShadowFailure on, a message whose shadow failed is not acknowledged to the sender",
    ),
    Rule(
        "smtp-shadow-session-announced",
        "SR-030",
        "always",
        "a session that queues mail for redundancy sent XSHADOWREQUEST (or XSHADOW) before MAIL FROM",
    ),
    Rule(
        "smtp-shadow-session-discard-query",
        "SR-054",
        "always",
        "a shadow server holding a primary's shadow queries discard status in every session it opens to it",
    ),
)
RULES: dict[str, Rule] = {r.name: r for r in (*_ROWS, *_SMTP_ROWS)}
require(*(r.requirement for r in RULES.values()))
