"""State of the public folder model: parameters, changes, messages and one store's replica of a folder.

Seed 001, "Replication State Tables": every replicated folder (the hierarchy 1-1 included) has one row per
replica; the local row holds the change number last broadcast, the locally owned CNSet, the backfill
array and the time of the next status broadcast; each remote row the CNSet last received from that
replica, and the last time a backfill request was sent to it (PF-032). `Replica` is that set of rows as
one store sees it. `Replica` and its `Row`s are mutable: the transitions (`step.py`) update them in place,
which is what both the generator and the monitor do at every message; a backup keeps a `Replica.copy()`
(BF-023), never the live object. Everything else here is a frozen dataclass.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from functools import lru_cache
from typing import Any

from model.kernel.records import Record, Value, compiled, fill
from model.pf.cnset import CN, EMPTY, CNSet
from spec.catalogue import param_default, param_ms, require

require("PF-032", "PF-012", "BF-005", "PF-011", "PF-P12", "BF-P08", "BF-P09", "BF-P10", "PF-P13", "PF-P14")

HIERARCHY = "1-1"  # FID of the hierarchy folder (PF-007)
ACTIVE, DELETE_PENDING, DELETE_NOW = "active", "delete_pending", "delete_now"


def _ms(name: str) -> int:
    return param_ms(name)


@dataclass(frozen=True, slots=True)
class Params:
    """Every timing and packing value the rules use; defaults come from the catalogue."""

    hierarchy_interval_ms: int = field(default_factory=lambda: _ms("ReplicationSendFolderTree"))
    content_interval_ms: int = field(default_factory=lambda: _ms("ReplicationSendAlways"))
    status_timeout_ms: int = field(default_factory=lambda: _ms("ReplicationSendStatusTimeout"))
    status_period_ms: int = field(default_factory=lambda: _ms("ReplicationStatusThreadPeriod"))
    status_offset_ms: int = field(default_factory=lambda: _ms("ReplicationStatusThreadOffset"))
    backfill_check_ms: int = field(default_factory=lambda: _ms("ReplicationTimeout"))
    folder_count_limit: int = field(default_factory=lambda: param_default("ReplicationFolderCountLimit"))
    deleted_folder_limit: int = field(default_factory=lambda: param_default("ReplicationDeletedFolderCountLimit"))
    message_count_limit: int = field(default_factory=lambda: param_default("ReplicationMessageCountLimit"))
    message_size_limit_kb: int = field(default_factory=lambda: param_default("ReplicationMessageSizeLimit"))
    initial_local_ms: int = field(default_factory=lambda: _ms("BackfillInitialLocal"))
    initial_remote_ms: int = field(default_factory=lambda: _ms("BackfillInitialRemote"))
    first_retry_local_ms: int = field(default_factory=lambda: _ms("BackfillFirstRetryLocal"))
    first_retry_remote_ms: int = field(default_factory=lambda: _ms("BackfillFirstRetryRemote"))
    later_retry_local_ms: int = field(default_factory=lambda: _ms("BackfillLaterRetryLocal"))
    later_retry_remote_ms: int = field(default_factory=lambda: _ms("BackfillLaterRetryRemote"))
    new_replica_delay_ms: int = field(default_factory=lambda: _ms("BackfillNewReplicaDelay"))
    delete_pending_delay_ms: int = field(default_factory=lambda: _ms("BackfillDeletePendingDelay"))
    delete_requires_all: bool = field(default_factory=lambda: bool(param_default("DeleteRequiresAllReplicas")))
    status_anchor: str = field(default_factory=lambda: str(param_default("StatusExpiryAnchor")))
    status_request_on_restart: bool = field(default_factory=lambda: bool(param_default("StatusRequestOnRestart")))
    content_touches_hierarchy: bool = field(default_factory=lambda: bool(param_default("ContentChangesTouchHierarchy")))

    def overrides(self) -> dict[str, Any]:
        """The values that differ from the catalogue defaults (recorded in the trace)."""
        base = default_params()
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) != getattr(base, f.name)}

    def to_json(self) -> str:
        return json.dumps(self.overrides(), sort_keys=True, separators=(",", ":"))

    @staticmethod
    def from_json(text: str | None) -> Params:
        """The parameters a trace records (JSON of the overrides); the same text gives the same (frozen) object,
        parsed once: every REPLICA_CREATE restates its store's (issue 32: 2% of the pf fold's time)."""
        if not text:
            return default_params()
        return _params_of(text) if type(text) is str else replace(default_params(), **json.loads(text))


@lru_cache(maxsize=1)
def default_params() -> Params:
    """The catalogue defaults (read once)."""
    return Params()


@lru_cache(maxsize=256)
def _params_of(text: str) -> Params:
    return replace(default_params(), **json.loads(text))


# The records below are plain classes, not dataclasses (issue 32, session 14): the compiled build declares them
# `cdef class`es in `state.pxd` on the bases of `model.kernel.records` (session 15 moved them there; see there).
def _probe() -> None:
    """Says which path this module runs: its type is Cython's when compiled."""


_COMPILED = compiled(_probe)


class Change(Value):
    """One update with its change number (PF-012). For folder 1-1 `target` is the folder changed and
    `detail` what changed (`replica=<server>:<state>`, `create=<name>`, `delete`, `modify`). `op`: post | edit |
    delete (items); create | replica | delete | modify (hierarchy). `stamp`: ts_ms when made, orders concurrent
    hierarchy changes (last writer wins)."""

    __fields__ = ("cn", "op", "mid", "size_kb", "target", "detail", "stamp")
    __slots__ = __fields__

    def __init__(
        self, cn: CN, op: str, mid: str = "", size_kb: int = 1, target: str = "", detail: str = "", stamp: int = 0
    ) -> None:
        if _COMPILED:
            self.cn, self.op, self.mid, self.size_kb, self.target, self.detail, self.stamp = (
                cn, op, mid, size_kb, target, detail, stamp)  # fmt: skip
        else:
            fill(self, (cn, op, mid, size_kb, target, detail, stamp))

    def _values(self) -> tuple:
        return (self.cn, self.op, self.mid, self.size_kb, self.target, self.detail, self.stamp)


class Msg(Value):
    """One replication message, addressed to one or more stores (PF-008); `cnset` is the sender's CNSet
    of the folder at sending (PF-013). `request`: a backfill request's change numbers asked for;
    `requires_response`: a status request from a delete-pending replica (PF-I05)."""

    __fields__ = ("msg_id", "code", "fid", "sender", "recipients", "cnset", "changes", "request",
                  "requires_response", "reply_to", "reason")  # fmt: skip
    __slots__ = __fields__

    def __init__(
        self,
        msg_id: str,
        code: int,
        fid: str,
        sender: str,
        recipients: tuple[str, ...],
        cnset: CNSet,
        changes: tuple[Change, ...] = (),
        request: CNSet = EMPTY,
        requires_response: bool = False,
        reply_to: str = "",
        reason: str = "",
    ) -> None:
        if _COMPILED:
            self.msg_id, self.code, self.fid, self.sender, self.recipients, self.cnset = (
                msg_id, code, fid, sender, recipients, cnset)  # fmt: skip
            self.changes, self.request, self.requires_response, self.reply_to, self.reason = (
                changes, request, requires_response, reply_to, reason)  # fmt: skip
        else:
            fill(
                self,
                (msg_id, code, fid, sender, recipients, cnset, changes, request, requires_response, reply_to, reason),
            )

    def _values(self) -> tuple:
        return (self.msg_id, self.code, self.fid, self.sender, self.recipients, self.cnset, self.changes,
                self.request, self.requires_response, self.reply_to, self.reason)  # fmt: skip

    @property
    def carried(self) -> CNSet:
        return CNSet.of([c.cn for c in self.changes])  # (a list: no generator object per message)


class Row(Record):
    """A remote row of the replication state table (PF-032); `avg_transit_ms` is the average transmission
    time of replication mail from this replica. Mutable (updated in place), so not hashable."""

    __fields__ = ("cnset", "down", "last_heard_ms", "last_backfill_ms", "avg_transit_ms")
    __slots__ = __fields__

    def __init__(
        self,
        cnset: CNSet = EMPTY,
        down: bool = False,
        last_heard_ms: int = -1,
        last_backfill_ms: int = -1,
        avg_transit_ms: int = -1,
    ) -> None:
        self.cnset = cnset
        self.down = down
        self.last_heard_ms = last_heard_ms
        self.last_backfill_ms = last_backfill_ms
        self.avg_transit_ms = avg_transit_ms

    def _values(self) -> tuple:
        return (self.cnset, self.down, self.last_heard_ms, self.last_backfill_ms, self.avg_transit_ms)


class Entry(Value):
    """A backfill array entry (BF-003): missing change numbers, when the next request is due, how many
    requests were sent, whether the content is in the local routing group, and whom the last asked;
    `base_ms` is when the current wait started (filing, or the last request), `cause` which initial delay
    applies (gap | new_replica | delete_pending)."""

    __fields__ = ("cns", "due_ms", "attempt", "local", "asked", "asked_ms", "base_ms", "cause")
    __slots__ = __fields__

    def __init__(
        self,
        cns: CNSet,
        due_ms: int,
        attempt: int = 0,
        local: bool = True,
        asked: tuple[str, ...] = (),
        asked_ms: int = -1,
        base_ms: int = 0,
        cause: str = "gap",
    ) -> None:
        if _COMPILED:
            self.cns, self.due_ms, self.attempt, self.local, self.asked, self.asked_ms, self.base_ms, self.cause = (
                cns, due_ms, attempt, local, asked, asked_ms, base_ms, cause)  # fmt: skip
        else:
            fill(self, (cns, due_ms, attempt, local, asked, asked_ms, base_ms, cause))

    def _values(self) -> tuple:
        return (self.cns, self.due_ms, self.attempt, self.local, self.asked, self.asked_ms, self.base_ms, self.cause)


@dataclass(frozen=True, slots=True)
class Ctx:
    """What a store knows of its environment: transport costs, versions, preferred backfill servers."""

    store: str
    costs: Mapping[str, int]
    versions: Mapping[str, int]
    preferred: tuple[str, ...] = ()
    params: Params = field(default_factory=lambda: default_params())

    def encode_costs(self) -> list[str]:
        return [f"{s}={c}" for s, c in sorted(self.costs.items())]

    def encode_versions(self) -> list[str]:
        return [f"{s}={v}" for s, v in sorted(self.versions.items())]

    @staticmethod
    def decode(store: str, costs: list[str], versions: list[str], preferred: list[str], params: str | None) -> Ctx:
        def table(items: list[str]) -> dict[str, int]:
            return {k: int(v) for k, _, v in (i.partition("=") for i in items)}

        return Ctx(store, table(costs), table(versions), tuple(preferred), Params.from_json(params))


class Replica(Record):
    """One store's replica of one folder: the local row plus the remote rows (PF-032). `unsent`: local changes
    not yet broadcast ("change number last broadcast"); `statuses`: received while delete pending; `view`: this
    store's copy of the replica list. Mutable (updated in place), so not hashable."""

    __fields__ = ("fid", "store", "origin", "cnset", "unsent", "state", "expiry_ms", "rows", "backfill",
                  "statuses", "new_replica", "view")  # fmt: skip
    __slots__ = __fields__

    def __init__(
        self,
        fid: str,
        store: str,
        origin: str,
        cnset: CNSet = EMPTY,
        unsent: CNSet = EMPTY,
        state: str = ACTIVE,
        expiry_ms: int | None = None,
        rows: dict[str, Row] | None = None,
        backfill: tuple[Entry, ...] = (),
        statuses: dict[str, CNSet] | None = None,
        new_replica: bool = False,
        view: dict[str, str] | None = None,
    ) -> None:
        self.fid = fid
        self.store = store
        self.origin = origin
        self.cnset = cnset
        self.unsent = unsent
        self.state = state
        self.expiry_ms = expiry_ms
        self.rows = {} if rows is None else rows
        self.backfill = backfill
        self.statuses = {} if statuses is None else statuses
        self.new_replica = new_replica
        self.view = {} if view is None else view

    def _values(self) -> tuple:
        return (self.fid, self.store, self.origin, self.cnset, self.unsent, self.state, self.expiry_ms, self.rows,
                self.backfill, self.statuses, self.new_replica, self.view)  # fmt: skip

    def row(self, server: str) -> Row:
        """The remote row of `server` (a fresh empty one, not stored, when none is held)."""
        return self.rows.get(server, Row())

    def row_for(self, server: str) -> Row:
        """The remote row of `server`, added (empty) when none is held: for updating it in place."""
        rows = self.rows
        row = rows.get(server)
        if row is None:
            row = rows[server] = Row()
        return row

    def copy(self) -> Replica:
        """An independent copy (what a backup keeps): the rows and tables copied, the values shared."""
        rows = {
            s: Row(r.cnset, r.down, r.last_heard_ms, r.last_backfill_ms, r.avg_transit_ms) for s, r in self.rows.items()
        }
        return Replica(
            self.fid,
            self.store,
            self.origin,
            self.cnset,
            self.unsent,
            self.state,
            self.expiry_ms,
            rows,
            self.backfill,
            dict(self.statuses),
            self.new_replica,
            dict(self.view),
        )

    def pending(self) -> CNSet:
        """Every change number already filed in the backfill array."""
        out = EMPTY
        for e in self.backfill:
            out = out | e.cns
        return out
