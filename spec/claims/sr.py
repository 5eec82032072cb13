"""Ordering and timing claims of shadow redundancy (seed 000_bc7da9fde6232d0b.txt).

Sections: "Messages received from outside a transport high availability boundary" (shadow before
acknowledgement), "SMTP timeouts" (connector time-outs, shadow attempts), "How shadow messages are
maintained" (heartbeat, resubmit time span, discard events, Safety Net expiry) and "Message processing
after an outage" (maximum delays). Times are integer milliseconds. A heartbeat or a discard-status check
is a tick of a periodic timer (`offset + period * k`), and an SMTP session takes a latency between 0 and
`SessionLatencyMax`, itself at most the Mailbox receive connector's ConnectionTimeout (the primary closes
any session by then). The two "maximum delay" sentences of the seed do not survive that model; the
repaired bounds are proved next to them and recorded in spec/CLAIMS.md.
"""

from __future__ import annotations

import z3

from spec.catalogue import param_default
from spec.claims.engine import Claim, Env, Problem
from spec.claims.ids import SR_IDS

ROLES = ("Mailbox", "FrontEnd", "Edge")


def _latency(e: Env, *, zero: bool = False) -> tuple[z3.ArithRef, z3.ArithRef]:
    """A session latency `l` within [0, SessionLatencyMax]; the maximum is symbolic (proofs hold for
    every value up to the Mailbox ConnectionTimeout)."""
    ct = e.param("ReceiveConnectionTimeoutMailbox")
    lat, lmax = e.time("session_latency"), e.time("SessionLatencyMax")
    e.assume(
        "0 <= session latency <= SessionLatencyMax <= ConnectionTimeout (Mailbox)",
        z3.And(lat >= 0, lat <= lmax, lmax <= ct),
    )
    if zero:
        e.assume("(seed's implicit reading) sessions take no time", lmax == 0)
    return lat, lmax


# --- shadow before acknowledgement -------------------------------------------------------------------


def _shadow_creation(*, wait_for_shadow: bool) -> Problem:
    e = Env()
    ct = e.param("ReceiveConnectionTimeoutMailbox")
    s_open, p_open, sent, sh_ack, p_got, ack, s_close = (
        e.at(n)
        for n in (
            "sender_session_open",
            "shadow_session_open",
            "copy_sent",
            "shadow_ack",
            "primary_gets_shadow_ack",
            "sender_ack",
            "sender_session_close",
        )
    )
    l1, l2 = e.time("latency.copy"), e.time("latency.ack")
    e.assume("network latencies are non-negative", z3.And(l1 >= 0, l2 >= 0))
    e.assume(
        "the shadow session opens while the sender's session is open",
        z3.And(s_open < p_open, p_open < s_close),
    )
    e.assume("the copy is sent on the shadow session", sent >= p_open)
    e.assume("the shadow acknowledges the copy after receiving it", sh_ack >= sent + l1)
    e.assume("the shadow's acknowledgement reaches the primary", p_got == sh_ack + l2)
    if wait_for_shadow:
        e.assume("the primary acknowledges the sender only after the shadow acknowledged", ack >= p_got)
    else:
        e.assume(
            "(weakened: Exchange 2010 delayed acknowledgement) the primary acknowledges at any time",
            ack > s_open,
        )
    e.assume("the sender is acknowledged in its original session", ack < s_close)
    e.assume("the sender's session closes by ConnectionTimeout", s_close <= s_open + ct)
    goal = z3.And(s_open < p_open, p_open <= sh_ack, sh_ack <= ack, ack < s_close, ack - s_open < ct)
    return e.problem(goal)


def shadow_attempts(count: int, meaning: str) -> int:
    """Attempts allowed by a MaxRetriesFor*SiteShadow value (SR-I03: 'attempts' by default, or 'retries'
    after a first try)."""
    return count if meaning == "attempts" else count + 1


def _shadow_attempts(*, bounded: bool) -> Problem:
    """PreferRemote: up to MaxRetriesForRemoteSiteShadow + MaxRetriesForLocalSiteShadow attempts, each
    ending at the latest when the Send connector's inactivity time-out closes an idle session."""
    e = Env()
    ct = e.param("ReceiveConnectionTimeoutMailbox")
    idle = e.param("SendConnectionInactivityTimeout")
    meaning = str(param_default("ShadowRetryCountMeaning"))
    n = sum(
        shadow_attempts(int(param_default(f"MaxRetriesFor{side}SiteShadow")), meaning) for side in ("Remote", "Local")
    )
    attempts = [e.time(f"attempt{i}.duration") for i in range(n)]
    for i, a in enumerate(attempts):
        e.assume(
            f"attempt {i} lasts between 1 ms and the Send connector inactivity time-out",
            z3.And(a >= 1, a <= idle),
        )
        if bounded:
            e.assume(f"(strengthened) attempt {i} lasts less than ConnectionTimeout / {n}", a * n < ct)
    total = z3.Sum(attempts)
    e.show("all_attempts", total)
    return e.problem(total < ct)


def _connector(role: str, *, defaults: bool) -> Problem:
    e = Env()
    inactivity = e.param(f"ReceiveConnectionInactivityTimeout{role}", default=defaults)
    timeout = e.param(f"ReceiveConnectionTimeout{role}", default=defaults)
    return e.problem(inactivity < timeout)


# --- maximum delays after an outage ------------------------------------------------------------------


def _first_tick_at_or_after(e: Env, name: str, x: z3.ArithRef, period: z3.ArithRef) -> z3.ArithRef:
    offset = e.time(f"{name}.offset")
    e.assume(f"{name} timer offset within one period", z3.And(offset >= 0, offset < period))
    t = e.grid(name, offset, period)
    e.assume(f"{name} is the first tick at or after the event", z3.And(t >= x, t - period < x))
    return t


def _new_database(goal: str, *, zero_latency: bool = False) -> Problem:
    """Mailbox01 returns at `returned_at` with a new database ID; the shadow server's next heartbeat
    session sees the new ID and promotes the shadow messages."""
    e = Env()
    hb = e.param("ShadowHeartbeatFrequency")
    back = e.at("returned_at")
    tick = _first_tick_at_or_after(e, "heartbeat", back, hb)
    lat, lmax = _latency(e, zero=zero_latency)
    delay = tick + lat - back
    e.show("delay", delay)
    e.prefer_small(lat)
    e.prefer_small(-delay)
    bound = {"stated": delay <= hb, "repaired": delay < hb + lmax, "tight": delay < hb + lmax - 1}[goal]
    return e.problem(bound)


def _same_database(goal: str, *, exact_timer: bool = False, zero_latency: bool = False) -> Problem:
    """Mailbox01 fails at `failed_at` (same database); the shadow server last reached it at
    `last_contact` (any session, at most one heartbeat period earlier) and promotes at the first check
    at which ShadowResubmitTimeSpan has passed since then: a heartbeat tick (PromotionCheck =
    heartbeatTick, SR-I06) or, in the alternative reading, a timer at exactly that time (exactTimer)."""
    e = Env()
    span, hb = e.param("ShadowResubmitTimeSpan"), e.param("ShadowHeartbeatFrequency")
    failed, contact = e.at("failed_at"), e.at("last_contact")
    e.assume(
        "the last contact precedes the failure by less than one heartbeat period",
        z3.And(contact <= failed, failed - contact < hb),
    )
    if exact_timer:
        check = e.time("decision_check")
        e.assume(
            "(PromotionCheck = exactTimer) a timer fires exactly the time span after the contact",
            check == contact + span,
        )
    else:
        check = _first_tick_at_or_after(e, "decision_check", contact + span, hb)
    lat, lmax = _latency(e, zero=zero_latency)
    delay = check + lat - failed
    e.show("delay", delay)
    e.prefer_small(lat)
    e.prefer_small(-delay)
    bound = {
        "stated": delay <= span,
        "repaired": delay < span + hb + lmax,
        "tight": delay < span + hb + lmax - 1,
    }[goal]
    return e.problem(bound)


# --- promotion, Safety Net expiry and discard events -------------------------------------------------


def _promotion_bound(e: Env, failed: z3.ArithRef) -> tuple[z3.ArithRef, z3.ArithRef]:
    span, hb = e.param("ShadowResubmitTimeSpan", default=e.defaults), e.param("ShadowHeartbeatFrequency")
    _, lmax = _latency(e)
    promoted = e.time("promoted_at")
    e.assume(
        "promotion within the repaired same-database bound (sr.same_db_delay.repaired)",
        z3.And(promoted > failed, promoted < failed + span + hb + lmax),
    )
    return promoted, lmax


class _DefaultsEnv(Env):
    def __init__(self, defaults: bool) -> None:
        super().__init__()
        self.defaults = defaults


def _promote_before_expiry(*, defaults: bool) -> Problem:
    e = _DefaultsEnv(defaults)
    hold = e.param("SafetyNetHoldTime", default=defaults)
    expire = e.param("MessageExpirationTimeout")
    created, failed = e.at("shadow_created"), e.time("primary_failed")
    e.assume(
        "the primary fails while its copy is still queued (before it expires)",
        z3.And(created <= failed, failed < created + expire),
    )
    promoted, _ = _promotion_bound(e, failed)
    return e.problem(promoted < created + hold + expire)


def _discard_events_kept(*, defaults: bool) -> Problem:
    e = _DefaultsEnv(defaults)
    keep = e.param("ShadowMessageAutoDiscardInterval", default=defaults)
    queued, contact = e.at("discard_event_queued"), e.time("shadow_last_query")
    e.assume("the shadow server last queried before the discard event was queued", contact <= queued)
    promoted, _ = _promotion_bound(e, contact)
    return e.problem(promoted < queued + keep)


def claims() -> list[Claim]:
    ids = SR_IDS
    out = [
        Claim(
            "sr.shadow_before_ack",
            ids["shadow_order"],
            "The sender is acknowledged only after the shadow acknowledged its copy, which follows the "
            "shadow "
            "session opened while the sender's session was open; all within ConnectionTimeout.",
            lambda: _shadow_creation(wait_for_shadow=True),
            "proved",
            "Weakened (delayed acknowledgement instead of waiting for the shadow): the sender may be "
            "acknowledged "
            "before the shadow exists.",
            lambda: _shadow_creation(wait_for_shadow=False),
        ),
        Claim(
            "sr.shadow_attempts_fit_session",
            ids["shadow_attempts"],
            "Under the defaults, all PreferRemote shadow attempts end before the sender's session reaches "
            "its "
            "ConnectionTimeout.",
            lambda: _shadow_attempts(bounded=False),
            "refuted",
            "Strengthened: if each attempt lasts at most ConnectionTimeout divided by the number of "
            "attempts, they fit.",
            lambda: _shadow_attempts(bounded=True),
            finding="Not a seed sentence but its consequence: with 4 remote + 2 local attempts each allowed "
            "the "
            "Send connector's 10-minute idle time-out, shadow creation can outlast the sender's 10-minute "
            "session; the seed's SMTP-timeouts paragraph (accept or 451 4.4.0) is the path taken then.",
        ),
    ]
    for role in ROLES:
        out.append(
            Claim(
                f"sr.connector_timeouts.{role.lower()}",
                ids[f"timeouts_{role.lower()}"],
                f"On the {role} receive connector the default ConnectionInactivityTimeout is smaller than "
                f"ConnectionTimeout.",
                lambda role=role: _connector(role, defaults=True),
                "proved",
                "Weakened (only the catalogue ranges, no defaults): a configuration may break it, so "
                "validate-config checks it.",
                lambda role=role: _connector(role, defaults=False),
            )
        )
    out += [
        Claim(
            "sr.new_db_delay.as_stated",
            ids["new_db"],
            "A server back with a new database: messages wait at most ShadowHeartbeatFrequency.",
            lambda: _new_database("stated"),
            "refuted",
            "With sessions taking no time (the seed's implicit assumption) the bound holds.",
            lambda: _new_database("stated", zero_latency=True),
            finding="Refuted once the heartbeat session takes time: the tick can come just under one period "
            "after "
            "the return, and the session adds its latency. Repaired: sr.new_db_delay.repaired.",
        ),
        Claim(
            "sr.new_db_delay.repaired",
            ids["new_db"],
            "A server back with a new database: messages wait less than ShadowHeartbeatFrequency + SessionLatencyMax.",
            lambda: _new_database("repaired"),
            "proved",
            "Tight: the bound cannot be lowered by 1 ms.",
            lambda: _new_database("tight"),
            repairs="sr.new_db_delay.as_stated",
        ),
        Claim(
            "sr.same_db_delay.as_stated",
            ids["same_db"],
            "A server offline with the same database: messages wait at most ShadowResubmitTimeSpan.",
            lambda: _same_database("stated", zero_latency=True),
            "refuted",
            "With the alternative PromotionCheck = exactTimer and sessions taking no time, the bound holds.",
            lambda: _same_database("stated", exact_timer=True, zero_latency=True),
            finding="Refuted even with sessions taking no time, when the decision is taken on heartbeat "
            "ticks not "
            "aligned with the last contact (a session for unrelated mail can reach the primary between two "
            "ticks); a failing session attempt that takes time adds its latency. Repaired: "
            "sr.same_db_delay.repaired.",
        ),
        Claim(
            "sr.same_db_delay.repaired",
            ids["same_db"],
            "A server offline with the same database: messages wait less than ShadowResubmitTimeSpan + "
            "ShadowHeartbeatFrequency + SessionLatencyMax.",
            lambda: _same_database("repaired"),
            "proved",
            "Tight: the bound cannot be lowered by 1 ms.",
            lambda: _same_database("tight"),
            repairs="sr.same_db_delay.as_stated",
        ),
        Claim(
            "sr.promote_before_safety_net_expiry",
            ids["expiry"],
            "An unacknowledged shadow is promoted before it would expire after SafetyNetHoldTime + "
            "MessageExpirationTimeout.",
            lambda: _promote_before_expiry(defaults=True),
            "proved",
            "Weakened (SafetyNetHoldTime and ShadowResubmitTimeSpan only within their ranges): expiry can come first.",
            lambda: _promote_before_expiry(defaults=False),
        ),
        Claim(
            "sr.discard_events_outlive_decision",
            ids["auto_discard"],
            "Queued discard events outlive the shadow server's decision: it queries or promotes itself "
            "before "
            "ShadowMessageAutoDiscardInterval deletes them.",
            lambda: _discard_events_kept(defaults=True),
            "proved",
            "Weakened (ranges only): discard events can be deleted before a silent shadow server promotes itself.",
            lambda: _discard_events_kept(defaults=False),
        ),
    ]
    return out
