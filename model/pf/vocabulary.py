"""The public folder replication vocabulary (mechanism `pf`) as one table: every kind, who records it, its
attributes with types and meaning, and the ordering rules at one instant. Seeds 001 (and its translation 004)
and 003; the kinds themselves are `model/pf/events.py` (`KINDS`, message codes of PF-015). Rendered into
`conformance/PROTOCOL.md` and `traces/README.md` by `haconform protocol-doc` (issue 18); a test fails when the
simulator records a kind or attribute not here.
"""

from __future__ import annotations

from traces.vocabulary import Vocabulary, attr, kind

S, INT, B, LS, LI = "string", "integer", "boolean", "list of strings", "list of integers"
FID = "the folder ID (`1-1`: the hierarchy)"
STORE = "the store"
CNSET = "a CNSet: a list of `originator:lo-hi` ranges of change numbers (PF-012)"
NET = (
    attr("wire", INT, "the wire message ID (unique per trace)"),
    attr("src", S, "the sending store"),
    attr("dst", S, "the receiving store"),
    attr("msg", S, "the replication message ID carried"),
)

VOCABULARY = Vocabulary(
    "pf",
    "public folder replication and backfill (seeds 001, 003, 004)",
    (
        kind(
            "PF_CONFIG",
            "`sim` (or the harness)",
            "`config`",
            "context: the run's configuration; every monitor "
            "receives it, and a trace without it cannot be judged (verdict unknown)",
            attr("servers", LS, "the stores"),
            attr("costs", LS, "transport costs, each `a>b=cost`"),
            attr("versions", LS, "Exchange versions, each `server=version` (2003, 55 = 5.5, ...)"),
            attr("preferred", LS, "preferred backfill servers (BF-011)"),
            attr("params", S, "JSON object: the timers and limits changed from the catalogue defaults (Params)"),
            attr(
                "latency_ms",
                LI,
                "[lo, hi]: the network's delivery latency bound, for the convergence bound",
                optional=True,
            ),
        ),
        kind(
            "FOLDER_CREATE",
            STORE,
            FID,
            "a folder created at this store",
            attr("name", S, "the folder name"),
            attr("tree", S, "`IPM` or `NON_IPM`"),
            attr("replicating", B, "the folder has a hierarchy entry and replicates (PF-004)"),
        ),
        kind(
            "REPLICA_CREATE",
            STORE,
            FID,
            "the store mounts its replica of the folder",
            attr("origin", S, "the store's originator ID (`store#n`: a restored store gets a new one)"),
            attr("new", B, "a replica added to an existing folder (it backfills everything, BF-021)"),
            attr("costs", LS, "restates the costs from this store, each `server=cost`"),
            attr("versions", LS, "restates the versions, each `server=version`"),
            attr("preferred", LS, "restates the preferred backfill servers"),
            attr("params", S, "restates the parameters (JSON)"),
        ),
        kind(
            "REPLICA_VIEW",
            STORE,
            FID,
            "this store's copy of the folder's replica list changed (PF-025)",
            attr("replicas", LS, "each `server=state` (`active`, `delete_pending`, `delete_now`, `removed`)"),
        ),
        kind(
            "CHANGE",
            STORE,
            FID,
            "a local change (a new change number)",
            attr("cn", S, "the change number, `originator:n`"),
            attr("op", S, "`create`, `modify`, `delete`, `post`, ... (what changed)"),
            attr("mid", S, "the item's message ID"),
            attr("size_kb", INT, "the item's size (packing limits, PF-011)"),
            attr("target", S, "the folder or item concerned"),
            attr("detail", S, "free text: what the change holds (a name, `content`, a replica list change)"),
            attr("stamp", INT, "the change's time stamp (ms)"),
        ),
        kind(
            "REPL_SEND",
            "the sending store",
            FID,
            "a replication message sent (the six types, PF-015)",
            attr("msg", S, "message ID"),
            attr(
                "code",
                INT,
                "0x2 hierarchy, 0x4 content, 0x8 backfill request, 0x10 status, "
                "0x20 status request, 0x80000002 / 0x80000004 backfill response",
            ),
            attr(
                "type",
                S,
                "the code's name: `hierarchy`, `content`, `backfill_request`, `backfill_response`, `status`, "
                "`status_request`",
            ),
            attr("recipients", LS, "the stores addressed"),
            attr("cnset", LS, f"the sender's current {CNSET} (PF-013)"),
            attr("cns", LS, "the change numbers carried (data messages)"),
            attr("reply_to", S, "the message answered (`` for none)"),
            attr("requires_response", B, "a status request from a delete-pending replica (BF-029)"),
            attr("request", LS, f"the {CNSET} asked for (backfill requests)"),
            attr(
                "reason",
                S,
                "why: `broadcast`, `push`, `status_request`, `status_reply`, `expiry`, `backfill`, `backfill_response`",
            ),
        ),
        kind(
            "REPL_RECV",
            "the receiving store",
            FID,
            "a replication message received and applied",
            attr("msg", S, "message ID"),
            attr("code", INT, "its code"),
            attr("src", S, "the sender"),
        ),
        kind(
            "BACKFILL_FILE",
            STORE,
            FID,
            "a gap found: an entry filed in the backfill array (BF-005)",
            attr("cns", LS, f"the missing {CNSET}"),
            attr("due_ms", INT, "when it times out (BF-006)"),
            attr("local", B, "the gap's changes are held by a store of the same site (the shorter time-out)"),
        ),
        kind(
            "BACKFILL",
            STORE,
            FID,
            "the decision of one backfill check (every 5 minutes, BF-007)",
            attr("requests", LS, "each `server=cnset|...`: the requests made"),
        ),
        kind(
            "STATUS_EXPIRED",
            STORE,
            FID,
            "the status thread found the folder's status expiry reached (PF-029)",
            attr("expiry_ms", INT, "restates the expiry"),
        ),
        kind("DELETE_PENDING", STORE, FID, "the local replica enters delete pending (BF-029)"),
        kind(
            "DELETE_NOW",
            STORE,
            FID,
            "the local replica may be deleted (BF-032)",
            attr("by", S, "the store whose status allowed it"),
            attr("cnset", LS, f"the {CNSET} the others hold"),
        ),
        kind("REPLICA_REMOVED", STORE, FID, "the maintenance cycle removed the local replica (BF-034)"),
        kind("BACKUP", STORE, FID, "a backup of the store taken", attr("backup", S, "identifier of the snapshot")),
        kind(
            "RESTORE",
            STORE,
            FID,
            "the store was restored from a backup as a new originator",
            attr("backup", S, "the snapshot"),
            attr("origin", S, "the new originator ID"),
            attr("present", B, "the folder was in the snapshot", optional=True),
        ),
        kind(
            "CLIENT_ACCESS",
            STORE,
            FID,
            "a client asked this store for the folder (BF-028, BF-035)",
            attr("outcome", S, "`served`, `redirect` or `unavailable`"),
            attr("target", S, "the serving or redirected-to store"),
        ),
        kind(
            "END",
            STORE,
            FID,
            "the store's state at the end of a run (liveness, PF-035)",
            attr("cnset", LS, f"the store's {CNSET}"),
            attr("state", S, "the replica's state"),
            attr("quiesce_ms", INT, "when the quiet phase began"),
            attr("bound_ms", INT, "the convergence bound"),
        ),
        kind("NET_SEND", "the sending store (network record)", FID, "a message put on the wire", *NET),
        kind("NET_RECV", "the receiving store (network record)", FID, "a message taken off the wire", *NET),
        kind(
            "NET_DROP",
            "the sending store (network record)",
            FID,
            "a message lost",
            *NET,
            attr("reason", S, "`lost`, `sender down`, `receiver down`, `partitioned`, `no route`"),
        ),
    ),
    ordering=(
        "PF_CONFIG (and core NET_CONFIG) before the store events they configure; REPLICA_CREATE before any other "
        "event of that store and folder",
        "REPL_SEND before its NET_SEND; NET_RECV before the REPL_RECV it delivers; a reply's REPL_SEND after the "
        "REPL_RECV it answers (PF-018)",
        "CHANGE before the REPL_SEND that carries it; REPL_RECV before the BACKFILL_FILE its gap causes",
        "STATUS_EXPIRED before the status REPL_SEND (`reason` `expiry`) it causes",
        "DELETE_PENDING before DELETE_NOW before REPLICA_REMOVED (step.REPLICA_TRANSITIONS)",
        "END last per store and folder",
    ),
)
