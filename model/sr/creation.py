"""Guards of the creation steps: RECEIVE to ACCEPT / REJECT, the shadow attempts and the session time-outs.

Seed 000, "How shadow messages are created" (SR-027..SR-031), "Shadow redundancy is enabled by default"
(SR-018..SR-021), "SMTP timeouts" (SR-039..SR-048) and the Exchange 2010 section (SR-036). The plan of
attempts comes from the recorded ShadowMessagePreference of the primary and the recorded topology; the
shadow server may be any eligible server (the model's random pick is one member of that set); the time-outs
come from the recorded connector settings. Attributes that restate these are checked against them.
"""

from __future__ import annotations

from typing import Any

from model.sr import events as ev
from model.sr.rules import Breach, breach
from model.sr.world import Inst, World, grown
from traces.schema import Event

# RECEIVE attributes that restate the configuration: attribute -> how to read the configured value
_RESTATED: dict[str, Any] = {
    "enabled": lambda w, p: w.cfg.enabled,
    "reject": lambda w, p: w.cfg.reject_on_failure,
    "pref": lambda w, p: w.cfg.preference_of(p),
    "max_remote": lambda w, p: w.cfg.max_remote,
    "max_local": lambda w, p: w.cfg.max_local,
    "meaning": lambda w, p: w.cfg.retry_meaning,
}


def receive(w: World, e: Event) -> Inst:
    """The instance a RECEIVE opens (an existing one is returned, so that the transition table refuses it)."""
    a, m = e.attrs, w.msg(e.entity)
    if a["inst"] in m.insts:
        return m.insts[a["inst"]]
    if m.insts:
        # the sender transmits again: a documented source of duplicates (SR-042)
        m.licences = grown(m.licences, "redelivery")
    inst = Inst(
        msg=e.entity,
        inst=a["inst"],
        primary=e.node,
        received_ms=e.ts_ms,
        forks=tuple(a["forks"]),
        enabled=w.cfg.enabled,
        reject=w.cfg.reject_on_failure,
        plan=w.plan_for(e.node),
        timeout_ends=w.cfg.shadow_timeout_ends,
    )
    m.insts[inst.inst] = inst
    return inst


def _receive(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out = e.attrs, []
    for attr, read in _RESTATED.items():
        if attr in a and a[attr] != read(w, e.node):
            out.append(breach("config-as-recorded", (e,), f"RECEIVE records {attr}={a[attr]!r}, the recorded "
                              f"configuration says {read(w, e.node)!r}"))  # fmt: skip
    if "plan" in a and iv.plan is not None and tuple(a["plan"]) != iv.plan:
        out.append(breach("config-as-recorded", (e,), f"RECEIVE records the plan {a['plan']}, the recorded "
                          f"configuration and topology give {list(iv.plan)}"))  # fmt: skip
    out += _topology(w, e, e.node, a.get("boundary"), a.get("site"))
    why = w.db_consistent(e.node, a.get("db"))
    if why:
        out.append(breach("database-id-as-recorded", (e,), why))
    if a.get("xshadow_advertised"):
        out.append(breach("no-xshadow-advertised", (e,), "the 2013 server advertised XSHADOW to the sender"))
    return out


def _topology(w: World, e: Event, server: str, boundary: Any, site: Any) -> list[Breach]:
    if w.topo is None:
        return []
    if server not in w.topo:
        return [breach("topology-as-recorded", (e,), f"{server} is not a server of the recorded topology")]
    wrong = []
    if boundary is not None and boundary != w.boundary(server):
        wrong.append(f"boundary {boundary!r}, not {w.boundary(server)!r}")
    if site is not None and site != w.site(server):
        wrong.append(f"site {site!r}, not {w.site(server)!r}")
    return [breach("topology-as-recorded", (e,), f"{e.kind} records for {server} " + "; ".join(wrong))] if wrong else []


def _haredirect(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out = e.attrs, []
    n, shadow = a["try"], a["shadow"]
    if not iv.enabled:
        out.append(breach("shadow-disabled", (e,), "a shadow attempt was made with ShadowRedundancyEnabled false"))
    if not iv.inbound_open or iv.outcome or iv.failed:
        out.append(breach("shadow-while-inbound-open", (e,), "the shadow session was opened after the sender's "
                          "session had ended or shadow creation was over"))  # fmt: skip
    if iv.plan is not None and w.knows(shadow):
        cls = "remote" if w.site(shadow) != w.site(iv.primary) else "local"
        if n != iv.tries + 1 or n > len(iv.plan) or iv.plan[n - 1] != cls:
            out.append(breach("shadow-placement", (e,), f"shadow attempt {n} on {shadow} ({cls} site) does not "
                              f"follow the plan {list(iv.plan)} after {iv.tries} attempts"))  # fmt: skip
        if "site" in a and a["site"] != cls:
            out.append(breach("topology-as-recorded", (e,), f"HAREDIRECT calls {shadow} {a['site']}, the recorded "
                              f"topology puts it in a {cls} site"))  # fmt: skip
        out += _topology(w, e, shadow, None, a.get("shadow_site"))
        out += _topology(w, e, iv.primary, None, a.get("site_of_primary"))
    iv.tries, iv.attempt_open, iv.attempt_ms, iv.attempt_id = n, shadow, e.ts_ms, e.event_id
    return out


def _hareceive(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out, s = e.attrs, [], e.node
    if iv.attempt_open != s:
        out.append(breach("shadow-copy-transition", (e,), f"{s} stored a shadow although no shadow session to it "
                          "was open"))  # fmt: skip
    if w.knows(s, iv.primary) and (
        w.boundary(s) != w.boundary(iv.primary) or s == iv.primary or w.topo[s][2] != "2013"
    ):  # type: ignore[index]
        out.append(breach("shadow-in-boundary", (e,), f"the shadow is on {s} in {w.boundary(s)}, not on another "
                          f"server of the primary's boundary {w.boundary(iv.primary)}"))  # fmt: skip
    out += _topology(w, e, s, a.get("boundary"), None)
    if a.get("primary", iv.primary) != iv.primary or ("forks" in a and tuple(a["forks"]) != iv.forks):
        out.append(breach("shadow-record-as-derived", (e,), f"the shadow records primary {a.get('primary')} and forks "
                          f"{a.get('forks')}, the message came to {iv.primary} with {list(iv.forks)}"))  # fmt: skip
    why = w.db_consistent(iv.primary, a.get("primary_db"))
    if why:
        out.append(breach("database-id-as-recorded", (e,), why))
    pair = (s, iv.primary)
    iv.shadow, iv.shadow_ms, iv.shadow_epoch = s, e.ts_ms, w.epoch.get(iv.primary, 0)
    w.contact[pair] = e.ts_ms  # the shadow session is a session between the two servers (SR-I05)
    w.hold(pair, (iv.msg, iv.inst), e.ts_ms)
    return out


def _shadow_ack(w: World, iv: Inst, e: Event) -> list[Breach]:
    out = []
    if iv.shadow != e.attrs["shadow"] or iv.attempt_open != iv.shadow:
        out.append(breach("shadow-ack-after-store", (e,), f"the primary took an acknowledgement from "
                          f"{e.attrs['shadow']} which never recorded storing the shadow"))  # fmt: skip
    iv.shadow_acked, iv.attempt_open = True, ""
    return out


def _redirect_fail(w: World, iv: Inst, e: Event) -> list[Breach]:
    a, out = e.attrs, []
    n, reason = int(a.get("try", 0)), a.get("reason", "")
    if iv.attempt_open:  # the open attempt failed
        expected_n = iv.tries
        if reason == "unreachable" and w.reach(iv.primary, iv.attempt_open):
            out.append(breach("primary-record-as-derived", (e,), f"the primary calls {iv.attempt_open} "
                              "unreachable although the recorded faults leave both up and connected"))  # fmt: skip
    elif iv.inbound_open and iv.plan and not iv.failed:  # an attempt without a session: nobody eligible
        expected_n = iv.tries + 1
        cls = iv.plan[min(expected_n, len(iv.plan)) - 1]
        if w.eligible(iv.primary, cls):
            out.append(breach("shadow-placement", (e,), f"attempt {expected_n} was given up without a session "
                              f"although {w.eligible(iv.primary, cls)} may hold the shadow"))  # fmt: skip
    else:
        expected_n = iv.tries
    if n != expected_n:
        out.append(breach("primary-record-as-derived", (e,), f"the failure is recorded as attempt {n}, the "
                          f"events seen make it attempt {expected_n}"))  # fmt: skip
    iv.tries, iv.attempt_open = max(iv.tries, expected_n), ""
    ends = not iv.inbound_open or (reason == "timeout" and iv.timeout_ends == "creation")
    final = ends or iv.plan is None or iv.tries >= len(iv.plan)
    if "final" in a and bool(a["final"]) != final and iv.plan is not None:
        out.append(breach("primary-record-as-derived", (e,), f"the failure says final={a['final']}, but after "
                          f"{iv.tries} of {len(iv.plan)} attempts it is {'' if final else 'not '}final"))  # fmt: skip
    iv.failed = iv.failed or final
    return out


def _timeout(w: World, iv: Inst, e: Event) -> list[Breach]:
    """SR-039, SR-I22: a shadow session times out no earlier than the first inactivity time-out after it opened;
    the sender's session at any moment after its data arrived (ConnectionTimeout counts from the connection's
    opening, which may precede the data), but no later than ConnectionTimeout after RECEIVE."""
    out, cfg = [], w.cfg
    if e.attrs["session"] == "inbound":
        iv.inbound_open = False
        waited, most = e.ts_ms - iv.received_ms, cfg.inbound_max_ms()
        if waited > most:
            out.append(breach("session-timeout", (e,), f"the sender's session timed out {waited} ms after its data "
                              f"arrived: it opened no later than the data, so ConnectionTimeout ({most} ms) had "
                              "closed it before"))  # fmt: skip
        return out
    waited, least = e.ts_ms - iv.attempt_ms, cfg.shadow_idle_ms()
    if not iv.attempt_open:
        out.append(breach("primary-record-as-derived", (e,), "a shadow session timed out but none was open"))
    if waited < least:
        out.append(breach("session-timeout", (e,), f"the shadow session timed out after {waited} ms, before the "
                          f"configured {least} ms"))  # fmt: skip
    return out


def _open_too_long(w: World, iv: Inst, e: Event) -> list[Breach]:
    """An answer in the sender's session later than ConnectionTimeout after its data (SR-039, SR-I22)."""
    waited, most = e.ts_ms - iv.received_ms, w.cfg.inbound_max_ms()
    if not (e.attrs.get("acked") or e.kind == ev.REJECT) or not iv.inbound_open or waited <= most:
        return []
    return [breach("session-timeout", (e,), f"the sender's session is answered {waited} ms after its data arrived, "
                   f"longer than ConnectionTimeout ({most} ms) lets a connection stay open")]  # fmt: skip


def _accept(w: World, iv: Inst, e: Event) -> list[Breach]:
    out = _open_too_long(w, iv, e)
    settled = iv.failed or not iv.inbound_open or not iv.enabled
    if (e.attrs.get("redundant") and not iv.shadow_acked) or (not iv.shadow_acked and not settled):
        b = breach("shadow-before-ack", (e,), "the primary accepted the message before the shadow server "
                   "acknowledged the copy and before shadow creation had failed")  # fmt: skip
        # the events compared: the ACCEPT judged, and the shadow attempt (HAREDIRECT) it should have waited on
        out.append(Breach(b.rule, (*b.event_ids, iv.attempt_id) if iv.attempt_id else b.event_ids, b.explanation))
    elif not iv.shadow_acked and iv.enabled and iv.reject:
        out.append(breach("reject-required", (e,), "the message was accepted without a shadow although "
                          "RejectMessageOnShadowFailure is true"))  # fmt: skip
    iv.outcome, iv.redundant = "accepted", iv.shadow_acked
    iv.copies[e.node].left = set(iv.forks)
    return out


def _reject(w: World, iv: Inst, e: Event) -> list[Breach]:
    out, text = _open_too_long(w, iv, e), e.attrs["response"]
    if not (text == ev.REJECTION_TEXT or (w.cfg.accept_variant and text.startswith(ev.REJECTION_VARIANT))):
        out.append(breach("rejection-text", (e,), f"the rejection reads {text!r}, not {ev.REJECTION_TEXT!r}"))
    if not (iv.enabled and iv.reject) or iv.shadow_acked or not (iv.failed or not iv.inbound_open):
        out.append(breach("failure-outcome", (e,), "the message was rejected although the configuration and the "
                          "shadow outcome call for accepting it"))  # fmt: skip
    iv.outcome = "rejected"
    return out


GUARDS = {
    ev.RECEIVE: _receive,
    ev.HAREDIRECT: _haredirect,
    ev.HARECEIVE: _hareceive,
    ev.SHADOW_ACK: _shadow_ack,
    ev.HAREDIRECTFAIL: _redirect_fail,
    ev.SESSION_TIMEOUT: _timeout,
    ev.ACCEPT: _accept,
    ev.REJECT: _reject,
}
