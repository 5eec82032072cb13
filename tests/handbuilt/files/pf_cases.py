"""Hand-built public folder traces (seeds 001, 003), written with the `tests/handbuilt` kit: the lower side of
the stores' schedules ("Default Replication Event Schedule": hierarchy every 5 minutes, content every 15, the
backfill check every 5; PF-038, BF-036, PF-I17) and events of a replica whose beginning the trace does not show.
Each case: (name, build, expected): the exact set of rules, or "unknown"."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from tests.handbuilt.pf.builder import Step, build, change, send
from tests.handbuilt.pf.scenarios import CONTENT, F, add_replica_steps, backfill_steps
from traces.schema import Event

Case = tuple[str, Callable[[], list[Event]], "set[str] | str"]


def _moved(steps: list[Step], msg: str, minute: float) -> list[Step]:
    """The steps with the REPL_SEND of `msg` recorded at `minute` instead (kept in time order)."""
    out = [s for s in steps if not (s[3] == "REPL_SEND" and s[4]["msg"] == msg)]
    sent = next(s for s in steps if s[3] == "REPL_SEND" and s[4]["msg"] == msg)
    out.append((minute, *sent[1:]))
    return sorted(out, key=lambda s: s[0])


def sched_broadcasts_on_the_schedule() -> list[Event]:
    """Valid: A's hierarchy broadcasts 5 minutes apart (1, 6), one content broadcast (seed 001 "Adding a Replica")."""
    return build("sched-ok", add_replica_steps())


def sched_hierarchy_broadcast_two_minutes_after_the_last() -> list[Event]:
    """Invalid: A's second regular hierarchy broadcast 2.5 minutes after its first, with no change at that instant."""
    return build("sched-hier-early", _moved(add_replica_steps(), "h2", 3.5))


def sched_hierarchy_broadcast_at_the_change() -> list[Event]:
    """Valid: A sends its replica-list change the instant it makes it ("generated whenever the hierarchy is
    modified", PF-I17): allowed one minute after its last broadcast."""
    return build("sched-hier-change", _moved(add_replica_steps(), "h2", 2))


def _second_content(minute: float) -> list[Step]:
    return [
        *add_replica_steps(),
        change(12, "A", F, "A#0:5", "post"),
        send(minute, "A", F, "c2", CONTENT, ["B"], ["A#0:4-5"], ["A#0:5"]),
    ]


def sched_content_broadcast_five_minutes_after_the_last() -> list[Event]:
    """Invalid: content broadcasts of A at 10 and 15 minutes under ReplicationSendAlways of 15 minutes."""
    return build("sched-content-early", _second_content(15))


def sched_content_broadcast_fifteen_minutes_after_the_last() -> list[Event]:
    """Valid: the second content broadcast 15 minutes after the first."""
    return build("sched-content-ok", _second_content(25))


def sched_content_broadcast_after_a_restart() -> list[Event]:
    """Valid: A crashes and restarts at minute 12; its schedule starts afresh (the first run may come at once)."""
    steps = [s for s in _second_content(13) if s[0] <= 11]
    steps += [(11.5, "A", "A", "CRASH", {}), (12, "A", "A", "RESTART", {"storage": "same", "storage_epoch": 0})]
    steps += [change(12.5, "A", F, "A#0:5", "post"), send(13, "A", F, "c2", CONTENT, ["B"], ["A#0:4-5"], ["A#0:5"])]
    return [dataclasses.replace(e, mechanism="core") if e.kind in ("CRASH", "RESTART") else e
            for e in build("sched-restart", steps)]  # fmt: skip


def sched_backfill_checks_two_minutes_apart() -> list[Event]:
    """Invalid: B's backfill check runs at 28 and again at 30 (ReplicationTimeout: every 5 minutes)."""
    return build("sched-bf-early", [*backfill_steps(), (30, "B", F, "BACKFILL", {"requests": []})])


def sched_backfill_checks_five_minutes_apart() -> list[Event]:
    """Valid: B's next backfill check that records a decision comes 5 minutes later."""
    return build("sched-bf-ok", [*backfill_steps(), (33, "B", F, "BACKFILL", {"requests": []})])


def unseen_valid() -> list[Event]:
    """Valid: every event of folder F at C concerns what C's hierarchy shows (a redirect)."""
    return build("unseen-ok", add_replica_steps())


def unseen_post_at_a_store_without_the_replica() -> list[Event]:
    """Unknown: C records a content change of F, of which it never recorded a replica (its REPLICA_CREATE is not in
    the trace): the change cannot be judged, and says so."""
    return build("unseen-change", [*add_replica_steps(), change(13, "C", F, "C#0:1", "post")])


def unseen_backfill_check_without_the_replica() -> list[Event]:
    """Unknown: C records a backfill check of F without a replica of F in the trace."""
    return build("unseen-bf", [*add_replica_steps(), (13, "C", F, "BACKFILL", {"requests": []})])


def unseen_events_before_the_store_mounted() -> list[Event]:
    """Unknown: D records a change of the hierarchy without having mounted its store (no REPLICA_CREATE of 1-1)."""
    steps = [*add_replica_steps(), change(13, "D", "1-1", "D#0:1", "modify", F, "rename")]
    return build("unseen-mount", steps, servers=("A", "B", "C", "D"))


CASES: list[Case] = [
    ("sched_broadcasts_on_the_schedule", sched_broadcasts_on_the_schedule, set()),
    ("sched_hierarchy_broadcast_two_minutes_after_the_last", sched_hierarchy_broadcast_two_minutes_after_the_last,
     {"broadcast-not-early"}),
    ("sched_hierarchy_broadcast_at_the_change", sched_hierarchy_broadcast_at_the_change, set()),
    ("sched_content_broadcast_five_minutes_after_the_last", sched_content_broadcast_five_minutes_after_the_last,
     {"broadcast-not-early"}),
    ("sched_content_broadcast_fifteen_minutes_after_the_last", sched_content_broadcast_fifteen_minutes_after_the_last,
     set()),
    ("sched_content_broadcast_after_a_restart", sched_content_broadcast_after_a_restart, set()),
    ("sched_backfill_checks_two_minutes_apart", sched_backfill_checks_two_minutes_apart, {"backfill-check-not-early"}),
    ("sched_backfill_checks_five_minutes_apart", sched_backfill_checks_five_minutes_apart, set()),
    ("unseen_valid", unseen_valid, set()),
    ("unseen_post_at_a_store_without_the_replica", unseen_post_at_a_store_without_the_replica, "unknown"),
    ("unseen_backfill_check_without_the_replica", unseen_backfill_check_without_the_replica, "unknown"),
    ("unseen_events_before_the_store_mounted", unseen_events_before_the_store_mounted, "unknown"),
]  # fmt: skip
