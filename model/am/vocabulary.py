"""The Active Manager vocabulary (mechanism `am`) as one table: every kind, who records it, its attributes
with types and meaning, and the ordering rules at one instant. Seed 002, all sections; the kinds themselves
are `model/am/events.py` (operation IDs 300..335 as attribute `op`). Rendered into `conformance/PROTOCOL.md`
and `traces/README.md` by `haconform protocol-doc` (issue 18); a test fails when the simulator records a kind
or attribute not here.
"""

from __future__ import annotations

from model.am import events as ev
from model.am.contract import (
    BY,
    CI,
    COMPONENT_STATES,
    CONFIG,
    DAG_ROLE,
    DIALS,
    GROUP,
    HEALTH,
    MOUNTED_OR_DAG,
    ORDER_ITEM,
    ORDERING,
    PAM,
    PRIORITIES,
    SERVER_ROLE,
    STATUSES,
)
from traces.vocabulary import Vocabulary, attr, kind

S, INT, B, LS = "string", "integer", "boolean", "list of strings"
DAG, DB = "the DAG name", "the database name"
SERVER = attr("server", S, "the server concerned")
OP = attr(
    "op",
    INT,
    "the HighAvailability operation event ID (300 mount, 301 mount failed, 302 mounted, 305 "
    "dismounted, 306 active moved, 312 ACLL, 313/314 ACLL end, 334/335 BCSS)",
)
VIEW = (
    attr("members", LS, "the DAG's member servers"),
    attr("up", LS, "the servers that are running (members and standalone servers)"),
    attr("groups", LS, "the groups of servers that reach each other", fmt=GROUP),
)

VOCABULARY = Vocabulary(
    "am",
    "Active Manager and best copy and server selection (seed 002)",
    (
        kind(
            "DAG_VIEW",
            DAG_ROLE,
            DAG,
            "connectivity as the cluster sees it, after a crash, restart, partition or heal",
            *VIEW,
        ),
        kind(
            "AM_DAG_CONFIG",
            DAG_ROLE,
            DAG,
            "context: the DAG's facts after a batch of DAG_VIEW, PAM_ACQUIRE, "
            "PAM_RELEASE and SERVER_HEALTH events; every database's monitor takes the DAG from it (rule `dag-record` "
            "checks it against those events)",
            *VIEW,
            attr("claims", LS, "the servers holding the PAM role"),
            attr("health", LS, "components changed since the last one (all of them in the first)", fmt=HEALTH),
        ),
        kind(
            "PAM_ACQUIRE",
            SERVER_ROLE,
            DAG,
            "a server takes the quorum resource and the PAM role (AM-005, AM-006)",
            SERVER,
            attr("quorum", LS, "the members forming the quorum"),
        ),
        kind(
            "PAM_RELEASE",
            SERVER_ROLE,
            DAG,
            "the PAM role leaves a server",
            SERVER,
            attr("reason", S, "why", values=("lost_quorum", "move")),
        ),
        kind(
            "SERVER_HEALTH",
            SERVER_ROLE,
            DAG,
            "a monitoring component's state (health tiers)",
            SERVER,
            attr("component", S, "the component"),
            attr("priority", S, "the component's priority (seed 002: 'Normal priority')", values=PRIORITIES),
            attr("state", S, "the component's state", values=COMPONENT_STATES),
        ),
        kind(
            "AM_CONFIG",
            SERVER_ROLE,
            f"{DAG} (the dial) or {DB} (a copy's policy)",
            "configuration, "
            "context for every monitor: a server's AutoDatabaseMountDial (AM-P01), or a copy's activation "
            "policy (AM-034)",
            attr("server", S, "the server"),
            attr(ev.DIAL_ATTR, S, "the server's AutoDatabaseMountDial", optional=True, values=DIALS),
            attr("database", S, "the database (policy form)", optional=True),
            attr("blocked", B, "activation blocked on that copy", optional=True),
            attr("suspended", B, "activation suspended on that copy", optional=True),
        ),
        kind("MAINTENANCE", SERVER_ROLE, DAG, "an administrator takes the server offline (AM-007)", SERVER),
        kind(
            "DB_CREATE",
            DAG_ROLE,
            DB,
            "a database and its copies, in activation preference order",
            attr("dag", f"{S} or null", "its DAG (null: a standalone database)"),
            attr("servers", LS, "the servers holding a copy, in preference order"),
        ),
        kind(
            "COPY_STATE",
            SERVER_ROLE,
            DB,
            "the full state of one copy after any change",
            SERVER,
            attr("status", S, "copy status", values=STATUSES),
            attr("lli", INT, "last log inspected (replayed up to)"),
            attr("rq", INT, "replay queue length"),
            attr("ci", S, "content index state", values=CI),
            attr("pref", INT, "activation preference (1 = first)"),
            attr("blocked", B, "restates the configured activation block"),
            attr("suspended", B, "restates the configured activation suspension"),
        ),
        kind(
            "LOGS",
            DAG_ROLE,
            DB,
            "the last log generated (copy queue = `lgen - lli`, AM-I02)",
            attr("lgen", INT, "last log generation"),
        ),
        kind(
            "FAILURE",
            SERVER_ROLE,
            DB,
            "a local failure detected (AM-012)",
            SERVER,
            attr("what", S, "what failed", values=("database", "store", "server", "responder")),
            attr("component", f"{S} or null", "the failed component (responder failovers)"),
            attr("detector", S, "the server that detected it"),
            attr(
                "role",
                S,
                "the detector's role: `PAM`, `SAM`, or `Standalone` (a server outside any DAG)",
                values=("PAM", "SAM", "Standalone"),
            ),
        ),
        kind(
            "FAILOVER_REQUEST",
            PAM,
            DB,
            "a SAM's request for a failover, as the PAM received it (AM-013): recorded by the PAM",
            attr("server", S, "the server whose SAM asks (the failed copy's)"),
            attr("pam", S, "the PAM asked (the recorder)"),
        ),
        kind(
            "SWITCHOVER",
            DAG_ROLE,
            DB,
            "an administrator's targetless switchover (AM-021, AM-037)",
            attr(
                "lossless",
                B,
                "a lossless switchover: its candidates are sorted by activation preference first, whatever the "
                "dials (AM-037)",
            ),
        ),
        kind(
            "BCSS_START",
            PAM,
            DB,
            "op 334: the PAM runs best copy and server selection (AM-022)",
            OP,
            attr("pam", S, "the PAM"),
            attr("trigger", S, "what started it", values=("failure", "switchover", "responder")),
            attr("component", f"{S} or null", "the responder's component (null otherwise)"),
            attr("lossless", B, "a lossless switchover started it (AM-037)"),
            attr("source", S, "the failed or switched-over active copy's server"),
            attr(
                "sort",
                S,
                "the sort used: by copy queue length (AM-035) or by activation preference first (AM-036, AM-037)",
                values=("CopyQueue", "ActivationPreference"),
            ),
            attr("order", LS, "the selection, best first", fmt=ORDER_ITEM),
        ),
        kind(
            "ACLL_START",
            SERVER_ROLE,
            DB,
            "op 312: attempt copy last logs on the next copy (AM-023)",
            OP,
            SERVER,
            attr("source", S, "the server logs are copied from"),
        ),
        kind(
            "ACLL_END",
            SERVER_ROLE,
            DB,
            "op 314 (the dial allows) or 313: ACLL done, the dial compared (AM-024)",
            OP,
            SERVER,
            attr("lli_before", INT, "last log inspected before ACLL"),
            attr("lli", INT, "after ACLL"),
            attr("missing", INT, "logs still missing"),
            attr("threshold", INT, "the dial's allowed loss"),
            attr("ok", B, "the dial allows the mount"),
        ),
        kind(
            "ACTIVE_MOVE",
            BY,
            DB,
            "op 306: the active designation moves (AM-008)",
            OP,
            attr("src", f"{S} or null", "the previous active server (null: the first)"),
            attr("dst", S, "the new active server"),
            attr("by", S, "the server that moved it"),
        ),
        kind(
            "MOUNT_START",
            BY,
            DB,
            "op 300: a mount request by RPC (AM-025)",
            OP,
            SERVER,
            attr("by", S, "the server asking"),
            attr("remount", B, "a remount where a switchover or responder run found no other copy", optional=True),
        ),
        kind(
            "MOUNT_FAIL",
            SERVER_ROLE,
            DB,
            "op 301: the store did not mount; the next best copy follows",
            OP,
            SERVER,
        ),
        kind("MOUNTED", SERVER_ROLE, DB, "op 302: mounted, available to clients", OP, SERVER),
        kind(
            "DISMOUNTED",
            SERVER_ROLE,
            DB,
            "op 305: dismounted",
            OP,
            SERVER,
            attr("reason", S, "`failure`, `switchover`, `responder`, `lost_quorum`, `server_down`, ..."),
        ),
        kind(
            "BCSS_END",
            MOUNTED_OR_DAG,
            DB,
            "op 335: the end of a BCSS run (`no_candidate`: no copy met any criteria set, AM-050)",
            OP,
            attr("outcome", S, "how it ended", values=("mounted", "exhausted", "no_candidate", "no_pam")),
            attr("server", f"{S} or null", "the mounted server (null: none)"),
        ),
        kind(
            "LOCATION_QUERY",
            SERVER_ROLE,
            DB,
            "where the active copy is (AM-011, AM-019)",
            SERVER,
            attr("answer", S, "the active copy's server"),
        ),
    ),
    ordering=ORDERING,
    config=CONFIG,
    notes=(
        "Optional: there is no end-of-run kind; am judges safety only (its liveness property is checked in the "
        "simulator's scripted scenarios, not from traces)",
        "A partial trace (`model/am/faults.py`): an event of a database whose DB_CREATE the trace does not show "
        "(a recording that starts late), or a database with no DAG facts (AM_DAG_CONFIG) in its context, is "
        "partial (TR-I01): a note names it, the rules that need its beginning count as not judged, and two mounted "
        "copies (AM-009) or an activation by a member that is not the PAM (AM-008) are still judged; an unusable "
        "TRACE_START `config` means nothing is judged (verdict unknown)",
    ),
)
