"""The pure rules: packing, the strict subset rule, the backfill ladder, source selection, status thread."""

from __future__ import annotations

import pytest

from model.kernel.sim import DEFAULT_START_MS, HOUR, MINUTE
from model.pf import rules as R
from model.pf.cnset import CN, CNSet
from model.pf.state import ACTIVE, Change, Ctx, Params, Row

P = Params()


def _c(n: int, size: int = 1, op: str = "post", target: str = "") -> Change:
    return Change(CN("s#0", n), op, size_kb=size, target=target)


def _set(*ns: int, origin: str = "s#0") -> CNSet:
    return CNSet.of(CN(origin, n) for n in ns)


@pytest.mark.unit
def test_defaults_come_from_the_catalogue() -> None:
    assert (P.hierarchy_interval_ms, P.content_interval_ms, P.backfill_check_ms) == (
        5 * MINUTE,
        15 * MINUTE,
        5 * MINUTE,
    )
    assert (P.initial_local_ms, P.initial_remote_ms) == (6 * HOUR, 12 * HOUR)
    assert (P.message_count_limit, P.message_size_limit_kb, P.folder_count_limit) == (100, 300, 20)


@pytest.mark.unit
def test_packing_limits_and_oversized_post_alone() -> None:
    """PF-011: 100 items, 300 KB; a single post over the limit goes alone."""
    batches = R.pack([_c(i) for i in range(1, 251)], False, P)
    assert [len(b) for b in batches] == [100, 100, 50]
    batches = R.pack([_c(1, 100), _c(2, 100), _c(3, 400), _c(4, 100), _c(5, 150)], False, P)
    assert [[c.cn.n for c in b] for b in batches] == [[1, 2], [3], [4, 5]]
    assert not R.fits([_c(1, 200), _c(2, 200)], False, P) and R.fits([_c(1, 900)], False, P)


@pytest.mark.unit
def test_hierarchy_packing_counts_folders() -> None:
    """PF-011: at most 20 folders per hierarchy message."""
    changes = [_c(i, op="modify", target=f"1-{i}") for i in range(1, 46)]
    assert [len(b) for b in R.pack(changes, True, P)] == [20, 20, 5]


@pytest.mark.unit
def test_strict_subset_rule() -> None:
    """PF-021; a delete-pending request requires a response (PF-I05)."""
    assert R.should_answer(_set(), _set(1), False)
    assert not R.should_answer(_set(1), _set(1), False)  # equal: no answer
    assert not R.should_answer(_set(1, 2), _set(1, 3), False)  # incomparable
    assert R.should_answer(_set(1), _set(1), True)


@pytest.mark.unit
def test_backfill_ladder() -> None:
    """BF-005 and BF-008: 6/12 h, then 12/24 h, then 24/48 h; 15 min for a local new replica."""
    d = R.entry_delay
    assert [d(n, True, "gap", P) for n in (0, 1, 2, 3)] == [6 * HOUR, 12 * HOUR, 24 * HOUR, 24 * HOUR]
    assert [d(n, False, "gap", P) for n in (0, 1, 2, 3)] == [12 * HOUR, 24 * HOUR, 48 * HOUR, 48 * HOUR]
    assert d(0, True, "new_replica", P) == 15 * MINUTE and d(0, False, "new_replica", P) == 12 * HOUR
    assert d(0, False, "delete_pending", P) == 0


def _cand(
    name: str,
    cost: int,
    version: int,
    held: CNSet,
    missing: CNSet,
    down: bool = False,
    preferred: bool = False,
) -> R.Candidate:
    return R.Candidate(name, down, preferred, cost, version, len(held & missing), held)


@pytest.mark.unit
def test_transport_cost_outranks_version_and_count() -> None:
    """BF-015, BF-016: the cheaper server is asked for what it has; the rest from the costlier ones."""
    missing = _set(1, 2, 3, 4)
    cands = [
        _cand("new-remote", 10, 2003, _set(1, 2, 3, 4), missing),
        _cand("old-local", 0, 55, _set(1, 2), missing),
        _cand("nothing", 0, 2003, _set(9), missing),
    ]
    assert R.select_sources(missing, cands) == [("old-local", _set(1, 2)), ("new-remote", _set(3, 4))]


@pytest.mark.unit
def test_sort_key_order() -> None:
    """BF-011: status, preferred, cost, version, count; BF-012: servers without changes are dropped."""
    m = _set(1, 2)
    down = _cand("a", 0, 2003, m, m, down=True)
    pref = _cand("b", 5, 55, _set(1), m, preferred=True)
    assert R.select_sources(m, [down, pref])[0][0] == "b"
    newer = _cand("c", 3, 2003, _set(1), m)
    older = _cand("d", 3, 2000, m, m)
    assert R.select_sources(m, [older, newer]) == [("c", _set(1)), ("d", _set(2))]
    more = _cand("e", 3, 2003, m, m)
    assert R.select_sources(m, [newer, more]) == [("e", m)]
    assert R.select_sources(m, [_cand("f", 0, 2003, _set(7), m)]) == []


@pytest.mark.unit
def test_status_thread_and_36_hour_bound() -> None:
    """PF-030: runs at 00:15 and 12:15 GMT; no changes for up to 36 h before the status message."""
    t = R.next_thread_time(DEFAULT_START_MS, P)
    assert t == DEFAULT_START_MS + 15 * MINUTE and R.is_thread_time(t, P)
    assert R.next_thread_time(t, P) == t + 12 * HOUR
    change = t + 1  # just after a run
    expiry = change + P.status_timeout_ms
    sent = R.next_thread_time(expiry - 1, P)
    while sent < expiry:
        sent = R.next_thread_time(sent, P)
    assert sent - change == 36 * HOUR - 1
    assert sent - change <= P.status_timeout_ms + P.status_period_ms


@pytest.mark.unit
def test_backfill_tick_waits_for_time_out_and_marks_silent_servers_down() -> None:
    """BF-006 and BF-014."""
    ctx = Ctx("me", {"x": 0, "y": 4}, {"x": 2003, "y": 2003}, (), P)
    rep = R.new_replica("1-2", "me", "me#0", {"me": ACTIVE, "x": ACTIVE, "y": ACTIVE}, new=False)
    rep, react = R.receive(rep, 0x10, "x", _set(1, 2), CNSet(), CNSet(), False, 0, ctx)
    assert react.filed is not None and react.filed.due_ms == 6 * HOUR
    assert R.backfill_tick(rep, 6 * HOUR - 1, ctx)[1] == []
    rep, req = R.backfill_tick(rep, 6 * HOUR, ctx)
    assert req == [("x", _set(1, 2))] and rep.backfill[0].due_ms == 18 * HOUR
    rep = rep.but(rows={**rep.rows, "y": Row(_set(1, 2))})
    rep, req = R.backfill_tick(rep, 18 * HOUR, ctx)
    assert rep.rows["x"].down and req == [("y", _set(1, 2))]


@pytest.mark.unit
def test_missing_updates_arriving_during_the_wait_leave_the_array() -> None:
    """BF-004: an entry shrinks as its changes arrive and disappears when all have; a request for
    changes the responder lacks gets an empty reply (BF-018)."""
    ctx = Ctx("me", {"x": 0}, {"x": 2003}, (), P)
    rep = R.new_replica("1-2", "me", "me#0", {"me": ACTIVE, "x": ACTIVE}, new=False)
    rep, _ = R.receive(rep, 0x10, "x", _set(1, 2, 3), CNSet(), CNSet(), False, 0, ctx)
    rep, react = R.receive(rep, 0x4, "x", _set(1, 2, 3), _set(1, 2), CNSet(), False, 10, ctx)
    assert react.applied == _set(1, 2) and rep.backfill[0].cns == _set(3) and react.filed is None
    rep, _ = R.receive(rep, 0x4, "x", _set(1, 2, 3), _set(3), CNSet(), False, 20, ctx)
    assert rep.backfill == ()
    _, react = R.receive(rep, 0x8, "x", _set(1, 2, 3), CNSet(), _set(7, 8), False, 30, ctx)
    assert react.backfill_reply == CNSet() and react.backfill_reply is not None


@pytest.mark.unit
def test_tied_sources_any_order_is_allowed_but_not_a_worse_key() -> None:
    """BF-011 family 4: candidates equal on all five keys may be walked in any order; the server name is
    only the model's tie-break. A candidate ahead on a key must still come first."""
    missing = _set(1, 2)
    a = R.Candidate("A", False, False, 0, 2003, 2, _set(1, 2))
    c = R.Candidate("C", False, False, 0, 2003, 2, _set(1, 2))
    assert R.select_sources(missing, [a, c]) == [("A", missing)]  # the model's own choice
    assert R.choice_allowed(missing, [a, c], [("A", missing)]) is None
    assert R.choice_allowed(missing, [a, c], [("C", missing)]) is None  # the other tied order
    assert R.choice_allowed(missing, [a, c], [("A", _set(1)), ("C", _set(2))])  # not a walk of any order
    far = R.Candidate("C", False, False, 5, 2003, 2, _set(1, 2))
    assert R.choice_allowed(missing, [a, far], [("C", missing)])  # cost outranks: A must be asked
    part = R.Candidate("A", False, False, 0, 2003, 1, _set(1))
    assert R.choice_allowed(missing, [part, far], [("A", _set(1)), ("C", _set(2))]) is None  # BF-016
    assert R.choice_allowed(missing, [part, far], [("C", missing)])
