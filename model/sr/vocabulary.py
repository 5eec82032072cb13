"""The shadow redundancy vocabulary (mechanism `sr`) as one table: every kind, who records it, its attributes
with types and meaning, and the ordering rules at one instant. Seed 000, all sections; the kinds themselves
are `model/sr/events.py`. Rendered into `conformance/PROTOCOL.md` and `traces/README.md` by
`haconform protocol-doc` (issue 18); a test fails when the simulator records a kind or attribute not here.
"""

from __future__ import annotations

from traces.vocabulary import Vocabulary, attr, kind

S, INT, B, LS = "string", "integer", "boolean", "list of strings"
INST = attr(
    "inst",
    INT,
    "instance of the message: a sender's redelivery of the same network message ID is a new instance (SR-043)",
)
MSG = "network message ID"
FORK = attr(
    "fork",
    S,
    "the destination: `mbx` (mailboxes in the boundary), `ext:<domain>` (a next hop outside the "
    "boundary), `hub:<server>` (an Exchange 2010 Hub of the site), `dsn`, `journal`",
)

VOCABULARY = Vocabulary(
    "sr",
    "shadow redundancy (seed 000)",
    (
        kind(
            "SR_CONFIG",
            "`sim` (or the harness)",
            "`config`",
            "recorded context: the topology and changed settings, "
            "applied from their position in the trace; every monitor receives it",
            attr("topology", S, "JSON object: server -> {site, dag (null: none), version}", optional=True),
            attr("sr", S, "JSON object: the settings changed from here on (SrConfig field names)", optional=True),
        ),
        kind(
            "RECEIVE",
            "primary",
            MSG,
            "the primary got the message data, not yet acknowledged to the sender (SR-019)",
            INST,
            attr("sender", S, "the sending host"),
            attr("origin", S, "`outside` (an SMTP sender outside the boundary), `submission` (a mailbox), `hub2010`"),
            attr(
                "boundary",
                S,
                "restates the primary's transport high-availability boundary: its DAG, or its site (SR-006)",
            ),
            attr("site", S, "restates the primary's Active Directory site"),
            attr("db", S, "restates the primary's transport database ID, `<server>-db<epoch>` (SR-068)"),
            attr("forks", LS, "the message's destinations (fork names as in `fork`)"),
            attr("sender_xshadow", B, "the sender advertised XSHADOW (an Exchange 2010 Hub)"),
            attr("xshadow_advertised", B, "the primary advertised XSHADOW to the sender (it must not: SR-044)"),
        ),
        kind(
            "HAREDIRECT",
            "primary",
            MSG,
            "a shadow session opened to a shadow server (SR-028)",
            INST,
            attr("shadow", S, "the server chosen to hold the shadow"),
            attr("try", INT, "attempt number, from 1"),
            attr("site", S, "`remote` or `local`: the shadow's site against the primary's (ShadowMessagePreference)"),
            attr("shadow_site", S, "restates the shadow server's site"),
            attr("site_of_primary", S, "restates the primary's site"),
        ),
        kind(
            "HARECEIVE",
            "shadow",
            MSG,
            "the shadow server stored the shadow copy (SR-030)",
            INST,
            attr("primary", S, "the primary server"),
            attr("boundary", S, "restates the boundary"),
            attr("primary_db", S, "restates the primary's transport database ID when the shadow was made"),
            attr("forks", LS, "the forks the shadow keeps an entry for (SR-I20)"),
        ),
        kind(
            "SHADOW_ACK",
            "primary",
            MSG,
            "the shadow's acknowledgement reached the primary",
            INST,
            attr("shadow", S, "the acknowledging shadow server"),
        ),
        kind(
            "HAREDIRECTFAIL",
            "primary",
            MSG,
            "a shadow attempt failed",
            INST,
            attr("shadow", S, "the server tried (`` when there was none)"),
            attr("try", INT, "attempt number"),
            attr("reason", S, "`No suitable shadow servers`, `timeout`, `unreachable`, `inbound session timed out`"),
            attr("final", B, "restates that no attempt follows (retries spent, or SR-I18)"),
        ),
        kind(
            "SESSION_TIMEOUT",
            "primary",
            MSG,
            "a session timed out (SR-039)",
            INST,
            attr("session", S, "`inbound` (the sender's SMTP session) or `shadow` (the shadow session)"),
            attr("timeout", S, "the parameter that expired: `ConnectionTimeout` or `ConnectionInactivityTimeout`"),
        ),
        kind(
            "ACCEPT",
            "primary",
            MSG,
            "the primary queued the message and answered the sender",
            INST,
            attr("redundant", B, "a shadow acknowledged the message before the answer"),
            attr("acked", B, "the sender's session was still open to receive the answer"),
            attr("response", S, "the SMTP response, `250 2.6.0 Queued mail for delivery`"),
        ),
        kind(
            "REJECT",
            "primary",
            MSG,
            "the primary refused the message (RejectMessageOnShadowFailure, SR-020)",
            INST,
            attr(
                "response",
                S,
                "`451 4.4.0 Message failed to be made redundant` (`450 4.5.1` only with AcceptRejectionVariant)",
            ),
        ),
        kind(
            "DELIVER",
            "the delivering server",
            MSG,
            "a fork delivered to Exchange mailboxes",
            INST,
            FORK,
            attr("via", S, "which copy: `primary`, `promoted` (a promoted shadow), `safetynet` (a resubmission)"),
        ),
        kind(
            "DUPLICATEDELIVER",
            "the delivering server",
            MSG,
            "a duplicate caught and hidden by duplicate detection",
            INST,
            FORK,
            attr("via", S, "as DELIVER"),
        ),
        kind(
            "SEND",
            "the sending server",
            MSG,
            "a fork handed to a next hop outside the boundary or to a 2010 Hub",
            INST,
            FORK,
            attr("next_hop", S, "the next hop"),
            attr("via", S, "as DELIVER"),
        ),
        kind(
            "DISCARD_NOTIFY",
            "shadow",
            MSG,
            "a discard notification received through XQUERYDISCARD (SR-053)",
            INST,
            FORK,
            attr("primary", S, "the primary that queued it"),
        ),
        kind(
            "HADISCARD",
            "shadow",
            MSG,
            "the shadow released: every fork's notification arrived (SR-I20)",
            INST,
            attr("primary", S, "the primary"),
        ),
        kind(
            "SAFETYNET",
            "holder",
            MSG,
            "a copy moved into Safety Net (SR-012)",
            INST,
            attr("role", S, "`primary` or `shadow`"),
        ),
        kind(
            "SAFETYNET_EXPIRE",
            "holder",
            MSG,
            "a copy removed from Safety Net after SafetyNetHoldTime (SR-065)",
            INST,
            attr("role", S, "`primary` or `shadow`", optional=True),
        ),
        kind(
            "PROMOTE",
            "shadow",
            MSG,
            "the shadow server took ownership of the message (SR-058..SR-061)",
            INST,
            attr("primary", S, "the primary it replaces"),
            attr(
                "reason",
                S,
                "`resubmit_timespan` (no contact for ShadowResubmitTimeSpan) or `database_id` (the primary came "
                "back with a new transport database)",
            ),
            attr("last_contact_ms", INT, "restates the last successful contact with the primary"),
            attr("original_db", S, "restates the primary's database ID when the shadow was made"),
            attr("observed_db", f"{S} or null", "the database ID seen in the promoting query (null: no contact)"),
        ),
        kind(
            "FAIL",
            "holder",
            MSG,
            "queued forks expired after MessageExpirationTimeout (SR-067)",
            INST,
            attr("forks", LS, "the forks that expired"),
            attr("reason", S, "`expired`"),
            attr("expiration_ms", INT, "restates MessageExpirationTimeout", optional=True),
        ),
        kind(
            "RESUBMIT",
            "holder",
            MSG,
            "a Safety Net resubmission of a fork (SR-069..SR-071)",
            INST,
            FORK,
            attr("source", S, "`SAFETYNET`"),
        ),
        kind(
            "SHADOW_EXPIRE",
            "shadow",
            MSG,
            "an unacknowledged shadow dropped (SR-066, SR-I10)",
            INST,
            attr("hold_ms", INT, "restates SafetyNetHoldTime", optional=True),
            attr("expiration_ms", INT, "restates MessageExpirationTimeout", optional=True),
        ),
        kind(
            "DISCARD_EXPIRE",
            "primary",
            MSG,
            "queued discard events deleted after ShadowMessageAutoDiscardInterval (SR-064)",
            INST,
            attr("shadow", S, "the shadow server that never queried"),
        ),
        kind(
            "LOST",
            "holder (a harness record)",
            MSG,
            "a copy destroyed with its transport database",
            INST,
            attr("role", S, "`primary` or `shadow`"),
        ),
        kind(
            "SNAPSHOT",
            "`sim` (a harness record)",
            MSG,
            "the end of a run for the message: liveness is judged here; "
            "without it the message's liveness verdict is unknown",
            attr("quiesced", B, "the run ended with a quiet phase (fairness)"),
        ),
        kind(
            "XQUERYDISCARD",
            "shadow",
            "`hb:<shadow>><primary>`",
            "one discard-status query of the primary "
            "(heartbeat or a session), recorded before what it causes (SR-053..SR-056)",
            attr("primary", S, "the queried primary"),
            attr("ok", B, "the session succeeded"),
            attr(
                "reason",
                S,
                "`heartbeat` (the ShadowHeartbeatFrequency timer), `session` (a shadow session to that "
                "server carries it, SR-I05), `timer` (the exact promotion timer, PromotionCheck = exactTimer)",
            ),
            attr("db", f"{S} or null", "the primary's transport database ID read (null when not ok)"),
            attr("held", INT, "restates how many shadows the shadow server holds for that primary"),
        ),
    ),
    ordering=(
        "RECEIVE before everything else of its instance; HAREDIRECT before the HARECEIVE, SHADOW_ACK or "
        "HAREDIRECTFAIL of that attempt; HARECEIVE (shadow) before SHADOW_ACK (primary) before ACCEPT when "
        "redundant (SR-031)",
        "ACCEPT or REJECT once per instance; SEND/DELIVER of a fork only after ACCEPT",
        "XQUERYDISCARD before what it causes at the same instant: its DISCARD_NOTIFY, HADISCARD and PROMOTE",
        "every DISCARD_NOTIFY of a shadow's forks before its HADISCARD; SAFETYNET after the last fork was processed",
        "a heartbeat's XQUERYDISCARD reason `session` follows the HAREDIRECT that opened the session",
        "SR_CONFIG before the events it configures (it applies from its position); SNAPSHOT last for its message",
        "the harness's CRASH / RESTART / PARTITION / HEAL (mechanism core) are recorded at the instant they happen, "
        "before the servers' events they cause",
    ),
    notes=(
        "`hub:<server>` forks: a fork to an Exchange 2010 Hub (SR-036, SR-037). The harness may send one that names "
        "no Hub of the primary's site (the topology has no Hub: setup `hub` false; or the Hub is in another site): "
        "the system drops that fork before RECEIVE (it is no destination of the message), and when no fork is left "
        "the message goes to `mbx`; RECEIVE `forks` lists only the kept forks",
    ),
)
