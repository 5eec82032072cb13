"""The state of the public folder monitor's fold (`model.pf.monitor.PfFold`), shared by its parts.

`PfFold` is built from mixins, one per family of rules: `handlers.Handlers` (messages, hierarchy and content
replication), `backfill.Backfill` (backfill entries and requests), `lifecycle.Lifecycle` (adding and deleting
replicas), `deadlines.Deadlines` (timed obligations), `convergence.Convergence` (PF-035 at the END) and
`schedule.Schedule` (the lower side of the schedules). Each mixin derives from `FoldState`, which holds the
fold's state, its `Tally` (what each rule judged, issue 29) and declares the methods one part calls on
another, so no part imports the monitor built from them (seeds 001 and 003; the state is
described in `model/pf/README.md`, "Monitor state").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from model.pf.cnset import CNSet
from model.pf.config import RunConfig
from model.pf.state import Change, Ctx, Msg, Replica
from model.pf.step import HeldHierarchy
from traces.schema import Event
from traces.verdict import ContextCursor, MonitorResult, Tally, Violation


class Mark(NamedTuple):
    """What a later check needs of a REPL_SEND: its ID (cited in a violation) and time (transit time);
    the event itself is not held."""

    event_id: str
    ts_ms: int


def mark(event_id: str, ts_ms: int) -> Mark:
    """A `Mark` made as the tuple it is (a named tuple's own `__new__` is interpreted code: one per REPL_SEND)."""
    return _new_tuple(Mark, (event_id, ts_ms))


_new_tuple = tuple.__new__

Sent = tuple[Msg, Mark, str, CNSet]  # a message, its REPL_SEND, its sender's replica state then, what it carried


# Every field of the fold, set by `FoldState.__init__` and the parts' `init_...` methods: the slots of `FoldState`,
# C fields of a `cdef class` in the compiled build (`foldstate.pxd`; issue 32, session 16), so the parts' methods
# typed with it (`@cython.locals(self=FoldState)`) read them without an attribute lookup. A field not listed
# here would go into the instance's `__dict__` (`PfFold` has one): slower, never wrong.
FIELDS = (
    # this module
    "cursor", "stopped", "cfg", "ctx_of", "changes", "change_fid", "hier_targets", "sends", "received", "reps",
    "held", "views", "mounted", "local_home", "backups", "pending_since", "restored", "removed_after_delete_now",
    "expired_now", "expect_file", "expect_requests", "ends", "new_readings", "new_alts", "created_sole", "groups",
    "violations", "notes", "tally",
    # `deadlines.Deadlines.init_deadlines`
    "dirty", "dirty_stores", "volatile", "following", "heap", "indexed", "version", "count", "live", "cfg_seen",
    "up", "up_since", "owed_from", "last_request", "dead_since", "announce_owed", "restoring", "flagged", "owed",
    "last_ms", "due_seen",
    # `schedule.Schedule.init_schedule`, `convergence.Convergence.init_faults`
    "runs", "changed_at", "open_faults", "ended_faults", "created_ms", "cnset_changed_ms",
)  # fmt: skip


def restore(cls: type, values: tuple, extra: dict[str, Any]) -> Any:
    """A fold from its pickle (`FoldState.__reduce__`): made by either path, loaded by either."""
    fold = cls.__new__(cls)
    for name, value in zip(FIELDS, values, strict=True):
        setattr(fold, name, value)
    if extra:
        fold.__dict__.update(extra)
    return fold


class FoldState:
    """Every field of one trace's judgement in progress, and the methods the parts of `PfFold` share."""

    __slots__ = FIELDS

    # Defined by one part of PfFold, called by another: `anchor`, `ctx`, `flag`, `put`, `view`, `drop`, `mount`,
    # `hold_hierarchy`, `refresh_views`, `check_restated_config`, `unseen`, `schedule_run`, `file_readings`,
    # `cnset_changed`, `owe_announcement`. (Not declared as class annotations: in the compiled build one would
    # declare a C field.)

    def __init__(self, context: Sequence[Event] = ()) -> None:
        self.cursor = ContextCursor(context)
        self.stopped: MonitorResult | None = None  # the verdict once judging stopped (or finished)
        self.cfg: RunConfig | None = None
        self.ctx_of: tuple[RunConfig | None, dict[str, Ctx]] = (None, {})
        self.changes: dict[str, Change] = {}  # every change by CN text (a backfill may carry any of them)
        self.change_fid: dict[str, str] = {}
        self.hier_targets: set[str] = set()
        self.sends: dict[str, Sent] = {}  # every message sent, by id (a REPL_RECV or reply may name any)
        self.received: set[tuple[str, str]] = set()  # (store, msg id)
        self.reps: dict[tuple[str, str], Replica] = {}
        self.held: dict[str, HeldHierarchy] = {}  # store -> the hierarchy changes it holds, folded
        self.views: dict[tuple[str, str], dict[str, str]] = {}  # derived replica lists
        self.mounted: set[str] = set()
        self.local_home: dict[str, str] = {}  # local (non-replicating) folder -> the store holding its one copy
        self.backups: dict[tuple[str, str], tuple[dict[str, Replica], HeldHierarchy]] = {}
        self.pending_since: dict[tuple[str, str], int] = {}
        self.restored: dict[str, int] = {}
        self.removed_after_delete_now: set[tuple[str, str]] = set()
        self.expired_now: dict[tuple[str, str], int] = {}
        self.expect_file: dict[tuple[str, str], tuple[object, Event]] = {}
        self.expect_requests: dict[tuple[str, str], list] = {}
        self.ends: dict[str, list[Event]] = {}
        # BF-I17: the readings of "new folder replica" each store's entries still fit, the entry just filed as
        # each reading files it (until its BACKFILL_FILE), and the replicas created with no other replica listed
        self.new_readings: dict[str, tuple[str, ...]] = {}
        self.new_alts: dict[tuple[str, str], dict[str, Any]] = {}
        self.created_sole: set[tuple[str, str]] = set()
        self.groups: dict[str, int] = {}  # node -> its side of the recorded partition in force (`backfill.py`)
        self.violations: list[Violation] = []
        self.notes: list[str] = []
        self.tally = Tally()  # what each rule judged, and what it could not (issue 29)

    def __reduce__(self) -> tuple:
        """Pickled as its class, its fields (None for one not set) and its `__dict__`'s further attributes, so a
        fold saved by one path (pure, compiled) loads in the other (`traces.verdict.save_fold`, Spark)."""
        return restore, (type(self), tuple(getattr(self, n, None) for n in FIELDS), getattr(self, "__dict__", None))

    def clear(self) -> None:
        """Every field and attribute dropped (None): judging stopped (`PfFold.stop`)."""
        for name in FIELDS:
            setattr(self, name, None)
        self.__dict__.clear()
