"""Issue 18's hand-built shadow redundancy traces (seed 000), written from the seed's text with the issue-9
builder: SR-I22 (the sender's session and ConnectionTimeout, "SMTP timeouts"), the two-sided heartbeat
schedule ("How shadow messages are maintained") and shadows held for a primary whose messages the monitor never
saw. Each case: (name, events, expected): the exact set of rules, or "unknown" (judged unjudgeable).
"""

from __future__ import annotations

from collections.abc import Callable

from tests.traces9.sr.builder import Trace
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


CASES: list[Case] = [
    ("i22_sender_times_out_a_minute_after_the_data", i22_sender_times_out_a_minute_after_the_data, set()),
    (
        "i22_sender_times_out_after_connection_timeout",
        i22_sender_times_out_after_connection_timeout,
        {"session-timeout"},
    ),
    ("i22_answer_within_connection_timeout", i22_answer_within_connection_timeout, set()),
    ("i22_answer_after_connection_timeout", i22_answer_after_connection_timeout, {"session-timeout"}),
]
