"""Event kinds and message codes of the public folder model (mechanism `pf`, entity = the folder FID).

Seed 001, "Replication Message Types": six message types with their codes (PF-015); backfill responses
use 0x80000002 for the hierarchy and 0x80000004 for content (interpretation PF-I10). Every event a store
records concerns one folder, so a trace splits by folder; the hierarchy's own events use entity `1-1`.
The attributes of each kind are listed in `KINDS` and documented in `model/pf/README.md`.
"""

from __future__ import annotations

from model.pf.cnset import CNSet
from model.pf.state import HIERARCHY, Change, Msg
from spec.catalogue import require

require("PF-015")

MECH = "pf"

HIER_REPL = 0x2
CONTENT_REPL = 0x4
BACKFILL_REQ = 0x8
STATUS = 0x10
STATUS_REQ = 0x20
BACKFILL_RESP_HIER = 0x80000002
BACKFILL_RESP_CONTENT = 0x80000004

CODE_NAMES = {
    HIER_REPL: "hierarchy",
    CONTENT_REPL: "content",
    BACKFILL_REQ: "backfill_request",
    BACKFILL_RESP_HIER: "backfill_response",
    BACKFILL_RESP_CONTENT: "backfill_response",
    STATUS: "status",
    STATUS_REQ: "status_request",
}
DATA_CODES = (HIER_REPL, CONTENT_REPL, BACKFILL_RESP_HIER, BACKFILL_RESP_CONTENT)


def replication_code(fid: str) -> int:
    return HIER_REPL if fid == HIERARCHY else CONTENT_REPL


def response_code(fid: str) -> int:
    return BACKFILL_RESP_HIER if fid == HIERARCHY else BACKFILL_RESP_CONTENT


# kind -> attributes (all recorded at the store named in `node`, entity = folder FID)
KINDS: dict[str, str] = {
    "FOLDER_CREATE": "name, tree (IPM | NON_IPM), replicating (bool)",
    "REPLICA_CREATE": "origin, new (bool), costs [srv=cost], versions [srv=n], preferred [srv], params",
    "REPLICA_VIEW": "replicas [srv=state]: this store's copy of the folder's replica list",
    "CHANGE": "cn, op, mid, size_kb, target, detail, stamp",
    "REPL_SEND": "msg, code, type, recipients, cnset, cns, reply_to, requires_response, request, reason",
    "REPL_RECV": "msg, code, src",
    "BACKFILL_FILE": "cns, due_ms, local",
    "BACKFILL": "requests [srv=cnset|...]: the decision of one backfill check",
    "STATUS_EXPIRED": "expiry_ms: the status thread found the folder's status expiry reached",
    "DELETE_PENDING": "the local replica enters delete pending",
    "DELETE_NOW": "by (the store whose status allowed it), cnset",
    "REPLICA_REMOVED": "the maintenance cycle removed the local replica",
    "BACKUP": "backup: identifier of the snapshot",
    "RESTORE": "backup, origin: the store was restored from the snapshot as a new originator",
    "CLIENT_ACCESS": "outcome (served | redirect | unavailable), target",
    "END": "cnset, state, quiesce_ms, bound_ms: state at the end of a run",
}


def change_attrs(c: Change) -> dict[str, object]:
    return {
        "cn": str(c.cn),
        "op": c.op,
        "mid": c.mid,
        "size_kb": c.size_kb,
        "target": c.target,
        "detail": c.detail,
        "stamp": c.stamp,
    }


def send_attrs(m: Msg) -> dict[str, object]:
    return {
        "msg": m.msg_id,
        "code": m.code,
        "type": CODE_NAMES[m.code],
        "recipients": list(m.recipients),
        "cnset": m.cnset.encode(),
        "cns": [str(c.cn) for c in m.changes],
        "reply_to": m.reply_to,
        "requires_response": m.requires_response,
        "request": m.request.encode(),
        "reason": m.reason,
    }


def msg_from_attrs(sender: str, fid: str, attrs: dict, changes: dict, cns: list[str] | None = None) -> Msg:
    """Rebuild a message from its REPL_SEND attributes and the folder's known changes (by CN text); `cns`
    (when given) replaces the recorded `cns` (the monitor keeps only the folder's own)."""
    return Msg(  # its fields in order (msg_id, code, fid, sender, recipients, cnset, changes, request,
        # requires_response, reply_to, reason), positional: one call per REPL_SEND (issue 32)
        attrs["msg"],
        int(attrs["code"]),
        fid,
        sender,
        tuple(attrs["recipients"]),
        CNSet.decode(attrs["cnset"]),
        tuple([changes[c] for c in (attrs["cns"] if cns is None else cns)]),
        CNSet.decode(attrs["request"]),
        bool(attrs["requires_response"]),
        attrs["reply_to"],
        attrs["reason"],
    )


# the vocabulary: every kind a pf trace records (model.registry, unknown-kind notes): the store's kinds above,
# the context record and the simulated network's records made under mechanism pf (model.kernel)
ALL_KINDS = frozenset({*KINDS, "PF_CONFIG", "NET_SEND", "NET_RECV", "NET_DROP"})
