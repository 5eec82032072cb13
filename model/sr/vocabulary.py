"""The shadow redundancy vocabulary (mechanism `sr`) as one table: every kind, who records it, its attributes
with types and meaning, and the ordering rules at one instant. Seed 000, all sections; the kinds themselves
are `model/sr/events.py`. Rendered into `conformance/PROTOCOL.md` and `traces/README.md` by
`haconform protocol-doc` (issue 18); a test fails when the simulator records a kind or attribute not here.
"""

from __future__ import annotations

from model.sr.contract import (
    BOUNDARY,
    CONFIG,
    DB_ID,
    DELIVERER,
    FORK_FMT,
    HB_ENTITY,
    HOLDER,
    ORDERING,
    PRIMARY,
    QUERIER,
    RECEIVER,
    SETTINGS,
    SHADOW,
    SHADOW_TO_BE,
    TOPOLOGY,
)
from traces.contract import SIM
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
    fmt=FORK_FMT,
)
VIA = ("primary", "promoted", "safetynet")
ROLE = attr("role", S, "`primary` or `shadow`", values=("primary", "shadow"))

VOCABULARY = Vocabulary(
    "sr",
    "shadow redundancy (seed 000)",
    (
        kind(
            "SR_CONFIG",
            SIM,
            "`config`",
            "recorded context: the topology and changed settings, "
            "applied from their position in the trace; every monitor receives it",
            attr("topology", S, "the servers' site, DAG and version", optional=True, fmt=TOPOLOGY),
            attr(
                "sr",
                S,
                "the settings changed from here on (the configuration fields below)",
                optional=True,
                fmt=SETTINGS,
            ),
        ),
        kind(
            "RECEIVE",
            RECEIVER,
            MSG,
            "the primary got the message data, not yet acknowledged to the sender (SR-028, SR-031)",
            INST,
            attr("sender", S, "the sending host"),
            attr(
                "origin",
                S,
                "`outside` (an SMTP sender outside the boundary), `submission` (a mailbox), `hub2010`",
                values=("outside", "submission", "hub2010"),
            ),
            attr(
                "boundary",
                S,
                "restates the primary's transport high-availability boundary: its DAG, or its site (SR-006)",
                fmt=BOUNDARY,
            ),
            attr("site", S, "restates the primary's Active Directory site"),
            attr("db", S, "restates the primary's transport database ID (SR-068)", fmt=DB_ID),
            attr("forks", LS, "the message's destinations (fork names as in `fork`)", fmt=FORK_FMT),
            attr("sender_xshadow", B, "the sender advertised XSHADOW (an Exchange 2010 Hub)"),
            attr(
                "xshadow_advertised",
                B,
                "the primary advertised XSHADOW to the sender (a 2013 server does not advertise it to a 2010 Hub: "
                "SR-036)",
            ),
        ),
        kind(
            "HAREDIRECT",
            PRIMARY,
            MSG,
            "a shadow session opened to a shadow server (SR-028)",
            INST,
            attr("shadow", S, "the server chosen to hold the shadow"),
            attr("try", INT, "attempt number, from 1"),
            attr(
                "site",
                S,
                "the shadow's site against the primary's (ShadowMessagePreference)",
                values=("remote", "local"),
            ),
            attr("shadow_site", S, "restates the shadow server's site"),
            attr("site_of_primary", S, "restates the primary's site"),
        ),
        kind(
            "HARECEIVE",
            SHADOW_TO_BE,
            MSG,
            "the shadow server stored the shadow copy (SR-030)",
            INST,
            attr("primary", S, "the primary server"),
            attr("boundary", S, "restates the boundary", fmt=BOUNDARY),
            attr("primary_db", S, "restates the primary's transport database ID when the shadow was made", fmt=DB_ID),
            attr("forks", LS, "the forks the shadow keeps an entry for (SR-I20)", fmt=FORK_FMT),
        ),
        kind(
            "SHADOW_ACK",
            PRIMARY,
            MSG,
            "the shadow's acknowledgement reached the primary",
            INST,
            attr("shadow", S, "the acknowledging shadow server"),
        ),
        kind(
            "HAREDIRECTFAIL",
            PRIMARY,
            MSG,
            "a shadow attempt failed",
            INST,
            attr("shadow", S, "the server tried (`` when there was none)"),
            attr("try", INT, "attempt number"),
            attr(
                "reason",
                S,
                "why the attempt failed",
                values=("No suitable shadow servers", "timeout", "unreachable", "inbound session timed out"),
            ),
            attr("final", B, "restates that no attempt follows (retries spent, or SR-I18)"),
        ),
        kind(
            "SESSION_TIMEOUT",
            PRIMARY,
            MSG,
            "a session timed out (SR-039)",
            INST,
            attr(
                "session",
                S,
                "`inbound` (the sender's SMTP session) or `shadow` (the shadow session)",
                values=("inbound", "shadow"),
            ),
            attr(
                "timeout",
                S,
                "the parameter that expired",
                values=("ConnectionTimeout", "ConnectionInactivityTimeout"),
            ),
        ),
        kind(
            "ACCEPT",
            PRIMARY,
            MSG,
            "the primary queued the message and answered the sender",
            INST,
            attr("redundant", B, "a shadow acknowledged the message before the answer"),
            attr("acked", B, "the sender's session was still open to receive the answer"),
            attr(
                "response",
                S,
                "the SMTP response; `` when the sender's session had closed (`acked` false)",
                values=("250 2.6.0 Queued mail for delivery", ""),
            ),
        ),
        kind(
            "REJECT",
            PRIMARY,
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
            DELIVERER,
            MSG,
            "a fork delivered to Exchange mailboxes",
            INST,
            FORK,
            attr("via", S, "which copy: the primary's, a promoted shadow's, a Safety Net resubmission's", values=VIA),
        ),
        kind(
            "DUPLICATEDELIVER",
            DELIVERER,
            MSG,
            "a duplicate caught and hidden by duplicate detection",
            INST,
            FORK,
            attr("via", S, "as DELIVER"),
        ),
        kind(
            "SEND",
            DELIVERER,
            MSG,
            "a fork handed to a next hop outside the boundary or to a 2010 Hub",
            INST,
            FORK,
            attr("next_hop", S, "the next hop"),
            attr("via", S, "as DELIVER"),
        ),
        kind(
            "DISCARD_NOTIFY",
            SHADOW,
            MSG,
            "a discard notification received through XQUERYDISCARD (SR-053)",
            INST,
            FORK,
            attr("primary", S, "the primary that queued it"),
        ),
        kind(
            "HADISCARD",
            SHADOW,
            MSG,
            "the shadow released: every fork's notification arrived (SR-I20)",
            INST,
            attr("primary", S, "the primary"),
        ),
        kind(
            "SAFETYNET",
            HOLDER,
            MSG,
            "a copy moved into Safety Net (SR-012)",
            INST,
            ROLE,
        ),
        kind(
            "SAFETYNET_EXPIRE",
            HOLDER,
            MSG,
            "a copy removed from Safety Net after SafetyNetHoldTime (SR-065)",
            INST,
            attr("role", S, "`primary` or `shadow`", optional=True, values=("primary", "shadow")),
        ),
        kind(
            "PROMOTE",
            SHADOW,
            MSG,
            "the shadow server took ownership of the message (SR-058..SR-061)",
            INST,
            attr("primary", S, "the primary it replaces"),
            attr(
                "reason",
                S,
                "`resubmit_timespan` (no contact for ShadowResubmitTimeSpan) or `database_id` (the primary came "
                "back with a new transport database)",
                values=("resubmit_timespan", "database_id"),
            ),
            attr("last_contact_ms", INT, "restates the last successful contact with the primary"),
            attr("original_db", S, "restates the primary's database ID when the shadow was made", fmt=DB_ID),
            attr(
                "observed_db",
                f"{S} or null",
                "the database ID seen in the promoting query (null: no contact)",
                fmt=DB_ID,
            ),
        ),
        kind(
            "FAIL",
            HOLDER,
            MSG,
            "queued forks expired after MessageExpirationTimeout (SR-067)",
            INST,
            attr("forks", LS, "the forks that expired", fmt=FORK_FMT),
            attr("reason", S, "why", values=("expired",)),
            attr("expiration_ms", INT, "restates MessageExpirationTimeout", optional=True),
        ),
        kind(
            "RESUBMIT",
            HOLDER,
            MSG,
            "a Safety Net resubmission of a fork after a mailbox database failover (SR-033; never to a 2010 Hub, "
            "SR-038)",
            INST,
            FORK,
            attr("source", S, "where from", values=("SAFETYNET",)),
        ),
        kind(
            "SHADOW_EXPIRE",
            SHADOW,
            MSG,
            "an unacknowledged shadow dropped (SR-066, SR-I10)",
            INST,
            attr("hold_ms", INT, "restates SafetyNetHoldTime", optional=True),
            attr("expiration_ms", INT, "restates MessageExpirationTimeout", optional=True),
        ),
        kind(
            "DISCARD_EXPIRE",
            PRIMARY,
            MSG,
            "queued discard events deleted after ShadowMessageAutoDiscardInterval (SR-064)",
            INST,
            attr("shadow", S, "the shadow server that never queried"),
        ),
        kind(
            "LOST",
            HOLDER,
            MSG,
            "a copy destroyed with its transport database (a harness record)",
            INST,
            ROLE,
        ),
        kind(
            "SNAPSHOT",
            SIM,
            MSG,
            "the end of a run for the message: liveness is judged here; "
            "without it the message's liveness verdict is unknown",
            attr("quiesced", B, "the run ended with a quiet phase (fairness)"),
        ),
        kind(
            "XQUERYDISCARD",
            QUERIER,
            ("the shadow and the primary", HB_ENTITY),
            "one discard-status query of the primary "
            "(heartbeat or a session), recorded before what it causes (SR-053..SR-056)",
            attr("primary", S, "the queried primary"),
            attr("ok", B, "the session succeeded"),
            attr(
                "reason",
                S,
                "`heartbeat` (the ShadowHeartbeatFrequency timer), `session` (a shadow session to that "
                "server carries it, SR-I05), `timer` (the exact promotion timer, `promotion_check` `exactTimer`)",
                values=("heartbeat", "session", "timer"),
            ),
            attr("db", f"{S} or null", "the primary's transport database ID read (null when not ok)", fmt=DB_ID),
            attr("held", INT, "restates how many shadows the shadow server holds for that primary"),
        ),
    ),
    ordering=ORDERING,
    config=CONFIG,
    notes=(
        "The heartbeat schedule is two-sided (SR-055, SR-078, interpretation SR-I30): a shadow server's "
        "XQUERYDISCARD `reason` `heartbeat` to a primary comes at most ShadowHeartbeatFrequency (`heartbeat_ms`) "
        "after its last session with that primary (SR-055), and no sooner than that after both its previous "
        "heartbeat to that primary and its last successful session with it (rule heartbeat-not-early); queries "
        "with `reason` `session` or `timer` may come at any time; a restart of the shadow server starts its "
        "schedule afresh",
        "A new transport database ID read by a query (XQUERYDISCARD `db` differing from the shadow's HARECEIVE "
        "`primary_db`) means the primary's queue is gone: the shadow promotes at once (PROMOTE `reason` "
        "`database_id`, SR-059, SR-I07)",
        "Optional: SNAPSHOT (a message without one is judged for safety only, its liveness verdict unknown), "
        "SR_CONFIG (without it the catalogue defaults apply, and the shadow plan needs a recorded topology)",
        "A partial trace (`model/sr/inputs.py`): an event of a message whose RECEIVE the trace does not show (a "
        "recording that starts late) or of a server of another version is partial (TR-I01): a note names it, the "
        "rules that need its beginning count as not judged, and what holds whatever came before is still judged "
        "(a 2013 shadow for a 2010 Hub primary, a Safety Net resubmission across the boundary, the rejection "
        "text); an unusable configuration is noted and the defaults apply",
        "`hub:<server>` forks: a fork to an Exchange 2010 Hub (SR-036, SR-037). The harness may send one that names "
        "no Hub of the primary's site (the topology has no Hub: setup `hub` false; or the Hub is in another site): "
        "the system drops that fork before RECEIVE (it is no destination of the message), and when no fork is left "
        "the message goes to `mbx`; RECEIVE `forks` lists only the kept forks",
    ),
)
