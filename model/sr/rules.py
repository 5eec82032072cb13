"""Pure transition rules of shadow redundancy, shared by the simulator and the monitor.

Seed 000: "How shadow messages are created", "SMTP timeouts", "How shadow messages are maintained",
"Message processing after an outage", "Shadow redundancy with Exchange 2010 Hub Transport servers in the
same Active Directory site". Two kinds of function live here:

- decisions (`attempt_plan`, `shadow_candidates`, `promotion_reason`, ...) that the simulator calls to
  choose what to do; and
- `step(view, event)`, which folds one recorded event into a `MessageView` and returns the rules the
  event breaks. The simulator folds its own events through `step` (so its state is the monitor's state)
  and the monitor folds a recorded trace through it. No I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from model.sr import events as ev
from model.sr.breaches import RULES, Breach, breach  # noqa: F401  (RULES re-exported)
from model.sr.decisions import (  # noqa: F401  (re-exported: the simulator calls them as rules.*)
    attempt_plan,
    failure_outcome,
    promotion_reason,
    release_ready,
    safetynet_may_resubmit,
    shadow_candidates,
)
from model.sr.liveness import final_breaches, heartbeat_breaches  # noqa: F401
from model.sr.state import CROSSES_BOUNDARY, InstView, MessageView, evolve, fork_kind
from traces.schema import Event

# --- the fold -----------------------------------------------------------------------------------------
Result = tuple[MessageView, list[Breach]]


def _receive(mv: MessageView, e: Event, ctx: Mapping[str, Any]) -> Result:
    a = e.attrs
    plan = tuple(a.get("plan", ()))
    iv = InstView(
        inst=a["inst"],
        primary=e.node,
        boundary=a["boundary"],
        db=str(a["db"]),
        forks=tuple(a["forks"]),
        received_ms=e.ts_ms,
        enabled=bool(a["enabled"]),
        reject=bool(a["reject"]),
        plan=plan,
    )
    out = []
    expected = attempt_plan(
        a["pref"], a["in_dag"], a["multi_site"], a["max_remote"], a["max_local"], a.get("meaning", "attempts")
    )
    if plan != expected:
        out.append(
            breach(
                "shadow-placement",
                (e,),
                f"the shadow attempt plan {list(plan)} is not the one the configuration prescribes, {list(expected)}",
            )
        )
    if a.get("xshadow_advertised"):
        out.append(breach("no-xshadow-advertised", (e,), "the 2013 server advertised XSHADOW to the sender"))
    return mv.with_inst(iv), out


def _haredirect(mv: MessageView, iv: InstView, e: Event) -> Result:
    a, out = e.attrs, []
    n = a["try"]
    if not iv.enabled:
        out.append(breach("shadow-disabled", (e,), "a shadow attempt was made with ShadowRedundancyEnabled false"))
    if not iv.inbound_open or iv.outcome:
        out.append(
            breach(
                "shadow-while-inbound-open",
                (e,),
                "the shadow session was opened after the sender's session had ended",
            )
        )
    remote = a["shadow_site"] != a["site_of_primary"]
    if n != iv.tries + 1 or n > len(iv.plan) or iv.plan[n - 1] != ("remote" if remote else "local"):
        out.append(
            breach(
                "shadow-placement",
                (e,),
                f"shadow attempt {n} on {a['shadow']} "
                f"({'remote' if remote else 'local'} site) does not follow the plan {list(iv.plan)}",
            )
        )
    return mv.with_inst(evolve(iv, tries=n, attempt_open=a["shadow"])), out


def _hareceive(mv: MessageView, iv: InstView, e: Event) -> Result:
    out = []
    if e.attrs["boundary"] != iv.boundary or e.node == iv.primary:
        out.append(
            breach(
                "shadow-in-boundary",
                (e,),
                f"the shadow is on {e.node} in {e.attrs['boundary']}, not "
                f"on another server of the primary's boundary {iv.boundary}",
            )
        )
    return mv.with_inst(evolve(iv, shadow=e.node, shadow_ms=e.ts_ms, shadow_state="held")), out


def _shadow_ack(mv: MessageView, iv: InstView, e: Event) -> Result:
    out = []
    if iv.shadow != e.attrs["shadow"]:
        out.append(
            breach(
                "shadow-ack-after-store",
                (e,),
                f"the primary took an acknowledgement from {e.attrs['shadow']} which never recorded storing the shadow",
            )
        )
    return mv.with_inst(evolve(iv, shadow_acked=True, attempt_open="")), out


def _fail(mv: MessageView, iv: InstView, e: Event) -> Result:
    tries = max(iv.tries, int(e.attrs.get("try", 0)))
    return mv.with_inst(evolve(iv, failed=iv.failed or bool(e.attrs.get("final")), attempt_open="", tries=tries)), []


def _timeout(mv: MessageView, iv: InstView, e: Event) -> Result:
    if e.attrs["session"] == "inbound":
        iv = evolve(iv, inbound_open=False)
    return mv.with_inst(iv), []


def _accept(mv: MessageView, iv: InstView, e: Event) -> Result:
    out, acked = [], bool(e.attrs["acked"])
    settled = iv.failed or not iv.inbound_open or not iv.enabled
    if (e.attrs["redundant"] and not iv.shadow_acked) or (not iv.shadow_acked and not settled):
        out.append(
            breach(
                "shadow-before-ack",
                (e,),
                "the primary accepted the message before the shadow server "
                "acknowledged the copy and before shadow creation had failed",
            )
        )
    elif not iv.shadow_acked and iv.enabled and iv.reject:
        out.append(
            breach(
                "reject-required",
                (e,),
                "the message was accepted without a shadow although RejectMessageOnShadowFailure is true",
            )
        )
    iv = evolve(iv, outcome="accepted", redundant=iv.shadow_acked)
    lic = mv.licences if acked else mv.licences | {"redelivery"}
    return evolve(mv.with_inst(iv), licences=lic), out


def _reject(mv: MessageView, iv: InstView, e: Event, ctx: Mapping[str, Any]) -> Result:
    out, text = [], e.attrs["response"]
    ok = text == ev.REJECTION_TEXT or (ctx.get("accept_variant") and text.startswith(ev.REJECTION_VARIANT))
    if not ok:
        out.append(breach("rejection-text", (e,), f"the rejection reads {text!r}, not {ev.REJECTION_TEXT!r}"))
    if not (iv.enabled and iv.reject) or iv.shadow_acked or not (iv.failed or not iv.inbound_open):
        out.append(
            breach(
                "failure-outcome",
                (e,),
                "the message was rejected although the configuration and the shadow outcome call for accepting it",
            )
        )
    return mv.with_inst(evolve(iv, outcome="rejected")), out


def _process(mv: MessageView, iv: InstView, e: Event) -> Result:
    fork, out = e.attrs["fork"], []
    seen = fork in mv.delivered
    if seen and not mv.licences:
        out.append(
            breach(
                "duplicates-documented",
                (e,),
                f"fork {fork} reached its destination twice with no "
                "sender redelivery, promotion or Safety Net resubmission to explain it",
            )
        )
    if e.kind == ev.DELIVER and seen and fork_kind(fork) in {"mailbox", "journal"}:
        out.append(
            breach(
                "duplicate-hidden-from-mailbox",
                (e,),
                f"fork {fork} was delivered to mailbox users a "
                "second time instead of being caught by duplicate detection",
            )
        )
    if e.kind == ev.DUPLICATEDELIVER and not seen:
        out.append(
            breach(
                "duplicate-hidden-from-mailbox",
                (e,),
                f"fork {fork} was dropped as a duplicate but was never delivered before",
            )
        )
    if e.attrs.get("via") == "primary" and e.node == iv.primary:
        iv = evolve(iv, processed=iv.processed | {fork})
    return evolve(mv.with_inst(iv), delivered=mv.delivered | {fork}), out


def _notify(mv: MessageView, iv: InstView, e: Event) -> Result:
    fork, out = e.attrs["fork"], []
    if fork not in iv.processed:
        out.append(
            breach(
                "no-premature-discard",
                (e,),
                f"the shadow was told fork {fork} is complete before the primary processed it",
            )
        )
    return mv.with_inst(evolve(iv, notified=iv.notified | {fork})), out


def _hadiscard(mv: MessageView, iv: InstView, e: Event) -> Result:
    out = []
    if not release_ready(iv.forks, iv.notified):
        missing = sorted(set(iv.forks) - iv.notified)
        out.append(
            breach(
                "all-forks-before-release",
                (e,),
                f"the shadow was released while forks {missing} had no discard notification",
            )
        )
    return mv.with_inst(evolve(iv, shadow_state="released")), out


def _safetynet(mv: MessageView, iv: InstView, e: Event) -> Result:
    out = []
    if e.attrs["role"] == "primary":
        if e.node == iv.primary and not set(iv.forks) <= iv.processed:
            out.append(
                breach(
                    "primary-keeps-copy",
                    (e,),
                    "the primary moved the message into Safety Net before every fork was processed",
                )
            )
        return mv.with_inst(evolve(iv, primary_done=True)), out
    return mv, out


def _promote(mv: MessageView, iv: InstView, e: Event) -> Result:
    a, out = e.attrs, []
    if a["reason"] == "resubmit_timespan":
        late = e.ts_ms - max(a["last_contact_ms"], iv.shadow_ms)
        if late < a["resubmit_ms"]:
            out.append(
                breach(
                    "promotion-timing",
                    (e,),
                    f"the shadow took ownership {late} ms after last reaching "
                    f"the primary, before ShadowResubmitTimeSpan ({a['resubmit_ms']} ms)",
                )
            )
    elif str(a["observed_db"]) == iv.db or str(a["original_db"]) != iv.db:
        out.append(
            breach(
                "promotion-db-change",
                (e,),
                f"the shadow took ownership for a database ID change although the primary's database is still {iv.db}",
            )
        )
    if iv.shadow_state != "held" or e.node != iv.shadow:
        out.append(breach("promotion-timing", (e,), f"{e.node} promoted a shadow it does not hold"))
    iv = evolve(iv, shadow_state="promoted", promoted_ms=e.ts_ms)
    return evolve(mv.with_inst(iv), licences=mv.licences | {"promotion"}), out


def _resubmit(mv: MessageView, iv: InstView, e: Event) -> Result:
    fork, out = e.attrs["fork"], []
    kind = fork_kind(fork)
    if kind == "hub2010":
        out.append(
            breach(
                "no-safetynet-resubmit-to-2010",
                (e,),
                f"Safety Net resubmitted fork {fork} to an Exchange 2010 Hub",
            )
        )
    elif kind in CROSSES_BOUNDARY:
        out.append(
            breach(
                "no-safetynet-resubmit-across-boundary",
                (e,),
                f"Safety Net resubmitted fork {fork}, which had already crossed the boundary",
            )
        )
    return evolve(mv, licences=mv.licences | {"safetynet"}), out


def _shadow_expire(mv: MessageView, iv: InstView, e: Event) -> Result:
    out = []
    age = e.ts_ms - iv.shadow_ms
    if age < e.attrs["hold_ms"] + e.attrs["expiration_ms"]:
        out.append(
            breach(
                "shadow-expiry",
                (e,),
                f"an unacknowledged shadow expired after {age} ms, before SafetyNetHoldTime + MessageExpirationTimeout",
            )
        )
    return mv.with_inst(evolve(iv, shadow_state="expired")), out


def _lost(mv: MessageView, iv: InstView, e: Event) -> Result:
    if e.node == iv.shadow and iv.shadow_state in ("held", "promoted"):
        iv = evolve(iv, shadow_state="lost")  # the shadow copy, promoted or not
    elif e.attrs["role"] == "primary":
        iv = evolve(iv, primary_lost=True)
    return evolve(mv.with_inst(iv), lost_nodes=mv.lost_nodes | {e.node}), []


def _queue_fail(mv: MessageView, iv: InstView, e: Event) -> Result:
    """Queued forks expired (SR-067): never before MessageExpirationTimeout after the message arrived."""
    forks, out = frozenset(e.attrs["forks"]), []
    age = e.ts_ms - iv.received_ms
    if age < e.attrs["expiration_ms"]:
        out.append(
            breach(
                "queue-expiry",
                (e,),
                f"forks {sorted(forks)} expired {age} ms after the message arrived, before MessageExpirationTimeout",
            )
        )
    processed = iv.processed | forks if e.node == iv.primary else iv.processed
    return mv.with_inst(evolve(iv, expired=iv.expired | forks, processed=processed)), out


def _discard_expire(mv: MessageView, iv: InstView, e: Event) -> Result:
    return evolve(mv, licences=mv.licences | {"auto-discard"}), []


_INST_HANDLERS: dict[str, Callable[[MessageView, InstView, Event], Result]] = {
    ev.HAREDIRECT: _haredirect,
    ev.HARECEIVE: _hareceive,
    ev.SHADOW_ACK: _shadow_ack,
    ev.HAREDIRECTFAIL: _fail,
    ev.SESSION_TIMEOUT: _timeout,
    ev.ACCEPT: _accept,
    ev.DELIVER: _process,
    ev.DUPLICATEDELIVER: _process,
    ev.SEND: _process,
    ev.DISCARD_NOTIFY: _notify,
    ev.HADISCARD: _hadiscard,
    ev.SAFETYNET: _safetynet,
    ev.PROMOTE: _promote,
    ev.RESUBMIT: _resubmit,
    ev.SHADOW_EXPIRE: _shadow_expire,
    ev.LOST: _lost,
    ev.DISCARD_EXPIRE: _discard_expire,
    ev.FAIL: _queue_fail,
}


def step(mv: MessageView, e: Event, ctx: Mapping[str, Any] | None = None) -> Result:
    """Fold one per-message event into the view; return the new view and the rules it breaks."""
    ctx = ctx or {}
    if e.kind == ev.RECEIVE:
        return _receive(mv, e, ctx)
    if e.kind == ev.SNAPSHOT:
        return mv, final_breaches(mv, e)
    inst = e.attrs.get("inst")
    iv = mv.inst(inst) if inst is not None else None
    if iv is None:
        return mv, []  # unknown kind, or an instance whose RECEIVE is not in the trace (judged unknown)
    if e.kind == ev.REJECT:
        return _reject(mv, iv, e, ctx)
    handler = _INST_HANDLERS.get(e.kind)
    return handler(mv, iv, e) if handler else (mv, [])
