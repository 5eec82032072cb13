"""Shadow redundancy through the harness: the generator's inputs and faults on `ShadowRedundancySystem`.

Seed 000. The setup draws a topology layout, the organisation's settings (ShadowRedundancyEnabled,
RejectMessageOnShadowFailure, ShadowMessagePreference, ShadowHeartbeatFrequency, and the durations of
`DURATIONS`: the catalogue's or short ones that a run reaches) and whether an Exchange 2010 Hub exists;
the steps submit messages (also from a 2010 Hub), let time pass, crash, restart (same or new transport
database), isolate and heal servers, and ask Safety Net to resubmit. Issue 34: composite steps reach the
situations the rarer rules judge within the default budget: a resubmission of messages with a next hop outside and
a 2010 Hub fork, a message while the rest of its primary's boundary is cut off (stalled sessions, the sender's
time-out), a primary crashing right after a message (promotion by database ID or by ShadowResubmitTimeSpan), the
shadows cut off for ShadowMessageAutoDiscardInterval (discard expiry). The end of a run is
`finish()` (fairness: restart, heal, quiet tail, SNAPSHOTs) and the liveness rules are judged there.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.harness.core import Call, EndProblem, Op, Session, SystemFactory
from conformance.harness.systems import sr_topology
from model.kernel.sim import HOUR, MINUTE, SECOND
from model.registry import get
from model.sr.cluster import Timing
from model.sr.mutants import MUTANTS, PARAMETER_MUTANTS
from model.sr.protocol import ModelSystem
from model.sr.sim import LAYOUTS
from model.sr.state import SrConfig
from traces.schema import Event

FORKS = ["mbx", "ext:contoso.example", "dsn", "journal", "hub:HUB2010"]  # hub forks kept only if possible
STEPS_MS = [SECOND, 10 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 3 * HOUR + 10 * MINUTE]
# Layout weights (issue 18): a rule that judges where a shadow goes (shadow-in-boundary, shadow-placement) is
# exercised only in a run whose trace shows shadows in two boundaries, so that one can stand for a wrong choice of
# the other: single-site-dag and no-dag with four or more servers (multi-site-dag has one boundary; mixed has one
# DAG and a server alone in its site, which never takes a shadow). Those come first (Hypothesis' simplest draw)
# and twice; every layout and size is still drawn. Measured with scripts/coverage_per_rule.py (benchmarks/README).
LAYOUT_WEIGHTS = ("single-site-dag", "no-dag", *LAYOUTS)  # every layout, two of them twice
N_SERVERS_WEIGHTS = (4, 5, 6, 2, 3, 4, 5)
_forks = st.lists(st.sampled_from(FORKS), min_size=1, max_size=3, unique=True)
_i = st.integers(0, 7)


def _fixed_config() -> dict[str, Any]:
    """Settings every run uses at their catalogue default; sent in the setup so a system needs no catalogue."""

    cfg = SrConfig()
    keys = ("max_remote", "max_local", "retry_meaning", "recv_inactivity_ms", "send_inactivity_ms")
    keys += ("recv_timeout_ms", "shadow_timeout_ends")
    return {k: getattr(cfg, k) for k in keys}


# The durations of a run. At their catalogue defaults (days) no run of a few dozen steps reaches SafetyNetHoldTime,
# MessageExpirationTimeout or ShadowMessageAutoDiscardInterval, so the rules bounding them (SR-065..SR-067, and the
# parameter mutants of `model.sr.mutants`) would never judge anything; the short sets are the ones those rules and
# mutants are written against (the same values as `model.sr.mutants.PARAMETER_MUTANTS`).
DURATIONS: dict[str, dict[str, int]] = {
    "catalogue": {},
    "short-hold": {"safety_net_hold_ms": 40 * MINUTE, "expiration_ms": 20 * MINUTE},
    "short-discard": {"auto_discard_ms": 60 * MINUTE, "resubmit_ms": 30 * MINUTE},
    # discard events kept shorter than a shadow server's outage: the shadow is never acknowledged and must be
    # dropped at SafetyNetHoldTime + MessageExpirationTimeout (SR-064, SR-066)
    "short-all": {"safety_net_hold_ms": 40 * MINUTE, "expiration_ms": 20 * MINUTE, "auto_discard_ms": 30 * MINUTE},
}


def durations(name: str) -> dict[str, int]:
    """Every duration the setup sends: the named set over the catalogue defaults."""

    cfg = SrConfig()
    keys = ("resubmit_ms", "auto_discard_ms", "safety_net_hold_ms", "expiration_ms")
    return {**{k: getattr(cfg, k) for k in keys}, **DURATIONS[name]}


def _has_primary(s: Session) -> bool:
    return bool(s.state.get("last_primary"))


def _short_discard(s: Session) -> bool:
    """ShadowMessageAutoDiscardInterval short enough to wait out in one step (the short `DURATIONS`)."""
    return s.setup.get("auto_discard_ms", SrConfig().auto_discard_ms) <= 2 * HOUR


def _process(s: Session) -> bool:
    """Process faults only for systems behind the adapter, at most twice a run (each restart costs a start)."""
    return hasattr(s.system, "kill_and_restart") and s.state.get("restarts", 0) < 2


def _setup(draw: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """A run's settings, its durations drawn from the named sets of `DURATIONS` (one set: fixed, drawing nothing,
    so the search draws exactly as it did before durations varied)."""
    fixed = {k: st.just(v) for k, v in _fixed_config().items()}
    drawn = {
        "seed": st.integers(0, 2**16),
        "layout": st.sampled_from(LAYOUT_WEIGHTS),
        "reject_on_failure": st.booleans(),
        "preference": st.sampled_from(["PreferRemote", "RemoteOnly", "LocalOnly"]),
        "enabled": st.sampled_from([True, True, True, False]),
        "heartbeat_ms": st.sampled_from([2 * MINUTE, 30 * MINUTE, 30 * MINUTE]),  # fewer heartbeats: shorter traces
        "hub": st.sampled_from([True, True, False]),  # issue 34: the Hub's rules (SR-036..SR-038) in every search
        "n_servers": st.sampled_from(N_SERVERS_WEIGHTS),
        "stall_p": st.sampled_from([0.0, 0.05, 0.6]),  # the world's chance a shadow session stalls
    }
    if len(draw) == 1:
        return st.fixed_dictionaries({**fixed, **{k: st.just(v) for k, v in durations(draw[0]).items()}, **drawn})
    settings = st.fixed_dictionaries({**fixed, **drawn})
    return st.tuples(st.sampled_from(draw).map(durations), settings).map(lambda pair: {**pair[1], **pair[0]})


class SrDriver:
    name = "sr"
    setup = _setup(list(DURATIONS))
    ops: Mapping[str, Op] = {
        "submit": Op(st.fixed_dictionaries({"i": _i, "forks": _forks}), doc="a sender submits a message"),
        "submit_everywhere": Op(
            st.fixed_dictionaries({"forks": _forks}),
            doc="one message to every server at once: every boundary makes shadows, so a trace shows shadows of "
            "two boundaries and the placement rules (shadow-in-boundary, shadow-placement) have a wrong choice to "
            "judge (issue 18: coverage per rule within the default budget)",
        ),
        "exchange_2010_traffic": Op(
            st.fixed_dictionaries({"i": _i, "fork": st.sampled_from(FORKS[:4])}),
            doc="a message from the site's Exchange 2010 Hub that also goes back to it (SR-036, SR-037)",
        ),
        "resubmit_after_submit": Op(
            st.fixed_dictionaries({"i": _i}),
            doc="a message to mailboxes, a next hop outside and the site's 2010 Hub, then its primary's Safety Net is "
            "asked to resubmit: a trace where Safety Net holds forks it must not resubmit (issue 34: "
            "no-safetynet-resubmit-across-boundary and -to-2010 in every search)",
        ),
        "submit_with_boundary_down": Op(
            st.fixed_dictionaries({"i": _i, "forks": _forks}),
            doc="every other server of the primary's boundary cut off while a message arrives: each shadow session "
            "stalls and times out until the sender's session does, then the network heals: shadow creation fails, "
            "the message is rejected or accepted without a shadow as configured (issue 34: session-timeout, "
            "rejection-text, failure-outcome)",
        ),
        "primary_fails_after_submit": Op(
            st.fixed_dictionaries({"i": _i, "forks": _forks, "new": st.booleans()}),
            doc="a message, then its primary crashes before the shadow's next heartbeat: with a new transport "
            "database it restarts at once (the next heartbeat sees the new database ID: promotion by database ID), "
            "else it stays down ShadowResubmitTimeSpan and a heartbeat more (promotion by the resubmit span) "
            "(issue 34: promotion-timing, promotion-db-change, promotion-overdue in every search)",
        ),
        "shadows_cut_off_after_submit": Op(
            st.fixed_dictionaries({"i": _i, "forks": _forks}),
            _short_discard,
            doc="a message, then every other server of its primary's boundary cut off for "
            "ShadowMessageAutoDiscardInterval and a heartbeat more: the primary deletes the discard events its "
            "shadow never asked for (issue 34: auto-discard-interval; only with a short interval)",
        ),
        "advance": Op(st.fixed_dictionaries({"ms": st.sampled_from(STEPS_MS)}), doc="virtual time passes"),
        "crash": Op(st.fixed_dictionaries({"i": _i})),
        "crash_last_primary": Op(st.just({}), _has_primary),
        "bounce_last_primary": Op(st.fixed_dictionaries({"new": st.booleans()}), _has_primary),
        "outage_of_last_primary": Op(st.fixed_dictionaries({"ms": st.sampled_from(STEPS_MS)}), _has_primary),
        "isolate_last_primary": Op(st.just({}), _has_primary),
        "restart": Op(st.fixed_dictionaries({"i": _i, "new": st.booleans()})),
        "restart_all": Op(st.fixed_dictionaries({"new": st.booleans()})),
        "isolate": Op(st.fixed_dictionaries({"i": _i})),
        "heal": Op(st.just({})),
        "resubmit_everywhere": Op(st.just({}), doc="a mailbox database failover asks every Safety Net"),
        "resubmit_last_primary": Op(st.just({}), _has_primary),
        "process_restart": Op(
            st.fixed_dictionaries({"new_state": st.booleans()}),
            _process,
            doc="kill -9 the system's process and restart it with the same or a new state directory",
        ),
    }

    # --- systems ------------------------------------------------------------------------------------
    def model_factory(self, mutant: str | None = None) -> SystemFactory:

        policy = None
        if mutant is not None:
            policy = {**MUTANTS, **PARAMETER_MUTANTS}[mutant].policy

        def build(setup: dict[str, Any]) -> Any:
            opts = dict(setup)
            seed = opts.pop("seed")
            timing = Timing(hop_slow_p=0.3, stall_p=opts.pop("stall_p", 0.05))
            branching = opts.pop("branching", None)  # the choice points exploration branches on (issue 33)
            system = ModelSystem(seed, policy=policy() if policy else None, timing=timing, **opts)
            if branching is not None:
                system.sim.branching = frozenset(branching)
            return system

        return build

    def for_mutant(self, name: str) -> SrDriver:
        """This driver with the durations a mutant is searched under: a parameter mutant only in runs with the
        short durations its rule judges; a planted bug at the catalogue's, since a short SafetyNetHoldTime
        or expiry also ends, by design, the situations some of them need (an unreleased shadow expires)."""

        tailored = copy.copy(self)
        short = [n for n in DURATIONS if n != "catalogue"]
        tailored.setup = _setup(short if name in PARAMETER_MUTANTS else ["catalogue"])
        return tailored

    def mutants(self) -> dict[str, tuple[str, ...]]:
        """The planted bugs and the parameter mutants (the model behaving with one duration while the recorded
        configuration says another: killed in runs with the short `DURATIONS`)."""

        return {name: tuple(m.rules) for name, m in {**MUTANTS, **PARAMETER_MUTANTS}.items()}

    def monitor(self) -> Any:

        return get("sr").monitor()

    # --- steps --------------------------------------------------------------------------------------
    def _server(self, s: Session, i: int) -> str:
        names = s.state["servers"]
        return names[i % len(names)]

    def _peers(self, s: Session, primary: str) -> list[str]:
        """The other Exchange 2013 servers of the primary's boundary (its DAG, or its site), from the setup."""
        where = {name: srv["dag"] or srv["site"] for name, srv in sr_topology(s.setup).items()}
        return [x for x in s.state["servers"] if x != primary and where[x] == where[primary]]

    def simpler(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        """Simpler versions of a recorded step the generator could also have drawn (for `minimise`): a shorter
        `advance` or outage, from the generator's durations."""
        calls = step["calls"]
        if step["op"] not in ("advance", "outage_of_last_primary"):
            return []
        at = [i for i, c in enumerate(calls) if c["call"] == "advance"]
        if len(at) != 1:
            return []
        i = at[0]
        return [
            {"op": step["op"], "calls": [*calls[:i], _c("advance", ms=ms), *calls[i + 1 :]]}
            for ms in STEPS_MS
            if ms < calls[i]["args"]["ms"]
        ]

    def expand(self, s: Session, op: str, raw: dict[str, Any]) -> list[Call]:
        last = s.state.get("last_primary", "")
        if op in ("submit", "exchange_2010_traffic"):
            s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
            primary = s.state["last_primary"] = self._server(s, raw["i"])
            if op == "submit":
                return [_c("submit", msg=f"m{n}", primary=primary, forks=raw["forks"], origin="outside")]
            return [_c("submit", msg=f"m{n}", primary=primary, forks=[raw["fork"], "hub:HUB2010"], origin="hub2010")]
        if op == "submit_everywhere":
            calls = []
            for server in s.state["servers"]:
                s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
                calls.append(_c("submit", msg=f"m{n}", primary=server, forks=raw["forks"], origin="outside"))
            return calls
        if op == "resubmit_after_submit":
            s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
            topo = sr_topology(s.setup)
            hub_site = [x for x in s.state["servers"] if topo[x]["site"] == topo.get("HUB2010", {}).get("site")]
            names = hub_site or s.state["servers"]
            primary = s.state["last_primary"] = names[raw["i"] % len(names)]
            s.state["n_msgs"] = n + 1  # one message beside a next hop outside, one beside the site's Hub (a primary
            # in the Hub's site keeps it): a changed fork of either resubmission names the fork it must not be
            return [_c("submit", msg=f"m{n}", primary=primary, forks=["mbx", "ext:contoso.example"], origin="outside"),
                    _c("submit", msg=f"m{n + 1}", primary=primary, forks=["mbx", "hub:HUB2010"], origin="outside"),
                    _c("safetynet_resubmit", server=primary)]  # fmt: skip
        if op == "submit_with_boundary_down":
            s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
            primary = s.state["last_primary"] = self._server(s, raw["i"])
            peers = self._peers(s, primary)
            calls = [_c("isolate", server=x) for x in peers]
            calls.append(_c("submit", msg=f"m{n}", primary=primary, forks=raw["forks"], origin="outside"))
            return [*calls, _c("advance", ms=10 * MINUTE), _c("heal")]
        if op == "primary_fails_after_submit":
            s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
            primary = s.state["last_primary"] = self._server(s, raw["i"])
            hb = s.setup["heartbeat_ms"]
            calls = [_c("submit", msg=f"m{n}", primary=primary, forks=raw["forks"], origin="outside"),
                     _c("crash", server=primary)]  # fmt: skip
            if raw["new"]:
                return [*calls, _c("restart", server=primary, new_database=True), _c("advance", ms=hb)]
            span = s.setup.get("resubmit_ms", SrConfig().resubmit_ms)
            return [*calls, _c("advance", ms=span + hb), _c("restart", server=primary, new_database=False)]
        if op == "shadows_cut_off_after_submit":
            s.state["n_msgs"] = n = s.state.get("n_msgs", 0) + 1
            primary = s.state["last_primary"] = self._server(s, raw["i"])
            peers = self._peers(s, primary)
            wait = s.setup["auto_discard_ms"] + s.setup["heartbeat_ms"]
            return [_c("submit", msg=f"m{n}", primary=primary, forks=raw["forks"], origin="outside"),
                    *(_c("isolate", server=x) for x in peers), _c("advance", ms=wait), _c("heal")]  # fmt: skip
        if op == "advance":
            return [_c("advance", ms=raw["ms"])]
        if op == "crash":
            return [_c("crash", server=self._server(s, raw["i"]))]
        if op == "crash_last_primary":
            return [_c("crash", server=last)]
        if op == "bounce_last_primary":
            return [_c("crash", server=last), _c("restart", server=last, new_database=raw["new"])]
        if op == "outage_of_last_primary":
            return [_c("isolate", server=last), _c("advance", ms=raw["ms"]), _c("heal")]
        if op == "isolate_last_primary":
            return [_c("isolate", server=last)]
        if op == "restart":
            return [_c("restart", server=self._server(s, raw["i"]), new_database=raw["new"])]
        if op == "restart_all":
            return [_c("restart", server=n, new_database=raw["new"]) for n in s.state["servers"]]
        if op == "isolate":
            return [_c("isolate", server=self._server(s, raw["i"]))]
        if op == "heal":
            return [_c("heal")]
        if op == "resubmit_everywhere":
            return [_c("safetynet_resubmit", server=n) for n in s.state["servers"]]
        if op == "resubmit_last_primary":
            return [_c("safetynet_resubmit", server=last)]
        if op == "process_restart":
            s.state["restarts"] = s.state.get("restarts", 0) + 1
            return [_c("kill_and_restart", new_state=raw["new_state"])]
        raise KeyError(op)

    def resolve(self, s: Session, args: dict[str, Any]) -> dict[str, Any]:
        return args

    def absorb(self, s: Session, call: str, result: Any) -> None:
        if call in ("__init__", "kill_and_restart"):
            s.state["servers"] = list(s.system.servers())

    def events(self, s: Session) -> list[Event]:
        return list(s.system.events())

    def finish(self, s: Session) -> list[Call]:
        return [_c("finish")]

    def end_checks(self, s: Session) -> list[EndProblem]:
        return []


def _c(call: str, **args: Any) -> Call:
    return {"call": call, "args": args}


DRIVER = SrDriver()
