"""The public folder replication vocabulary (mechanism `pf`) as one table: every kind, who records it, its
attributes with types and meaning, and the ordering rules at one instant. Seeds 001 (and its translation 004)
and 003; the kinds themselves are `model/pf/events.py` (`KINDS`, message codes of PF-015). Rendered into
`conformance/PROTOCOL.md` and `traces/README.md` by `haconform protocol-doc` (issue 18); a test fails when the
simulator records a kind or attribute not here.
"""

from __future__ import annotations

from model.pf.contract import (
    CN,
    CNSET_ITEM,
    CODES,
    CONFIG,
    FOLDER_ID,
    HOLDER,
    MSG_ID,
    ORDERING,
    ORIGIN,
    PAIR_COST,
    PARAMS,
    REASONS,
    RECEIVER,
    REPLICA_ITEM,
    REPLY_TO,
    REQUEST,
    SENDER,
    SERVER_NUM,
    STATES,
    STORE_ROLE,
    TYPES,
)
from traces.contract import SIM
from traces.vocabulary import Vocabulary, attr, kind

S, INT, B, LS, LI = "string", "integer", "boolean", "list of strings", "list of integers"
FID = ("the folder ID (`1-1`: the hierarchy; a local folder does not replicate)", FOLDER_ID)
STORE = "the store"
CNSET = "a CNSet: a list of `originator:lo-hi` ranges of change numbers (PF-012)"
NET = (
    attr("wire", INT, "the wire message ID (unique per trace)"),
    attr("src", S, "the sending store"),
    attr("dst", S, "the receiving store"),
    attr("msg", S, "the replication message's type (its code's name, as REPL_SEND `type`), not its ID", values=TYPES),
)

VOCABULARY = Vocabulary(
    "pf",
    "public folder replication and backfill (seeds 001, 003, 004)",
    (
        kind(
            "PF_CONFIG",
            SIM,
            "`config`",
            "context: the run's configuration; every monitor "
            "receives it, and a trace without it cannot be judged (verdict unknown)",
            attr("servers", LS, "the stores"),
            attr("costs", LS, "transport costs", fmt=PAIR_COST),
            attr("versions", LS, "Exchange versions (2003, 55 = 5.5, ...)", fmt=SERVER_NUM),
            attr("preferred", LS, "preferred backfill servers (BF-011)"),
            attr("params", S, "the timers and limits changed from the catalogue defaults (below)", fmt=PARAMS),
            attr(
                "latency_ms",
                LI,
                "[lo, hi]: the network's delivery latency bound, for the convergence bound",
                optional=True,
            ),
        ),
        kind(
            "FOLDER_CREATE",
            STORE_ROLE,
            FID,
            "a folder created at this store",
            attr("name", S, "the folder name"),
            attr("tree", S, "the folder tree", values=("IPM", "NON_IPM")),
            attr("replicating", B, "the folder has a hierarchy entry and replicates (PF-004)"),
        ),
        kind(
            "REPLICA_CREATE",
            STORE_ROLE,
            FID,
            "the store mounts its replica of the folder",
            attr("origin", S, "the store's originator ID (a restored store gets a new one)", fmt=ORIGIN),
            attr(
                "new",
                B,
                "a new content replica: `true` for every content folder's replica, the folder creator's included "
                "(it backfills what it lacks, BF-021); `false` for the hierarchy (`1-1`). Seed 003 leaves 'new folder "
                "replica' undefined for the new-replica delay (BF-008): the simulators treat a replica as new until "
                "its first backfill request; the checker accepts `false` for the creator's replica and every "
                "reading of BF-I17 (until its first request, while it holds no content, only a replica added to a "
                "folder with others), one reading per store",
            ),
            attr("costs", LS, "restates the costs from this store", fmt=SERVER_NUM),
            attr("versions", LS, "restates the versions", fmt=SERVER_NUM),
            attr("preferred", LS, "restates the preferred backfill servers"),
            attr("params", S, "restates the parameters", fmt=PARAMS),
        ),
        kind(
            "REPLICA_VIEW",
            STORE_ROLE,
            FID,
            "this store's copy of the folder's replica list changed (a hierarchy change, carried by hierarchy "
            "messages: PF-025)",
            attr("replicas", LS, "the folder's replicas and their states", fmt=REPLICA_ITEM),
        ),
        kind(
            "CHANGE",
            STORE_ROLE,
            FID,
            "a local change (a new change number)",
            attr("cn", S, "the change number", fmt=CN),
            attr(
                "op",
                S,
                "what changed (`replica`: a replica list change on the hierarchy)",
                values=("create", "modify", "delete", "post", "replica"),
            ),
            attr("mid", S, "the item's message ID"),
            attr("size_kb", INT, "the item's size (packing limits, PF-011)"),
            attr("target", S, "the folder or item concerned"),
            attr(
                "detail",
                S,
                "what the change holds: a name, `content`, or for `replica` `<store>:<state>` (`<store>:removed`: "
                "the store removed its replica, recorded after its REPLICA_REMOVED)",
            ),
            attr("stamp", INT, "the change's time stamp (ms)"),
        ),
        kind(
            "REPL_SEND",
            HOLDER,
            FID,
            "a replication message sent (the six types, PF-015)",
            attr("msg", S, "message ID", fmt=MSG_ID),
            attr(
                "code",
                INT,
                "0x2 hierarchy, 0x4 content, 0x8 backfill request, 0x10 status, "
                "0x20 status request, 0x80000002 / 0x80000004 backfill response",
                values=CODES,
            ),
            attr(
                "type",
                S,
                "the code's name: `hierarchy`, `content`, `backfill_request`, `backfill_response`, `status`, "
                "`status_request`",
                values=TYPES,
            ),
            attr("recipients", LS, "the stores addressed"),
            attr("cnset", LS, f"the sender's current {CNSET} (PF-013)", fmt=CNSET_ITEM),
            attr("cns", LS, "the change numbers carried (data messages)", fmt=CNSET_ITEM),
            attr("reply_to", S, "the message answered (`` for none)", fmt=REPLY_TO),
            attr("requires_response", B, "a status request from a delete-pending replica (BF-029)"),
            attr("request", LS, f"the {CNSET} asked for (backfill requests)", fmt=CNSET_ITEM),
            attr(
                "reason",
                S,
                "why: `push` is content a delete-pending replica sends, unasked, to an active replica whose status "
                "(answering its status request with `requires_response`) lacks it (BF-029, BF-031)",
                values=REASONS,
            ),
        ),
        kind(
            "REPL_RECV",
            STORE_ROLE,
            FID,
            "a replication message received and applied",
            attr("msg", S, "message ID", fmt=MSG_ID),
            attr("code", INT, "its code", values=CODES),
            attr("src", S, "the sender"),
        ),
        kind(
            "BACKFILL_FILE",
            HOLDER,
            FID,
            "a gap found: an entry filed in the backfill array (BF-005)",
            attr("cns", LS, f"the missing {CNSET}", fmt=CNSET_ITEM),
            attr(
                "due_ms",
                INT,
                "when it times out (the ladder of BF-005); an entry for changes a delete-pending replica holds is "
                "due at once (BackfillDeletePendingDelay 0: requested at the next backfill check, BF-I02); for a new "
                "folder replica with local data 15 min (BF-008, under any BF-I17 reading, one per store); else the "
                "first time-out, same site or remote",
            ),
            attr("local", B, "the gap's changes are held by a store of the same site (the shorter time-out)"),
        ),
        kind(
            "BACKFILL",
            HOLDER,
            FID,
            "the decision of one backfill check (every 5 minutes, BF-007)",
            attr(
                "requests",
                LS,
                "the requests made, one per due entry; the source ordered first by being up (a store marked down "
                "for not answering, crashed and not restarted, or across an unhealed partition is last: BF-I16)",
                fmt=REQUEST,
            ),
        ),
        kind(
            "STATUS_EXPIRED",
            HOLDER,
            FID,
            "the status thread found the folder's status expiry reached (PF-029)",
            attr("expiry_ms", INT, "restates the expiry"),
        ),
        kind("DELETE_PENDING", HOLDER, FID, "the local replica enters delete pending (BF-029)"),
        kind(
            "DELETE_NOW",
            HOLDER,
            FID,
            "the local replica may be deleted (BF-032)",
            attr("by", S, "the store whose status allowed it"),
            attr("cnset", LS, f"the {CNSET} the others hold", fmt=CNSET_ITEM),
        ),
        kind("REPLICA_REMOVED", HOLDER, FID, "the maintenance cycle removed the local replica (BF-034)"),
        kind("BACKUP", STORE_ROLE, FID, "a backup of the store taken", attr("backup", S, "identifier of the snapshot")),
        kind(
            "RESTORE",
            STORE_ROLE,
            FID,
            "the store was restored from a backup as a new originator",
            attr("backup", S, "the snapshot"),
            attr("origin", S, "the new originator ID", fmt=ORIGIN),
            attr("present", B, "the folder was in the snapshot", optional=True),
        ),
        kind(
            "CLIENT_ACCESS",
            STORE_ROLE,
            FID,
            "a client asked this store for the folder (BF-028, BF-035)",
            attr("outcome", S, "what the client got", values=("served", "redirect", "unavailable")),
            attr("target", S, "the serving or redirected-to store"),
        ),
        kind(
            "END",
            HOLDER,
            FID,
            "the store's state at the end of a run (liveness, PF-035); optional: a trace without END is judged "
            "for safety only (convergence not judged)",
            attr("cnset", LS, f"the store's {CNSET}", fmt=CNSET_ITEM),
            attr("state", S, "the replica's state", values=STATES),
            attr("quiesce_ms", INT, "when the quiet phase began"),
            attr("bound_ms", INT, "the convergence bound"),
        ),
        kind("NET_SEND", SENDER, FID, "a message put on the wire", *NET),
        kind("NET_RECV", RECEIVER, FID, "a message taken off the wire", *NET),
        kind(
            "NET_DROP",
            SENDER,
            FID,
            "a message lost",
            *NET,
            attr(
                "reason",
                S,
                "why it was lost",
                values=("lost", "sender down", "receiver down", "partitioned", "no route"),
            ),
        ),
    ),
    ordering=ORDERING,
    config=CONFIG,
    notes=(
        "Removing a replica (BF-029..BF-034, interpretation BF-I02): the delete-pending store sends a status request "
        "with `requires_response`; an active replica answers with its status; an active replica that lacks changes "
        "the delete-pending one holds files a backfill entry for them with BackfillDeletePendingDelay (0 by "
        "default: BACKFILL_FILE `due_ms` equal to its own time, requested at the next backfill check), and the "
        "delete-pending replica also sends those changes itself (REPL_SEND `reason` `push`, BF-031)",
        "END is optional: a folder without END events is not judged for convergence (PF-035; the safety rules "
        "still apply); an END whose `quiesce_ms` plus the convergence bound lies after the trace's last event, or "
        "with a fault in force after `quiesce_ms`, leaves convergence unjudged (a note), never a violation; an END "
        "recorded after `quiesce_ms` plus the bound is judged for the bound (a replica whose CNSet changed after "
        "the bound while another's did not was behind at it)",
        "A partial trace (`model/pf/faults.py`): without PF_CONFIG before its first pf event nothing is judged "
        "(verdict unknown); an event of a store before it mounted its store (REPLICA_CREATE of `1-1`), or of a "
        "replica whose REPLICA_CREATE the trace does not show (a recording that starts late), is not judged: a "
        "note names it and the rules it would have judged count as skipped",
    ),
)
