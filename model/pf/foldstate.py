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

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

from model.pf import step as S
from model.pf.cnset import CNSet
from model.pf.config import RunConfig
from model.pf.state import Change, Ctx, Msg, Replica
from traces.schema import Event
from traces.verdict import ContextCursor, MonitorResult, Tally, Violation


class Mark(NamedTuple):
    """What a later check needs of a REPL_SEND: its ID (cited in a violation) and time (transit time);
    the event itself is not held."""

    event_id: str
    ts_ms: int


Sent = tuple[Msg, Mark, str, CNSet]  # a message, its REPL_SEND, its sender's replica state then, what it carried


class FoldState:
    """Every field of one trace's judgement in progress, and the methods the parts of `PfFold` share."""

    # defined by one part of PfFold, called by another (declared here for the reader and a type checker)
    anchor: Callable[..., Any]
    ctx: Callable[..., Any]
    flag: Callable[..., Any]
    put: Callable[..., Any]
    view: Callable[..., Any]
    drop: Callable[..., Any]
    mount: Callable[..., Any]
    hold_hierarchy: Callable[..., Any]
    refresh_views: Callable[..., Any]
    check_restated_config: Callable[..., Any]
    unseen: Callable[..., Any]
    schedule_run: Callable[..., Any]
    file_readings: Callable[..., Any]
    cnset_changed: Callable[..., Any]
    owe_announcement: Callable[..., Any]
    announce_owed: dict[str, dict[str, int]]
    up: dict[str, bool]  # store -> up (False from a recorded CRASH until its RESTART; `deadlines.py`)

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
        self.held: dict[str, S.HeldHierarchy] = {}  # store -> the hierarchy changes it holds, folded
        self.views: dict[tuple[str, str], dict[str, str]] = {}  # derived replica lists
        self.mounted: set[str] = set()
        self.local_home: dict[str, str] = {}  # local (non-replicating) folder -> the store holding its one copy
        self.backups: dict[tuple[str, str], tuple[dict[str, Replica], S.HeldHierarchy]] = {}
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
