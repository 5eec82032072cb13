"""Public folder monitor: backfill sources and the new-replica delay, each case beside its twin (hand-built
traces, seed 003).

Family 2, key 1 of backfill source selection in every form the record shows a server down or unavailable
(BF-011, BF-014, BF-I07, BF-I16): a crash not followed by a restart, a partition in force. Family 3, the
"new folder replica" delay of seed 001's schedule read every way the seeds allow (BF-008, BF-I17).
"""

from __future__ import annotations

import pytest

from conformance.check import verdict
from tests.handbuilt.pf.builder import MIN, T0, Step, build, change, recv, send
from tests.handbuilt.pf.scenarios import (
    BREQ,
    BRESP,
    CONTENT,
    F,
    add_replica_steps,
    backfill_steps,
    delete_replica_steps,
    expiry_steps,
)


def _cut(steps: list[Step], minute: float) -> list[Step]:
    """The steps up to (and including) `minute`."""
    return [s for s in steps if s[0] <= minute]


def _asking(source: str, *extra: Step) -> list[Step]:
    """`backfill_steps` with `extra` recorded after B's last status at 14 min, then B's check at 28 min asking
    `source` for A#0:4 (A and C tie on all five keys by the configuration)."""
    return [
        *_cut(backfill_steps(), 14),
        *extra,
        (28, "B", F, "BACKFILL", {"requests": [f"{source}=A#0:4"]}),
        send(28, "B", F, "b1", BREQ, [source], [], request=["A#0:4"], reason="backfill"),
    ]


def _answered(source: str, *extra: Step) -> list[Step]:
    return [
        *_asking(source, *extra),
        recv(29, source, F, "b1"),
        send(29, source, F, "r1", BRESP, ["B"], ["A#0:4"], ["A#0:4"], reply_to="b1", reason="backfill_response"),
        recv(30, "B", F, "r1"),
    ]


CRASH_C = (14, "C", "C", "CRASH", {})
RESTART_C = (20, "C", "C", "RESTART", {"storage": "same", "storage_epoch": 0})
CRASH_A = (14, "A", "A", "CRASH", {})
SPLIT_C = (14, "sim", "network", "PARTITION", {"groups": ["C"]})
HEAL = (20, "sim", "network", "HEAL", {})

SOURCE_CASES: list[tuple[str, list[Step], set[str]]] = [
    # the case: C crashed 14 minutes before the request and has not restarted; A is up and ties
    ("asks-crashed-store-over-up-one", _asking("C", CRASH_C), {"backfill-source-order"}),
    ("asks-up-store-while-other-crashed", _answered("A", CRASH_C), set()),
    ("asks-store-restarted-before-request", _answered("C", CRASH_C, RESTART_C), set()),
    ("asks-crashed-store-when-all-holders-down", _asking("C", CRASH_C, CRASH_A), set()),
    ("asks-partitioned-store-over-reachable-one", _asking("C", SPLIT_C), {"backfill-source-order"}),
    ("asks-reachable-store-during-partition", _answered("A", SPLIT_C), set()),
    ("asks-store-after-partition-healed", _answered("C", SPLIT_C, HEAL), set()),
    ("asks-tied-store-nobody-down", _answered("C"), set()),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected"), SOURCE_CASES, ids=[c[0] for c in SOURCE_CASES])
def test_down_or_unavailable_sorts_last(name: str, steps: list[Step], expected: set[str]) -> None:
    """Family 2: a crashed (not restarted) or partitioned-away holder is asked only when no up holder that ties
    on the other keys is; the twins (a restart or a heal before the check, the up store asked) are clean."""
    result = verdict(build(name, steps))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    if expected:
        assert any("crashed" in v.explanation or "partition" in v.explanation for v in result.violations)


# --- family 3: "new folder replica" (BF-008, BF-I17) ---------------------------------------------------------
def _at(minute: float) -> int:
    return T0 + int(minute * MIN)


def _creator_gap(file_after_min: float, *, until: float = 140) -> list[Step]:
    """`add_replica_steps`, then B posts twice; its first broadcast to A is lost, the second reveals the gap to A
    at 2 h 17 min: A's replica (the folder creator's, holding content, no backfill request yet) files B#0:1 due
    `file_after_min` later; a client redirected at `until` closes the trace."""
    return [
        *add_replica_steps(),
        change(120, "B", F, "B#0:1", "post"),
        send(121, "B", F, "c2", CONTENT, ["A"], ["A#0:4", "B#0:1"], ["B#0:1"]),
        change(130, "B", F, "B#0:2", "post"),
        send(137, "B", F, "c3", CONTENT, ["A"], ["A#0:4", "B#0:1-2"], ["B#0:2"]),
        recv(137, "A", F, "c3"),
        (137, "A", F, "BACKFILL_FILE", {"cns": ["B#0:1"], "due_ms": _at(137 + file_after_min), "local": True}),
        (until, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


def _request(minute: float) -> list[Step]:
    """A asks B for B#0:1 at `minute`; B answers."""
    return [
        (minute, "A", F, "BACKFILL", {"requests": ["B=B#0:1"]}),
        send(minute, "A", F, "b1", BREQ, ["B"], ["A#0:4", "B#0:2"], request=["B#0:1"], reason="backfill"),
        recv(minute + 1, "B", F, "b1"),
        send(
            minute + 1,
            "B",
            F,
            "r1",
            BRESP,
            ["A"],
            ["A#0:4", "B#0:1-2"],
            ["B#0:1"],
            reply_to="b1",
            reason="backfill_response",
        ),
        recv(minute + 2, "A", F, "r1"),
    ]


def _second_gap(file_after_min: float) -> list[Step]:
    """After `_creator_gap` filed with the 6 h delay: B posts again, the broadcast is lost, the next one reveals
    B#0:3 missing; A files it `file_after_min` later."""
    return [
        *_creator_gap(360, until=138),
        change(140, "B", F, "B#0:3", "post"),
        send(152, "B", F, "c4", CONTENT, ["A"], ["A#0:4", "B#0:1-3"], ["B#0:3"]),
        change(155, "B", F, "B#0:4", "post"),
        send(167, "B", F, "c5", CONTENT, ["A"], ["A#0:4", "B#0:1-4"], ["B#0:4"]),
        recv(167, "A", F, "c5"),
        (167, "A", F, "BACKFILL_FILE", {"cns": ["B#0:3"], "due_ms": _at(167 + file_after_min), "local": True}),
        (170, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


def _edit_file(steps: list[Step], due_min: float) -> list[Step]:
    return [(s[0], s[1], s[2], s[3], {**s[4], "due_ms": _at(due_min)}) if s[3] == "BACKFILL_FILE" else s for s in steps]


def _new_flag(store: str, new: bool) -> list[Step]:
    return [
        (s[0], s[1], s[2], s[3], {**s[4], "new": new})
        if s[1] == store and s[2] == F and s[3] == "REPLICA_CREATE"
        else s
        for s in add_replica_steps()
    ]


NEW_REPLICA_CASES: list[tuple[str, list[Step], set[str]]] = [
    # the case: the creator's replica, 2 h 17 min old and holding content, waits the 6 h local delay
    ("creator-with-content-waits-6h", _creator_gap(360, until=200), set()),
    # the model's reading (new until its first backfill request): 15 minutes, then the request
    ("creator-with-content-waits-15min", [*_creator_gap(15, until=138), *_request(152)], set()),
    ("creator-waits-neither-delay", _creator_gap(60), {"backfill-entry-derived"}),
    (
        "creator-files-6h-requests-at-15min",
        [*_creator_gap(360, until=138), *_request(152)],
        {"backfill-before-timeout"},
    ),
    ("creator-files-15min-never-requests", _creator_gap(15, until=200), {"backfill-check-late"}),
    # one reading per store: after a 6 h filing (not new), a later gap filed with 15 minutes fits none
    ("second-gap-same-reading", _second_gap(360), set()),
    ("second-gap-switches-reading", _second_gap(15), {"backfill-entry-derived"}),
    # a replica added to a folder with other replicas, holding nothing: new under every reading
    ("added-replica-waits-6h", _edit_file(add_replica_steps(), 9 + 360), {"backfill-entry-derived"}),
    # REPLICA_CREATE's `new`: either value for the folder creator's replica, true for an added one
    ("creator-says-not-new", _new_flag("A", False), set()),
    ("added-replica-says-not-new", _new_flag("B", False), {"restated-state"}),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected"), NEW_REPLICA_CASES, ids=[c[0] for c in NEW_REPLICA_CASES])
def test_new_replica_delay_any_allowed_reading(name: str, steps: list[Step], expected: set[str]) -> None:
    """Family 3: the delay of a "new folder replica" is accepted under every reading the seeds allow, one per
    store; an entry that waits no allowed delay, or a store that switches readings, fails."""
    result = verdict(build(name, steps))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    if not expected:
        assert result.verdict == "valid", result.notes


# --- family 1: a deadline judged when the duty is late, not only when it is missing -------------------------------
def _late_then_crash(crash_min: float) -> list[Step]:
    """`add_replica_steps` without A's content broadcast of A#0:4 (posted at 3 min, due out by 18 min); A crashes at
    `crash_min` and stays down; a client redirected at 21 min closes the trace."""
    steps = [s for s in add_replica_steps() if s[4].get("msg") != "c1"]
    return [
        *steps,
        (crash_min, "A", "A", "CRASH", {}),
        (21, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


def _late_then_reconfigured(config_min: float) -> list[Step]:
    """As `_late_then_crash`, but instead of a crash a new PF_CONFIG at `config_min` sets a 60 minute content
    interval (the broadcast of A#0:4 then due by 63 min)."""
    steps = [s for s in add_replica_steps() if s[4].get("msg") != "c1"]
    config = next(e for e in build("x", []) if e.kind == "PF_CONFIG")
    attrs = {**config.attrs, "params": '{"content_interval_ms":3600000}'}
    return [
        *steps,
        (config_min, "sim", "config", "PF_CONFIG", attrs),
        (21, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


LATE_CASES: list[tuple[str, list[Step], set[str]]] = [
    ("late-broadcast-then-reconfigured", _late_then_reconfigured(20), {"broadcast-interval"}),
    ("reconfigured-before-broadcast-due", _late_then_reconfigured(17), set()),
    # the broadcast was late when A crashed: a store that is down owes nothing from then on, but it owed before
    ("late-broadcast-then-crash", _late_then_crash(20), {"broadcast-interval"}),
    ("crash-before-broadcast-due", _late_then_crash(17), set()),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected"), LATE_CASES, ids=[c[0] for c in LATE_CASES])
def test_late_duty_judged_before_it_is_cancelled(name: str, steps: list[Step], expected: set[str]) -> None:
    """Family 1: a duty already late when its store crashes, or when a new configuration moves its deadline, is
    judged late; twins: the crash or the configuration before the deadline."""
    result = verdict(build(name, steps))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"


QUIESCE_MIN = 12  # the quiescent phase the ENDs state starts after B received A#0:4 (11 min)
BOUND_MIN = 5100  # convergence_bound_ms of `SLOW_NEW` and a 60 s latency bound (85 h)
SLOW_NEW = {"new_replica_delay_ms": 10 * 24 * 3_600_000}  # B's entry never comes due within the trace


def _converging(b_receives_min: float) -> list[Step]:
    """`add_replica_steps` with A's status broadcasts at the first thread run after the expiries (day two, 00:15),
    B receiving A#0:4 at `b_receives_min`, and both ENDs 20 minutes after the bound stating a quiescent phase from
    12 min."""
    steps = _edit_file(add_replica_steps(), 9 + 10 * 24 * 60)
    steps = [s for s in steps if not (s[1] == "B" and s[3] == "REPL_RECV" and s[4]["msg"] == "c1")]
    steps = [*steps, *expiry_steps(2 + 24 * 60, 3 + 24 * 60), recv(b_receives_min, "B", F, "c1")]
    end = QUIESCE_MIN + BOUND_MIN + 20
    for store in ("A", "B"):
        attrs = {"cnset": ["A#0:4"], "state": "active", "quiesce_ms": _at(QUIESCE_MIN), "bound_ms": BOUND_MIN * MIN}
        steps.append((end, store, F, "END", attrs))
    return sorted(steps, key=lambda s: s[0])


CONVERGENCE_CASES: list[tuple[str, list[Step], set[str]]] = [
    # converged at the END, 20 minutes after the bound, but B got A#0:4 only 10 minutes after the bound
    ("converged-after-the-bound", _converging(QUIESCE_MIN + BOUND_MIN + 10), {"convergence"}),
    ("converged-before-the-bound", _converging(11), set()),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected"), CONVERGENCE_CASES, ids=[c[0] for c in CONVERGENCE_CASES])
def test_convergence_judged_at_the_bound(name: str, steps: list[Step], expected: set[str]) -> None:
    """Family 1, PF-035: an END recorded after the bound judges the bound, not the END's instant."""
    result = verdict(build(name, steps, params=SLOW_NEW))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    if not expected:
        assert result.verdict == "valid", result.notes


# --- the removal announcement (BF-034): after delete now, before or after the maintenance cycle's removal ----------
def _announce_at(minute: float, *, before_removal: bool = True) -> list[Step]:
    """`delete_replica_steps` with B's 1-1 change announcing its removal moved to `minute` (at 22 min, before its
    REPLICA_REMOVED when `before_removal`)."""
    steps = delete_replica_steps()
    announce = next(s for s in steps if s[3] == "CHANGE" and s[4]["detail"] == "B:removed")
    rest = [s for s in steps if s is not announce]
    at = next(i for i, s in enumerate(rest) if s[0] > minute or (before_removal and s[0] == minute and s[1] == "B"))
    return [*rest[:at], (minute, *announce[1:4], {**announce[4], "stamp": _at(minute)}), *rest[at:]]


def _never_announced(late_at: float | None = None) -> list[Step]:
    """`delete_replica_steps` without B's 1-1 change announcing its removal (nor its broadcast), or with it made
    only at `late_at`; a client redirected at 30 min, past the next maintenance cycle after B's delete now (19 min,
    so by 24 min), closes the trace."""
    steps = delete_replica_steps()
    steps = [s for s in steps if not (s[3] == "CHANGE" and s[4]["detail"] == "B:removed") and s[4].get("msg") != "h4"]
    if late_at is not None:
        steps.append(change(late_at, "B", "1-1", "B#0:1", "replica", F, "B:removed"))
    return [*steps, (30, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"})]


ANNOUNCE_CASES: list[tuple[str, list[Step], set[str], str]] = [
    # family 1: the announcement is owed by the next maintenance cycle after delete now (BF-034, BF-I13)
    ("removal-never-announced", _never_announced(), {"maintenance-removal"}, "announcing its replica"),
    ("removal-announced-late", _never_announced(late_at=26), {"maintenance-removal"}, "announcing its replica"),
    ("announced-then-removed-same-instant", _announce_at(22), set(), ""),
    ("announced-at-delete-now", _announce_at(19.5), set(), ""),
    ("announced-while-delete-pending", _announce_at(19), {"removal-announced-after-delete-now"}, "delete_pending"),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected", "says"), ANNOUNCE_CASES, ids=[c[0] for c in ANNOUNCE_CASES])
def test_removal_announced_once_delete_now(name: str, steps: list[Step], expected: set[str], says: str) -> None:
    """Item 4: the 1-1 change "removed" may come before the REPLICA_REMOVED of the same instant, or at the delete
    now; one made while the replica is still delete pending fails, and the message says so."""
    result = verdict(build(name, steps))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    assert all(says in v.explanation for v in result.violations)
