"""The public folder vocabulary's checked parts (issue 30): the recorders as roles over the trace so far, the
formats and values, the ordering rules as predicates, and the configuration fields the monitors read (PF_CONFIG,
`Params` of `model/pf/state.py`). Used by `model/pf/vocabulary.py`; checked on every simulated trace by
`tests/unit/test_vocabulary_contract.py`. Seeds 001 (004) and 003; the recorder is the store (`model/pf/node.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from model.kernel.vocabulary import config_fields
from model.pf.state import Params, default_params
from traces.contract import History, Hit, before, custom, json_object, last_of, named_by, pattern
from traces.schema import Event
from traces.vocabulary import ConfigField, Order, Role

HIERARCHY = "1-1"
FOLDER_ID = pattern(
    "`<n>-<hex>`; `L-<store>-<hex>`: a local folder",
    r"\d+-[0-9A-F]+|L-.+-[0-9A-F]+",
    strict=False,
)
ORIGIN = pattern("`<store>#<n>`", r"[^#:/\s]+#\d+")
CN = pattern("`<store>#<n>:<change number>`", r"[^#:/\s]+#\d+:\d+")
CNSET_ITEM = pattern(
    "`<originator>:<lo>[-<hi>],...` (ranges of change numbers)", r"[^#:/\s]+#\d+:\d+(-\d+)?(,\d+(-\d+)?)*"
)
MSG_ID = pattern("`<originator>/<n>` (the sender's originator and a counter)", r"[^#/\s]+#\d+/\d+", strict=False)
REPLY_TO = pattern("a message ID, or `` for none", r"([^#/\s]+#\d+/\d+)?", strict=False)
PAIR_COST = pattern("`<a>><b>=<cost>`", r"[^>=]+>[^>=]+=\d+")
SERVER_NUM = pattern("`<server>=<n>`", r"[^=]+=\d+")
STATES = ("active", "delete_pending", "delete_now", "removed")
REPLICA_ITEM = pattern("`<server>=<state>` (state: `active`, `delete_pending`, `delete_now`, `removed`)",
                       r"[^=]+=(active|delete_pending|delete_now|removed)")  # fmt: skip
REQUEST = pattern("`<server>=<cnset>|<cnset>...`", r"[^=]+=.+")
PARAMS = json_object("JSON object of Params fields", [f.name for f in dataclasses.fields(Params)])
CODES = (0x2, 0x4, 0x8, 0x10, 0x20, 0x80000002, 0x80000004)
TYPES = ("hierarchy", "content", "backfill_request", "backfill_response", "status", "status_request")
REASONS = ("broadcast", "push", "status_request", "status_reply", "expiry", "backfill", "backfill_response")


def _servers(h: History) -> set[str]:
    cfg = h.last("PF_CONFIG")
    return set(cfg.attrs.get("servers", [])) if cfg else set()


def _holds(e: Event, h: History) -> bool:
    return any(r.node == e.node for k in ("REPLICA_CREATE", "RESTORE") for r in h.of(k, e.entity))


STORE_ROLE = Role("a store (of PF_CONFIG `servers`)", lambda e, h: e.node in _servers(h))
HOLDER = Role("the store holding the replica (its REPLICA_CREATE or RESTORE came earlier)", _holds)
SENDER = named_by("src", "the sending store (`src`)")
RECEIVER = named_by("dst", "the receiving store (`dst`)")


def _key(e: Event) -> tuple[str, str]:
    return e.node, e.entity


def _removed_announced(events: list[Event]) -> Iterator[Hit]:
    """REPLICA_REMOVED before the hierarchy CHANGE announcing `<store>:removed` at one instant."""
    removed = {(e.ts_ms, e.node, e.entity): e.seq for e in events if e.kind == "REPLICA_REMOVED"}
    for e in events:
        if e.kind == "CHANGE" and e.entity == HIERARCHY and str(e.attrs.get("detail", "")).endswith(":removed"):
            at = removed.get((e.ts_ms, e.node, e.attrs.get("target")))
            if at is None or at > e.seq:
                yield e.kind, "detail", "a `removed` announcement without the store's REPLICA_REMOVED before it", e.seq


def _removed_after(events: list[Event]) -> Iterator[Hit]:
    may: set[tuple[object, ...]] = set()
    for e in events:
        if e.kind == "DELETE_NOW":
            may.add(_key(e))
        elif e.kind == "REPLICA_VIEW" and not any(r.startswith(f"{e.node}=") for r in e.attrs.get("replicas", [])):
            may.add((e.node, e.entity, e.ts_ms))
        elif e.kind == "REPLICA_REMOVED" and _key(e) not in may and (*_key(e), e.ts_ms) not in may:
            yield e.kind, "order", "no DELETE_NOW, nor a replica list without the store, precedes it", e.seq


def _cns(items: list[str]) -> Iterator[str]:
    for item in items:
        origin, _, ranges = str(item).rpartition(":")
        for part in ranges.split(","):
            lo, _, hi = part.partition("-")
            if lo.isdigit() and (hi or lo).isdigit():
                yield from (f"{origin}:{n}" for n in range(int(lo), int(hi or lo) + 1))


def _change_first(events: list[Event]) -> Iterator[Hit]:
    made: dict[object, int] = {}
    for e in events:
        if e.kind == "CHANGE":
            made.setdefault(e.attrs.get("cn"), e.seq)
    for e in events:
        if e.kind == "REPL_SEND":
            late = [cn for cn in _cns(e.attrs.get("cns", [])) if made.get(cn, -1) > e.seq]
            if late:
                yield e.kind, "cns", f"carries {late[0]}, whose CHANGE comes later (seq {made[late[0]]})", e.seq


def _new_flag(events: list[Event]) -> Iterator[Hit]:
    for e in events:
        if e.kind == "REPLICA_CREATE" and e.mechanism == "pf" and e.attrs.get("new") is not (e.entity != HIERARCHY):
            yield e.kind, "new", "`new` must be true for a content folder's replica and false for `1-1`", e.seq


def _net_link(e: Event) -> tuple[str, str, str, object]:
    return e.node, e.entity, e.attrs.get("dst"), e.attrs.get("msg")


def _send_link(e: Event) -> list[tuple[str, str, str, object]]:
    return [(e.node, e.entity, r, e.attrs.get("type")) for r in e.attrs.get("recipients", [])]


def _repl_before_net(events: list[Event]) -> Iterator[Hit]:
    seen: set[tuple[int, tuple[str, str, str, object]]] = set()
    for e in events:
        if e.kind == "REPL_SEND":
            seen.update((e.ts_ms, k) for k in _send_link(e))
        elif e.kind == "NET_SEND" and e.mechanism == "pf" and (e.ts_ms, _net_link(e)) not in seen:
            yield e.kind, "msg", "no REPL_SEND of that type to that store precedes it at its instant", e.seq


PF = lambda e: e.mechanism == "pf"  # noqa: E731

ORDERING: tuple[Order, ...] = (
    before(
        "PF_CONFIG before the store events it configures (any distance)",
        {"PF_CONFIG"}, {"REPLICA_CREATE", "FOLDER_CREATE"}, lambda e: 0, lambda e: 0, instant=False, required=True,
    ),
    before(
        "REPLICA_CREATE (or a RESTORE) before any other event of that store and folder that needs the replica",
        {"REPLICA_CREATE", "RESTORE"},
        {"REPL_SEND", "BACKFILL_FILE", "BACKFILL", "STATUS_EXPIRED", "DELETE_PENDING", "DELETE_NOW",
         "REPLICA_REMOVED", "END"},
        _key, _key, instant=False, required=True,
    ),
    custom("REPL_SEND before its NET_SEND, at its instant (one per recipient; `msg` the message type)",
           _repl_before_net, lenient=False),
    before(
        "NET_RECV before the REPL_RECV it delivers, at its instant",
        {"NET_RECV"}, {"REPL_RECV"}, lambda e: (e.node, e.entity, e.attrs.get("src")),
        lambda e: (e.node, e.entity, e.attrs.get("src")), required=True, when_first=PF,
    ),
    before(
        "a reply's REPL_SEND after the REPL_RECV it answers (`reply_to`, PF-018)",
        {"REPL_RECV"}, {"REPL_SEND"}, lambda e: (e.node, e.attrs.get("msg")),
        lambda e: (e.node, e.attrs.get("reply_to")), instant=False, required=True,
        when=lambda e: bool(e.attrs.get("reply_to")),
    ),
    custom("CHANGE before every REPL_SEND that carries it (`cns`, any distance)", _change_first),
    before(
        "REPL_RECV before the BACKFILL_FILE its gap causes, at its instant",
        {"REPL_RECV"}, {"BACKFILL_FILE"}, _key, _key, required=True,
    ),
    before(
        "STATUS_EXPIRED before the status REPL_SEND (`reason` `expiry`) it causes, at its instant",
        {"STATUS_EXPIRED"}, {"REPL_SEND"}, _key, _key, required=True,
        when=lambda e: e.attrs.get("reason") == "expiry",
    ),
    before(
        "DELETE_PENDING before DELETE_NOW (any distance)", {"DELETE_PENDING"}, {"DELETE_NOW"}, _key, _key,
        instant=False, required=True,
    ),
    custom(
        "REPLICA_REMOVED after the replica's DELETE_NOW (any distance; step.REPLICA_TRANSITIONS), or after a "
        "REPLICA_VIEW of that store at its instant that no longer lists it (the folder deleted)",
        _removed_after,
        lenient=False,
    ),
    custom(
        "REPLICA_REMOVED before the hierarchy (`1-1`) CHANGE `replica` with detail `<store>:removed` that announces "
        "it, at one instant (the checker also accepts the announcement before REPLICA_REMOVED once the replica is "
        "delete now, BF-034: the seeds order neither)",
        _removed_announced,
        lenient=False,
    ),
    custom(
        "REPLICA_CREATE `new` is true for every content folder replica, false for the hierarchy (the checker "
        "accepts either value for the folder creator's replica, BF-I17)",
        _new_flag,
        lenient=False,
    ),
    last_of("END last per store and folder", "END", _key, scope=PF),
)  # fmt: skip


_TABLE: dict[str, tuple[str, str, str]] = {
    "hierarchy_interval_ms": ("integer (ms)", "ReplicationSendFolderTree", "hierarchy broadcast period"),
    "content_interval_ms": ("integer (ms)", "ReplicationSendAlways", "content broadcast period"),
    "status_timeout_ms": ("integer (ms)", "ReplicationSendStatusTimeout", "status expiry after the last change"),
    "status_period_ms": ("integer (ms)", "ReplicationStatusThreadPeriod", "the status thread's period"),
    "status_offset_ms": ("integer (ms)", "ReplicationStatusThreadOffset", "the status thread's offset"),
    "backfill_check_ms": ("integer (ms)", "ReplicationTimeout", "the backfill check period (BF-007)"),
    "folder_count_limit": ("integer", "ReplicationFolderCountLimit", "packing limit (PF-011)"),
    "deleted_folder_limit": ("integer", "ReplicationDeletedFolderCountLimit", "packing limit"),
    "message_count_limit": ("integer", "ReplicationMessageCountLimit", "packing limit"),
    "message_size_limit_kb": ("integer (KB)", "ReplicationMessageSizeLimit", "packing limit"),
    "initial_local_ms": ("integer (ms)", "BackfillInitialLocal", "first time-out of a same-site entry (BF-005)"),
    "initial_remote_ms": ("integer (ms)", "BackfillInitialRemote", "first time-out of another site's entry"),
    "first_retry_local_ms": ("integer (ms)", "BackfillFirstRetryLocal", "first retry, same site"),
    "first_retry_remote_ms": ("integer (ms)", "BackfillFirstRetryRemote", "first retry, another site"),
    "later_retry_local_ms": ("integer (ms)", "BackfillLaterRetryLocal", "later retries, same site"),
    "later_retry_remote_ms": ("integer (ms)", "BackfillLaterRetryRemote", "later retries, another site"),
    "new_replica_delay_ms": ("integer (ms)", "BackfillNewReplicaDelay", "the entries of a new replica (BF-008)"),
    "delete_pending_delay_ms": (
        "integer (ms)",
        "BackfillDeletePendingDelay",
        "entries for changes a delete-pending replica holds (0: requested at the next backfill check, BF-I02)",
    ),
    "delete_requires_all": ("boolean", "DeleteRequiresAllReplicas", "delete now needs every other replica's status"),
    "status_anchor": ("string", "StatusExpiryAnchor", "what the status expiry counts from"),
    "status_request_on_restart": ("boolean", "StatusRequestOnRestart", "a restarted store asks for status (PF-I15)"),
    "content_touches_hierarchy": (
        "boolean",
        "ContentChangesTouchHierarchy",
        "a content change is also a hierarchy change",
    ),
}
CONFIG: tuple[ConfigField, ...] = (
    ConfigField("servers", "PF_CONFIG `servers`", "list of strings", "the stores", "(none)"),
    ConfigField("costs", "PF_CONFIG `costs`", "list of `a>b=cost`", "transport costs (BF-011)", "(none: 0)"),
    ConfigField("versions", "PF_CONFIG `versions`", "list of `server=version`", "Exchange versions (BF-011)", "(none)"),
    ConfigField("preferred", "PF_CONFIG `preferred`", "list of strings", "preferred backfill servers (BF-011)", "`[]`"),
    ConfigField(
        "latency_ms", "PF_CONFIG `latency_ms`, NET_CONFIG `latency_ms`", "[lo, hi] integers (ms)",
        "the delivery latency bound, for the convergence bound (PF-035)", "(none: no bound judged)",
    ),
    *config_fields("PF_CONFIG `params` (JSON)", default_params(), _TABLE),
)  # fmt: skip
