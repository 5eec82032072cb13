"""Guards of the creation steps: RECEIVE to ACCEPT / REJECT, the shadow attempts and the session time-outs.

Seed 000, "How shadow messages are created" (SR-027..SR-031), "Shadow redundancy is enabled by default"
(SR-018..SR-021), "SMTP timeouts" (SR-039..SR-048) and the Exchange 2010 section (SR-036). The plan of
attempts comes from the recorded ShadowMessagePreference of the primary and the recorded topology; the
shadow server may be any eligible server (the model's random pick is one member of that set); the time-outs
come from the recorded connector settings. Attributes that restate these are checked against them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: Cython's decorators type the events as C structs (`creation.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython


from model.sr import events as ev
from model.sr import rules as R
from model.sr.inputs import attempt_number
from model.sr.world import Inst, World, grown
from traces.event import Event
from traces.verdict import Rule, Violation

# RECEIVE attributes that restate the configuration: attribute -> how to read the configured value
_RESTATED: dict[str, Any] = {
    "enabled": lambda w, p: w.cfg.enabled,
    "reject": lambda w, p: w.cfg.reject_on_failure,
    "pref": lambda w, p: w.cfg.preference_of(p),
    "max_remote": lambda w, p: w.cfg.max_remote,
    "max_local": lambda w, p: w.cfg.max_local,
    "meaning": lambda w, p: w.cfg.retry_meaning,
}
# the catalogue parameter each restated attribute stands for
_PARAMETER = {
    "enabled": "SR-P01",
    "reject": "SR-P02",
    "pref": "SR-P03",
    "max_remote": "SR-P04",
    "max_local": "SR-P05",
    "meaning": "SR-P18",
}


@cython.locals(w=World, e=Event)
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


@cython.locals(w=World, e=Event)
def _receive(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, tally = e.attrs, [], w.tally
    for attr, read in _RESTATED.items():
        if attr in a:
            tally.judge(R.CONFIG_AS_RECORDED)
            if a[attr] != read(w, e.node):
                out.append(R.CONFIG_AS_RECORDED.violated((e,), f"{e.node} records in RECEIVE {attr}={a[attr]!r}, the "
                                  f"recorded configuration says {read(w, e.node)!r}", attribute=attr, observed=a[attr],
                                  expected=read(w, e.node), parameter=_PARAMETER[attr]))  # fmt: skip
    if "plan" in a and iv.plan is not None:
        tally.judge(R.CONFIG_AS_RECORDED)
        if tuple(a["plan"]) != iv.plan:
            out.append(R.CONFIG_AS_RECORDED.violated((e,), f"{e.node} records in RECEIVE the plan {a['plan']}, the "
                              f"recorded configuration and topology give {list(iv.plan)}", attribute="plan",
                              observed=a["plan"], expected=list(iv.plan)))  # fmt: skip
    out += _topology(w, e, e.node, a.get("boundary"), a.get("site"))
    why = w.db_consistent(e.node, a.get("db"))
    if why:
        out.append(R.DATABASE_ID_AS_RECORDED.violated((e,), why, server=e.node, observed=a.get("db")))
    if a.get("xshadow_advertised"):
        out.append(R.NO_XSHADOW_ADVERTISED.violated((e,), f"{e.node} (Exchange 2013) advertised XSHADOW to the sender",
                                                    observed=a.get("xshadow_advertised")))  # fmt: skip
    return out


@cython.locals(w=World, e=Event)
def _topology(w: World, e: Event, server: str, boundary: Any, site: Any) -> list[Violation]:
    """A record naming a server, its boundary or its site against the recorded topology (SR-006)."""
    if w.topo is None:
        w.tally.skip(R.TOPOLOGY_AS_RECORDED, "no recorded topology (SR_CONFIG topology)")
        return []
    w.tally.judge(R.TOPOLOGY_AS_RECORDED)
    if server not in w.topo:
        return [R.TOPOLOGY_AS_RECORDED.violated((e,), f"{server} is not a server of the recorded topology",
                                                server=server, expected=sorted(w.topo))]  # fmt: skip
    wrong, data = [], {}
    if boundary is not None and boundary != w.boundary(server):
        wrong.append(f"boundary {boundary!r}, not {w.boundary(server)!r}")
        data["boundary"] = {"observed": boundary, "expected": w.boundary(server)}
    if site is not None and site != w.site(server):
        wrong.append(f"site {site!r}, not {w.site(server)!r}")
        data["site"] = {"observed": site, "expected": w.site(server)}
    if not wrong:
        return []
    return [R.TOPOLOGY_AS_RECORDED.violated((e,), f"{e.kind} records for {server} " + "; ".join(wrong),
                                            server=server, **data)]  # fmt: skip


@cython.locals(w=World, e=Event)
def _haredirect(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, tally = e.attrs, [], w.tally
    n, shadow = a["try"], a["shadow"]
    if not iv.enabled:
        out.append(R.SHADOW_DISABLED.violated((e,), f"{e.node} made a shadow attempt although "
                                              "ShadowRedundancyEnabled is false",
                                              observed=iv.enabled, parameter="SR-P01"))  # fmt: skip
    if not iv.inbound_open or iv.outcome or iv.gave_up:
        out.append(R.SHADOW_WHILE_INBOUND_OPEN.violated((e,), f"{e.node} opened a shadow session to {shadow} after the "
                          "sender's session had ended or shadow creation was over", inbound_open=iv.inbound_open,
                          outcome=iv.outcome, creation_failed=iv.gave_up))  # fmt: skip
    if iv.plan is not None and w.knows(shadow):
        tally.judge(R.SHADOW_PLACEMENT)
        cls = "remote" if w.site(shadow) != w.site(iv.primary) else "local"
        if n != iv.tries + 1 or n > len(iv.plan) or iv.plan[n - 1] != cls:
            out.append(R.SHADOW_PLACEMENT.violated((e,), f"{e.node} made shadow attempt {n} on {shadow} ({cls} "
                              f"site), off the plan {list(iv.plan)} after {iv.tries} attempts", observed=[n, cls],
                              expected=list(iv.plan), attempts_before=iv.tries))  # fmt: skip
        if "site" in a:
            tally.judge(R.TOPOLOGY_AS_RECORDED)
            if a["site"] != cls:
                out.append(R.TOPOLOGY_AS_RECORDED.violated((e,), f"HAREDIRECT calls {shadow} {a['site']}, the "
                                  f"recorded topology puts it in a {cls} site", server=shadow,
                                  observed=a["site"], expected=cls))  # fmt: skip
        out += _topology(w, e, shadow, None, a.get("shadow_site"))
        out += _topology(w, e, iv.primary, None, a.get("site_of_primary"))
    else:
        tally.skip(R.SHADOW_PLACEMENT, _no_plan(w))
    iv.tries, iv.attempt_open, iv.attempt_ms, iv.attempt_id = n, shadow, e.ts_ms, e.event_id
    return out


@cython.locals(w=World)
def _no_plan(w: World) -> str:
    """Why an attempt cannot be judged against the plan (SR-044)."""
    if w.topo is None:
        return "no recorded topology (SR_CONFIG topology)"
    return "a server the recorded topology does not name"


@cython.locals(w=World, e=Event)
def _hareceive(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, s, tally = e.attrs, [], e.node, w.tally
    if iv.attempt_open != s:
        out.append(R.SHADOW_COPY_TRANSITION.violated((e,), f"{s} stored a shadow although no shadow session to it "
                          "was open", observed=s, expected=iv.attempt_open))  # fmt: skip
    if w.knows(s, iv.primary):
        tally.judge(R.SHADOW_IN_BOUNDARY)
        if w.boundary(s) != w.boundary(iv.primary) or s == iv.primary or w.topo[s][2] != "2013":  # type: ignore[index]
            out.append(R.SHADOW_IN_BOUNDARY.violated((e,), f"{iv.primary} put the shadow on {s} in {w.boundary(s)}, "
                              f"not on another server of its boundary {w.boundary(iv.primary)}",
                              observed=w.boundary(s), expected=w.boundary(iv.primary), server=s,
                              version=w.topo[s][2]))  # type: ignore[index]  # fmt: skip
    else:
        tally.skip(R.SHADOW_IN_BOUNDARY, _no_plan(w))
    out += _topology(w, e, s, a.get("boundary"), None)
    if a.get("primary", iv.primary) != iv.primary or ("forks" in a and tuple(a["forks"]) != iv.forks):
        out.append(R.SHADOW_RECORD_AS_DERIVED.violated((e,), f"{s} records primary {a.get('primary')} and "
                          f"forks {a.get('forks')}, the message came to {iv.primary} with {list(iv.forks)}",
                          observed={"primary": a.get("primary"), "forks": a.get("forks")},
                          expected={"primary": iv.primary, "forks": list(iv.forks)}))  # fmt: skip
    why = w.db_consistent(iv.primary, a.get("primary_db"))
    if why:
        out.append(R.DATABASE_ID_AS_RECORDED.violated((e,), why, server=iv.primary, observed=a.get("primary_db")))
    pair = (s, iv.primary)
    iv.shadow, iv.shadow_ms, iv.shadow_epoch = s, e.ts_ms, w.epoch.get(iv.primary, 0)
    w.contact[pair] = e.ts_ms  # the shadow session is a session between the two servers (SR-I05)
    w.hold(pair, (iv.msg, iv.inst), e.ts_ms)
    return out


@cython.locals(w=World, e=Event)
def _shadow_ack(w: World, iv: Inst, e: Event) -> list[Violation]:
    out = []
    if iv.shadow != e.attrs["shadow"] or iv.attempt_open != iv.shadow:
        out.append(R.SHADOW_ACK_AFTER_STORE.violated((e,), f"{e.node} took an acknowledgement from "
                          f"{e.attrs['shadow']} which never recorded storing the shadow",
                          observed=e.attrs["shadow"], stored_on=iv.shadow or None))  # fmt: skip
    iv.shadow_acked, iv.attempt_open = True, ""
    return out


@cython.locals(w=World, e=Event)
def _redirect_fail(w: World, iv: Inst, e: Event) -> list[Violation]:
    a, out, tally = e.attrs, [], w.tally
    n, reason = attempt_number(e), a.get("reason", "")
    if iv.attempt_open:  # the open attempt failed
        expected_n = iv.tries
        if reason == "unreachable":
            tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
            if w.reach(iv.primary, iv.attempt_open):
                out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} calls {iv.attempt_open} "
                                  "unreachable although the recorded faults leave both up and connected",
                                  observed=reason, expected="reachable"))  # fmt: skip
    elif iv.inbound_open and iv.plan and not iv.failed:  # an attempt without a session: nobody eligible
        expected_n = iv.tries + 1
        cls = iv.plan[min(expected_n, len(iv.plan)) - 1]
        tally.judge(R.SHADOW_PLACEMENT)
        if w.eligible(iv.primary, cls):
            out.append(R.SHADOW_PLACEMENT.violated((e,), f"{e.node} gave up attempt {expected_n} without a session "
                              f"although {w.eligible(iv.primary, cls)} may hold the shadow",
                              observed=[], expected=w.eligible(iv.primary, cls), site=cls))  # fmt: skip
    else:
        expected_n = iv.tries
    if n != expected_n:
        out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} records the failure as attempt {n}, the "
                          f"events seen make it attempt {expected_n}", attribute="try", observed=n,
                          expected=expected_n))  # fmt: skip
    iv.tries, iv.attempt_open = max(iv.tries, expected_n), ""
    ends = not iv.inbound_open or (reason == "timeout" and iv.timeout_ends == "creation")
    # without a recorded topology the plan is unknown (issue 30): the failure may be final (the primary may give
    # up: `failed`, so an acceptance without a shadow is allowed) or not (it may try again: no SR-028 for that)
    gave_up = ends or (iv.plan is not None and iv.tries >= len(iv.plan))
    final = gave_up or iv.plan is None
    if "final" in a and iv.plan is not None:
        tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
        if bool(a["final"]) != final:
            out.append(R.PRIMARY_RECORD_AS_DERIVED.violated((e,), f"{e.node} says the failure is final={a['final']}, "
                              "but after "
                              f"{iv.tries} of {len(iv.plan)} attempts it is {'' if final else 'not '}final",
                              attribute="final", observed=a["final"], expected=final))  # fmt: skip
    iv.failed, iv.gave_up = iv.failed or final, iv.gave_up or gave_up
    return out


@cython.locals(w=World, e=Event)
def _timeout(w: World, iv: Inst, e: Event) -> list[Violation]:
    """SR-039, SR-I22: a shadow session times out no earlier than the first inactivity time-out after it opened;
    the sender's session at any moment after its data arrived (ConnectionTimeout counts from the connection's
    opening, which may precede the data), but no later than ConnectionTimeout after RECEIVE."""
    out, cfg, tally = [], w.cfg, w.tally
    if e.attrs["session"] == "inbound":
        iv.inbound_open = False
        waited, most = e.ts_ms - iv.received_ms, cfg.inbound_max_ms()
        if waited > most:
            out.append(R.SESSION_TIMEOUT.violated((e,), f"{e.node} timed out the sender's session {waited} ms after "
                              "its "
                              f"data arrived: it opened no later than the data, so ConnectionTimeout ({most} ms) "
                              "had closed it before", observed_ms=waited, bound_ms=most, bound="most",
                              parameter="SR-P09"))  # fmt: skip
        return out
    waited, least = e.ts_ms - iv.attempt_ms, cfg.shadow_idle_ms()
    tally.judge(R.PRIMARY_RECORD_AS_DERIVED)
    if not iv.attempt_open:
        out.append(
            R.PRIMARY_RECORD_AS_DERIVED.violated(
                (e,),
                "a shadow session timed out but none was open",
                observed="shadow session timed out",
                expected="none open",
            )
        )
    if waited < least:
        out.append(R.SESSION_TIMEOUT.violated((e,), f"{e.node} timed out the shadow session after {waited} ms, "
                          "before the "
                          f"configured {least} ms", observed_ms=waited, bound_ms=least, bound="least",
                          parameter=["SR-P06", "SR-P12"]))  # fmt: skip
    return out


@cython.locals(w=World, e=Event)
def _open_too_long(w: World, iv: Inst, e: Event) -> list[Violation]:
    """An answer in the sender's session later than ConnectionTimeout after its data (SR-039, SR-I22)."""
    if not (e.attrs.get("acked") or e.kind == ev.REJECT) or not iv.inbound_open:
        return []
    w.tally.judge(R.SESSION_TIMEOUT)
    waited, most = e.ts_ms - iv.received_ms, w.cfg.inbound_max_ms()
    if waited <= most:
        return []
    return [R.SESSION_TIMEOUT.violated((e,), f"{e.node} answered the sender's session {waited} ms after its data "
                   "arrived, "
                   f"longer than ConnectionTimeout ({most} ms) lets a connection stay open", observed_ms=waited,
                   bound_ms=most, bound="most", parameter="SR-P09")]  # fmt: skip


@cython.locals(w=World, e=Event)
def _accept(w: World, iv: Inst, e: Event) -> list[Violation]:
    out = _open_too_long(w, iv, e)
    settled = iv.failed or not iv.inbound_open or not iv.enabled
    if (e.attrs.get("redundant") and not iv.shadow_acked) or (not iv.shadow_acked and not settled):
        v = R.SHADOW_BEFORE_ACK.violated((e,), f"{e.node} accepted the message before the shadow server "
                   "acknowledged the copy and before shadow creation had failed", shadow_acked=iv.shadow_acked,
                   creation_failed=iv.failed, redundant=e.attrs.get("redundant"))  # fmt: skip
        # the events compared: the ACCEPT judged, and the shadow attempt (HAREDIRECT) it should have waited on
        out.append(replace(v, event_ids=(*v.event_ids, iv.attempt_id)) if iv.attempt_id else v)
    else:
        w.tally.judge(R.REJECT_REQUIRED)
        if not iv.shadow_acked and iv.enabled and iv.reject:
            out.append(R.REJECT_REQUIRED.violated((e,), f"{e.node} accepted the message without a shadow although "
                              "RejectMessageOnShadowFailure is true", observed="accepted", expected="rejected",
                              parameter="SR-P02"))  # fmt: skip
    iv.outcome, iv.redundant = "accepted", iv.shadow_acked
    iv.copies[e.node].left = set(iv.forks)
    return out


@cython.locals(w=World, e=Event)
def _reject(w: World, iv: Inst, e: Event) -> list[Violation]:
    out, text = _open_too_long(w, iv, e), e.attrs["response"]
    variant = w.cfg.accept_variant and isinstance(text, str) and text.startswith(ev.REJECTION_VARIANT)
    if not (text == ev.REJECTION_TEXT or variant):
        out.append(
            R.REJECTION_TEXT.violated(
                (e,),
                f"the rejection reads {text!r}, not {ev.REJECTION_TEXT!r}",
                observed=text,
                expected=ev.REJECTION_TEXT,
                parameter="SR-P20",
            )
        )
    if not (iv.enabled and iv.reject) or iv.shadow_acked or not (iv.failed or not iv.inbound_open):
        out.append(R.FAILURE_OUTCOME.violated((e,), f"{e.node} rejected the message although the configuration and the "
                          "shadow outcome call for accepting it", observed="rejected", expected="accepted",
                          enabled=iv.enabled, reject_on_failure=iv.reject, shadow_acked=iv.shadow_acked,
                          parameter=["SR-P01", "SR-P02"]))  # fmt: skip
    iv.outcome = "rejected"
    return out


# the rules every event a guard judges is an instance of, whatever its attributes: counted once per event by
# `step._move` (`World.tally.moves`) rather than by a call in each guard (the hot path), added to the tally by
# `step.tally_of`. The rules a guard judges only under a condition are counted where it holds.
EVERY: dict[str, tuple[Rule, ...]] = {
    ev.RECEIVE: (R.NO_XSHADOW_ADVERTISED,),
    ev.HAREDIRECT: (R.SHADOW_DISABLED, R.SHADOW_WHILE_INBOUND_OPEN),
    ev.HARECEIVE: (R.SHADOW_COPY_TRANSITION, R.SHADOW_RECORD_AS_DERIVED),
    ev.SHADOW_ACK: (R.SHADOW_ACK_AFTER_STORE,),
    ev.HAREDIRECTFAIL: (R.PRIMARY_RECORD_AS_DERIVED,),  # the attempt number
    ev.SESSION_TIMEOUT: (R.SESSION_TIMEOUT,),
    ev.ACCEPT: (R.SHADOW_BEFORE_ACK,),
    ev.REJECT: (R.REJECTION_TEXT, R.FAILURE_OUTCOME),
}

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
