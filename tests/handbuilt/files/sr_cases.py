"""Hand-built shadow redundancy traces (seed 000), written from the seed's text with the
`tests/handbuilt/sr` builder: SR-I22 (the sender's session and ConnectionTimeout, "SMTP timeouts"), the two-sided
heartbeat schedule ("How shadow messages are maintained") and shadows held for a primary whose messages the monitor
never saw. Each case: (name, events, expected): the exact set of rules, or "unknown" (judged unjudgeable).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.handbuilt.sr.builder import Trace
from traces.schema import Event

F = ["mbx", "ext:fabrikam.example"]
Case = tuple[str, Callable[[], list[Event]], "set[str] | str"]


def _unshadowed_after_sender_timeout(t: Trace, at: float) -> Trace:
    """The sender's session times out while the shadow session is open: creation ends, the message is accepted
    without a shadow (RejectMessageOnShadowFailure false), and processed."""
    t.ev(at, "EX01", "SESSION_TIMEOUT", session="inbound", timeout="ConnectionTimeout")
    t.ev(at, "EX01", "HAREDIRECTFAIL", shadow="EX02", reason="inbound session timed out", final=True, **{"try": 1})
    t.ev(at, "EX01", "ACCEPT", redundant=False, acked=False, response="")
    t.ev(at + 1, "EX01", "DELIVER", fork="mbx", via="primary")
    t.ev(at + 1, "EX01", "SEND", fork="ext:fabrikam.example", next_hop="fabrikam.example", via="primary")
    return t.ev(at + 1, "EX01", "SAFETYNET", role="primary")


def i22_sender_times_out_a_minute_after_the_data() -> list[Event]:
    """Valid: the connection opened up to ConnectionTimeout before the data; it may close one minute after."""
    t = Trace("i22-early").received(0, "EX01", F).ev(0.1, "EX01", "HAREDIRECT", shadow="EX02", **{"try": 1})
    return _unshadowed_after_sender_timeout(t, 1).snapshot(60).events


def i22_sender_times_out_after_connection_timeout() -> list[Event]:
    """Invalid: a session open 12 minutes after its data outlived ConnectionTimeout (10 minutes by default)."""
    t = Trace("i22-late").received(0, "EX01", F).ev(0.1, "EX01", "HAREDIRECT", shadow="EX02", **{"try": 1})
    return _unshadowed_after_sender_timeout(t, 12).snapshot(60).events


def _slow_shadow(name: str, ack_at: float) -> list[Event]:
    t = Trace(name).received(0, "EX01", F).ev(0.1, "EX01", "HAREDIRECT", shadow="EX02", **{"try": 1})
    t.ev(ack_at - 0.02, "EX02", "HARECEIVE", primary="EX01", primary_db="EX01-a", forks=F)
    t.ev(ack_at - 0.01, "EX01", "SHADOW_ACK", shadow="EX02")
    t.ev(ack_at, "EX01", "ACCEPT", redundant=True, acked=True, response="250 2.6.0 Queued mail for delivery")
    return t.delivered(ack_at + 1, "EX01", F).released(ack_at + 1.5, "EX02", "EX01", F).snapshot(60).events


def i22_answer_within_connection_timeout() -> list[Event]:
    """Valid: the 250 reaches the sender 9.9 minutes after the data."""
    return _slow_shadow("i22-answer-ok", 9.9)


def i22_answer_after_connection_timeout() -> list[Event]:
    """Invalid: a 250 in the sender's session 11 minutes after the data: the connection had to be closed."""
    return _slow_shadow("i22-answer-late", 11)


def _held(name: str, **sr: object) -> Trace:
    """m1 received on EX01 (Redmond) and shadowed on EX02 (Dublin), processed by the primary at minute 1."""
    return Trace(name, **sr).received(0, "EX01", F).shadowed(0.1, "EX01", "EX02", F).delivered(1, "EX01", F)


def hb_heartbeats_on_the_configured_schedule() -> list[Event]:
    """Valid: heartbeats every ShadowHeartbeatFrequency (2 minutes), a session-carried query between them (any
    session to the primary carries XQUERYDISCARD), and a failed heartbeat retried at once (no session opened)."""
    t = _held("hb-ok").query(0.5, "EX02", "EX01", db="EX01-a").query(0.8, "EX02", "EX01", db="EX01-a", reason="session")
    t.isolate(2.7, "EX01").query(2.8, "EX02", "EX01", ok=False).heal(2.9).query(3.0, "EX02", "EX01", db="EX01-a")
    return t.released(5.0, "EX02", "EX01", F).snapshot(60).events


def hb_heartbeats_four_times_as_often() -> list[Event]:
    """Invalid: successful heartbeats 30 seconds apart under a 2-minute ShadowHeartbeatFrequency."""
    t = _held("hb-fast").query(0.5, "EX02", "EX01", db="EX01-a").query(1.0, "EX02", "EX01", db="EX01-a")
    return t.query(1.5, "EX02", "EX01", db="EX01-a").released(2.0, "EX02", "EX01", F).snapshot(60).events


def hb_heartbeat_after_a_restart_of_the_shadow() -> list[Event]:
    """Valid: the shadow server restarts; its schedule starts afresh (the first heartbeat may come at once)."""
    t = _held("hb-restart").query(0.5, "EX02", "EX01", db="EX01-a").crash(0.6, "EX02").restart(0.7, "EX02")
    return t.released(0.8, "EX02", "EX01", F).snapshot(60).events


def hb_restart_in_the_heartbeats_millisecond() -> list[Event]:
    """Valid (found by `haconform explore sr --bound sr-2s-2m-crash`): the shadow server heartbeats, crashes and
    restarts within one millisecond; its next heartbeat comes half an interval later. The restart starts the
    schedule afresh however close it is to the previous heartbeat (SR-I30)."""
    t = _held("hb-restart-same-ms").query(0.5, "EX02", "EX01", db="EX01-a").crash(0.5, "EX02").restart(0.5, "EX02")
    return t.released(1.5, "EX02", "EX01", F).snapshot(60).events


def hb_no_restart_between_heartbeats() -> list[Event]:
    """Invalid, the twin of the case above: the same heartbeats without the crash and restart."""
    t = _held("hb-no-restart").query(0.5, "EX02", "EX01", db="EX01-a")
    return t.released(1.5, "EX02", "EX01", F).snapshot(60).events


def hb_heartbeat_sooner_than_a_long_interval() -> list[Event]:
    """Invalid: ShadowHeartbeatFrequency recorded as 30 minutes; heartbeats come every 2 minutes."""
    t = _held("hb-long", heartbeat_ms=30 * 60_000).query(0.5, "EX02", "EX01", db="EX01-a")
    return t.query(2.5, "EX02", "EX01", db="EX01-a").released(4.5, "EX02", "EX01", F).snapshot(60).events


def unseen_shadow_held_for_a_2010_hub() -> list[Event]:
    """Invalid: EX02 records a shadow of m2 for HUB1, an Exchange 2010 Hub, which records nothing the 2013 monitor
    recognises (2010 shadow redundancy is another protocol) and queries it. m2's RECEIVE is missing, so m2 is
    partial, but seed 000 forbids a 2013 shadow for a 2010 Hub primary whatever came before (TR-I01, SR-015:
    shadow-in-boundary; before issue 30 this trace was unknown)."""
    t = _held("unseen-hub").released(1.5, "EX02", "EX01", F)
    t.ev(2, "EX02", "HARECEIVE", "m2", primary="HUB1", primary_db="HUB1-a", forks=["mbx"])
    t.query(3, "EX02", "HUB1", db="HUB1-a")
    return t.snapshot(60, "m1", "m2").events


def unseen_events_recorded_by_a_2010_hub() -> list[Event]:
    """Unknown: HUB1 (version 2010) records a RECEIVE under mechanism sr: it takes no part, so it is not judged."""
    t = _held("unseen-hub-receive").released(1.5, "EX02", "EX01", F).received(2, "HUB1", ["mbx"], msg="m2")
    return t.snapshot(60, "m1", "m2").events


def unseen_heartbeat_to_an_unknown_server() -> list[Event]:
    """Invalid: a heartbeat to EX09, which the recorded topology does not hold (topology-as-recorded)."""
    t = _held("unseen-ex09").released(1.5, "EX02", "EX01", F).query(3, "EX02", "EX09", db="EX09-a")
    return t.snapshot(60).events


def unseen_shadow_whose_primary_recorded_nothing() -> list[Event]:
    """Unknown: EX02 holds and releases a shadow of m3, whose primary EX03 (a 2013 DAG member) recorded nothing."""
    t = _held("unseen-m3").released(1.5, "EX02", "EX01", F)
    t.ev(2, "EX02", "HARECEIVE", "m3", primary="EX03", primary_db="EX03-a", forks=["mbx"])
    return t.released(3, "EX02", "EX03", ["mbx"], msg="m3").snapshot(60, "m1", "m3").events


def unseen_story_valid() -> list[Event]:
    """Valid: the same story without the unseen message."""
    return _held("unseen-none").released(1.5, "EX02", "EX01", F).snapshot(60).events


CASES: list[Case] = [
    ("i22_sender_times_out_a_minute_after_the_data", i22_sender_times_out_a_minute_after_the_data, set()),
    (
        "i22_sender_times_out_after_connection_timeout",
        i22_sender_times_out_after_connection_timeout,
        {"session-timeout"},
    ),
    ("i22_answer_within_connection_timeout", i22_answer_within_connection_timeout, set()),
    ("i22_answer_after_connection_timeout", i22_answer_after_connection_timeout, {"session-timeout"}),
    ("hb_heartbeats_on_the_configured_schedule", hb_heartbeats_on_the_configured_schedule, set()),
    ("hb_heartbeats_four_times_as_often", hb_heartbeats_four_times_as_often, {"heartbeat-not-early"}),
    ("hb_heartbeat_after_a_restart_of_the_shadow", hb_heartbeat_after_a_restart_of_the_shadow, set()),
    ("hb_heartbeat_sooner_than_a_long_interval", hb_heartbeat_sooner_than_a_long_interval, {"heartbeat-not-early"}),
    ("hb_restart_in_the_heartbeats_millisecond", hb_restart_in_the_heartbeats_millisecond, set()),
    ("hb_no_restart_between_heartbeats", hb_no_restart_between_heartbeats, {"heartbeat-not-early"}),
    ("unseen_shadow_held_for_a_2010_hub", unseen_shadow_held_for_a_2010_hub, {"shadow-in-boundary"}),
    ("unseen_events_recorded_by_a_2010_hub", unseen_events_recorded_by_a_2010_hub, "unknown"),
    ("unseen_heartbeat_to_an_unknown_server", unseen_heartbeat_to_an_unknown_server, {"topology-as-recorded"}),
    ("unseen_shadow_whose_primary_recorded_nothing", unseen_shadow_whose_primary_recorded_nothing, "unknown"),
    ("unseen_story_valid", unseen_story_valid, set()),
]
