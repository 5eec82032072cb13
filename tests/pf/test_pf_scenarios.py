"""The step-by-step sequences of seed 003 ("Example Replication Cycles") and seed 001's lifecycles.

Each scenario drives a fixed two- or three-server topology through `Cluster`, then checks the order of the
recorded events step by step and that the monitor finds nothing wrong.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from conformance.check import check_events
from model.kernel.sim import HOUR, MINUTE
from model.pf.cnset import CNSet
from model.pf.events import BACKFILL_REQ, BACKFILL_RESP_CONTENT, CONTENT_REPL, HIER_REPL, STATUS, STATUS_REQ
from model.pf.monitor import PFMonitor
from model.pf.mutants import RULE_MUTANTS
from model.pf.sim import Cluster, build_fixed
from model.pf.state import HIERARCHY
from traces.schema import Event

TWO = [("ExServ01", "rg0", "2003"), ("ExServ02", "rg0", "2003")]
THREE = [*TWO, ("ExServ03", "rg1", "2003")]
LINKS = [("rg0", "rg1", 10)]


def first(events: list[Event], since: int, pred: Callable[[Event], bool], what: str) -> Event:
    for e in events:
        if e.seq >= since and pred(e):
            return e
    raise AssertionError(f"no event after seq {since}: {what}")


def sends(node: str, code: int, fid: str | None = None, to: str | None = None) -> Callable[[Event], bool]:
    return lambda e: (
        e.kind == "REPL_SEND"
        and e.node == node
        and e.attrs["code"] == code
        and (fid is None or e.entity == fid)
        and (to is None or to in e.attrs["recipients"])
    )


def assert_clean(c: Cluster) -> None:
    violations = check_events(c.events, [PFMonitor()])
    assert not violations, "\n".join(map(str, violations))


def _folder_on_02_and_03(seed: int = 1) -> tuple[Cluster, str]:
    c = build_fixed(seed, THREE, LINKS)
    fid = c.create_folder("ExServ02", "Sales")
    c.add_replica(fid, "ExServ03", via="ExServ02")
    c.advance(30 * MINUTE)
    for _ in range(3):
        c.post("ExServ02", fid, 10)
    c.advance(30 * MINUTE)
    return c, fid


@pytest.mark.model
def test_add_replica_sequence_of_seed_003() -> None:
    """BF-025, BF-027: hierarchy message, status request, status with the full CNSet, backfill entry,
    backfill request after the time-out to the local server (transport cost, BF-015), content, done."""
    c, fid = _folder_on_02_and_03()
    mark = len(c.events)
    assert c.add_replica(fid, "ExServ01", via="ExServ02")
    c.advance(2 * HOUR)
    ev = c.events
    s2 = first(ev, mark, sends("ExServ02", HIER_REPL, HIERARCHY, "ExServ01"), "step 2: hierarchy message")
    s3 = first(
        ev,
        s2.seq,
        lambda e: e.kind == "REPLICA_CREATE" and e.node == "ExServ01" and e.entity == fid,
        "step 3: ExServ01 learns it holds a replica",
    )
    s4 = first(ev, s3.seq, sends("ExServ01", STATUS_REQ, fid), "step 4: status request")
    s5 = first(ev, s4.seq, sends("ExServ02", STATUS, fid, "ExServ01"), "step 5: status message")
    assert len(s5.attrs["cnset"]) == 1 and s5.attrs["reply_to"] == s4.attrs["msg"]
    s6 = first(ev, s5.seq, lambda e: e.kind == "BACKFILL_FILE" and e.node == "ExServ01", "step 6: backfill entry")
    s7 = first(ev, s6.seq, sends("ExServ01", BACKFILL_REQ, fid), "step 7: backfill request")
    assert s7.attrs["recipients"] == ["ExServ02"], "the local server comes before the remote one"
    assert s7.ts_ms >= s6.ts_ms + 15 * MINUTE - 2 * MINUTE  # new replica, local data: 15 min (BF-008)
    s8 = first(ev, s7.seq, sends("ExServ02", BACKFILL_RESP_CONTENT, fid, "ExServ01"), "step 8: content")
    assert len(s8.attrs["cns"]) == 3
    assert c.cnset("ExServ01", fid) == c.cnset("ExServ02", fid) == c.cnset("ExServ03", fid)  # step 9
    assert_clean(c)


@pytest.mark.model
def test_add_replica_made_on_the_new_server_may_reverse_steps_1_and_2() -> None:
    """BF-026: the administrator works on the new replica's server: its status request goes first."""
    c, fid = _folder_on_02_and_03()
    mark = len(c.events)
    assert c.add_replica(fid, "ExServ01", via="ExServ01")
    c.advance(2 * HOUR)
    req = first(c.events, mark, sends("ExServ01", STATUS_REQ, fid), "status request")
    hier = first(c.events, mark, sends("ExServ01", HIER_REPL, HIERARCHY), "hierarchy message")
    assert req.seq < hier.seq
    assert c.cnset("ExServ01", fid) == c.cnset("ExServ02", fid)
    assert_clean(c)


@pytest.mark.model
def test_unanswered_backfill_is_retried_after_the_first_retry_time_out() -> None:
    """Step 10 of seed 003 under BF-005/BF-I05: the response is lost; the retry waits 12 h (local)."""
    c, fid = _folder_on_02_and_03()
    mark = len(c.events)
    c.add_replica(fid, "ExServ01", via="ExServ02")
    c.advance(20 * MINUTE)
    first(c.events, mark, lambda e: e.kind == "BACKFILL_FILE" and e.node == "ExServ01", "entry filed")
    c.set_loss(1.0)
    c.advance(30 * MINUTE)
    req1 = first(c.events, mark, sends("ExServ01", BACKFILL_REQ, fid), "first request")
    c.set_loss(0.0)
    c.advance(14 * HOUR)
    req2 = first(c.events, req1.seq + 1, sends("ExServ01", BACKFILL_REQ, fid), "retry")
    assert 12 * HOUR <= req2.ts_ms - req1.ts_ms <= 12 * HOUR + 5 * MINUTE
    assert c.cnset("ExServ01", fid) == c.cnset("ExServ02", fid)
    assert_clean(c)


@pytest.mark.model
def test_remove_replica_sequence_of_seed_003() -> None:
    """BF-028..BF-034: delete pending, hierarchy message, status request, status, content sent to the
    replica that lacks it, delete now, removal at maintenance, final hierarchy message; no content lost."""
    c = build_fixed(2, TWO)
    fid = c.create_folder("ExServ02", "Sales")
    c.add_replica(fid, "ExServ01", via="ExServ02")
    c.advance(HOUR)
    c.post("ExServ01", fid, 10)  # not yet replicated when the replica is removed
    mark = len(c.events)
    assert c.remove_replica(fid, "ExServ01", via="ExServ01")
    assert c.client_access("ExServ01", fid) == "ExServ02"  # step 2: clients no longer use ExServ01's copy
    c.advance(2 * HOUR)
    ev = c.events
    s2 = first(ev, mark, lambda e: e.kind == "DELETE_PENDING" and e.node == "ExServ01", "step 2")
    s3 = first(ev, s2.seq, sends("ExServ01", HIER_REPL, HIERARCHY), "step 3: hierarchy message")
    s4 = first(
        ev,
        s3.seq,
        lambda e: (
            e.kind == "REPLICA_VIEW"
            and e.node == "ExServ02"
            and e.entity == fid
            and "ExServ01=delete_pending" in e.attrs["replicas"]
        ),
        "step 4",
    )
    s5 = first(ev, s2.seq, sends("ExServ01", STATUS_REQ, fid), "step 5: status request")
    assert s5.attrs["requires_response"] and s3.seq < s5.seq
    s6 = first(ev, s5.seq, sends("ExServ02", STATUS, fid, "ExServ01"), "step 6: status message")
    s7 = first(
        ev,
        s6.seq,
        lambda e: (
            e.kind == "REPL_SEND" and e.node == "ExServ01" and e.entity == fid and e.attrs["code"] == CONTENT_REPL
        ),
        "step 7: ExServ01 sends what ExServ02 lacks",
    )
    s8 = first(ev, s7.seq, lambda e: e.kind == "DELETE_NOW" and e.node == "ExServ01", "step 8: delete now")
    s9 = first(ev, s8.seq, lambda e: e.kind == "REPLICA_REMOVED" and e.node == "ExServ01", "maintenance")
    first(ev, s9.seq, sends("ExServ01", HIER_REPL, HIERARCHY), "step 9: hierarchy message")
    assert s4.seq > 0
    assert c.replicas(fid) == {"ExServ02": "active"}  # step 10
    assert "ExServ01" not in c.stores["ExServ02"].views[fid]
    assert len(c.cnset("ExServ02", fid)) == 1  # the post made on ExServ01 survived
    assert_clean(c)


@pytest.mark.model
def test_moving_the_only_replica_loses_no_content() -> None:
    """BF-033: the sole replica moves from ExServ02 to ExServ03 (remote)."""
    c = build_fixed(3, THREE, LINKS)
    fid = c.create_folder("ExServ02", "Only")
    for i in range(5):
        c.post("ExServ02", fid, 1 + i)
    c.advance(10 * MINUTE)
    held = c.cnset("ExServ02", fid)
    assert c.add_replica(fid, "ExServ03", via="ExServ02")
    assert c.remove_replica(fid, "ExServ02", via="ExServ02")
    c.advance(3 * HOUR)
    assert c.replicas(fid) == {"ExServ03": "active"}
    assert held <= c.cnset("ExServ03", fid)
    assert c.client_access("ExServ01", fid) == "ExServ03"  # PF-026: redirection to the content
    assert_clean(c)


@pytest.mark.model
def test_new_store_backfills_the_hierarchy_and_restore_from_backup_recovers() -> None:
    """BF-020 and BF-023/BF-024."""
    c = build_fixed(4, TWO)
    fid = c.create_folder("ExServ01", "F")
    c.add_replica(fid, "ExServ02", via="ExServ01")
    c.advance(HOUR)
    c.backup("ExServ02")
    for _ in range(4):
        c.post("ExServ01", fid, 2)
    c.advance(HOUR)
    assert c.cnset("ExServ02", fid) == c.cnset("ExServ01", fid)
    c.restore("ExServ02")
    assert c.cnset("ExServ02", fid) < c.cnset("ExServ01", fid)
    c.topology.servers["ExServ03"] = c.topology.servers["ExServ02"].__class__("ExServ03", "rg0", version="2003")
    c.add_store("ExServ03")
    c.advance(8 * HOUR)
    assert c.cnset("ExServ02", fid) == c.cnset("ExServ01", fid)
    assert c.cnset("ExServ03", HIERARCHY) == c.cnset("ExServ01", HIERARCHY)
    assert_clean(c)


@pytest.mark.model
def test_status_message_after_24_hours_and_within_36() -> None:
    """PF-029, PF-030: a change just after the 12:15 GMT run gets its status message at the run after its
    24 h expiry: 36 hours later; a later change resets the expiry."""
    c = build_fixed(5, TWO)
    fid = c.create_folder("ExServ01", "F")
    c.add_replica(fid, "ExServ02", via="ExServ01")
    c.advance(12 * HOUR + 15 * MINUTE - c.sim.now_ms % (24 * HOUR))  # to 12:15 GMT
    c.advance(1)
    c.post("ExServ01", fid, 1)
    t_change = c.sim.now_ms
    c.advance(12 * HOUR)
    c.post("ExServ01", fid, 1)  # resets the expiry
    t_reset = c.sim.now_ms
    c.advance(40 * HOUR)
    expired = [e for e in c.events if e.kind == "STATUS_EXPIRED" and e.entity == fid and e.node == "ExServ01"]
    assert len(expired) == 1
    assert expired[0].ts_ms - t_reset == 36 * HOUR - 1 and expired[0].ts_ms - t_change > 36 * HOUR
    assert first(c.events, expired[0].seq, sends("ExServ01", STATUS, fid, "ExServ02"), "status broadcast")
    assert_clean(c)


@pytest.mark.model
def test_large_backfill_is_answered_by_several_responses_to_the_requester_only() -> None:
    """BF-018: one request, several responses (the packing limits), each addressed to the requester."""
    c = build_fixed(6, THREE, LINKS)
    fid = c.create_folder("ExServ02", "Big")
    c.add_replica(fid, "ExServ03", via="ExServ02")
    c.advance(20 * MINUTE)
    for _ in range(5):
        c.post("ExServ02", fid, 200)
    c.advance(HOUR)
    mark = len(c.events)
    c.add_replica(fid, "ExServ01", via="ExServ02")
    c.advance(2 * HOUR)
    req = first(c.events, mark, sends("ExServ01", BACKFILL_REQ, fid), "backfill request")
    responses = [
        e for e in c.events if e.seq > req.seq and e.kind == "REPL_SEND" and e.attrs["reply_to"] == req.attrs["msg"]
    ]
    assert len(responses) == 5 and all(e.attrs["recipients"] == ["ExServ01"] for e in responses)
    assert c.cnset("ExServ01", fid) == c.cnset("ExServ02", fid)
    assert_clean(c)


@pytest.mark.model
def _remove_both(**kw: object) -> tuple[Cluster, str, CNSet]:
    c = build_fixed(7, THREE, LINKS, **kw)  # type: ignore[arg-type]
    fid = c.create_folder("ExServ01", "Both")
    c.add_replica(fid, "ExServ02", via="ExServ01")
    c.advance(HOUR)
    for _ in range(3):
        c.post("ExServ01", fid, 5)
    c.advance(HOUR)
    held = c.cnset("ExServ01", fid)
    assert c.remove_replica(fid, "ExServ01", via="ExServ01")
    assert c.remove_replica(fid, "ExServ02", via="ExServ02")
    c.advance(6 * HOUR)
    return c, fid, held


@pytest.mark.model
def test_seed_literal_reading_loses_content_when_two_replicas_are_removed_at_once() -> None:
    """The twin of BF-I14: when a delete-pending replica also answers, both delete and the content is lost."""
    c, fid, _held = _remove_both(rules=RULE_MUTANTS["pending-confirms-pending"])
    assert "ExServ02" not in c.replicas(fid)  # deleted on the word of a replica that was itself leaving
    assert "no-content-loss" in {v.rule for v in check_events(c.events, [PFMonitor()])}


@pytest.mark.model
def test_two_replicas_removed_at_once_keep_the_content() -> None:
    """BF-I14 (found by the model's own search): A and B are removed at the same time, each on its own
    store, where the replica list still shows the other as active. Neither may delete on the other's word;
    the content survives until a new replica takes it."""
    c, fid, held = _remove_both()
    assert set(c.replicas(fid).values()) == {"delete_pending"}
    assert c.add_replica(fid, "ExServ03", via="ExServ03")
    c.advance(24 * HOUR)
    assert c.replicas(fid) == {"ExServ03": "active"} and held <= c.cnset("ExServ03", fid)
    assert_clean(c)
