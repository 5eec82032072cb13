"""Active Manager through the harness: the generator's inputs and faults on `ActiveManagerSystem`.

Seed 002. The setup draws the DAG (five members, one standalone server, three DAG databases with two to
five copies each and one standalone database) and the BCSS reading (the interpretations' alternatives,
AM-I01, AM-I05, AM-I07, AM-I04); the steps crash, restart, partition and heal servers, fail databases,
stores and monitoring responders, change health, dials and copy states, generate logs, switch over, move
the PAM, take servers into maintenance and ask SAMs where databases are active. Every call returns the
events it caused; the harness records them (with a TRACE_START carrying the BCSS reading, which the
monitor reads back) and judges them with the Active Manager monitor after every step.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.harness.am_setup import (
    _default_dial,
    _options,
    bcss_in_force,
    check_call,
    check_setup,
    full_setup,
)
from conformance.harness.core import Call, EndProblem, Op, Session, SystemFactory
from model.am.bcss import Options
from model.am.mutants import ALSO, MUTANTS
from model.am.protocol import Layout, ModelSystem, RngEnv
from model.am.rules import RULES
from model.am.state import COMPONENTS
from model.kernel.sim import KernelRandom
from model.registry import get
from traces.schema import SCHEMA_VERSION, Event

MEMBERS = ("MBX1", "MBX2", "MBX3", "MBX4", "MBX5")
SERVERS = (*MEMBERS, "MBXS1")
DBS = ("DB1", "DB2", "DB3", "SDB1")
HEALTH_STATES = ("Healthy", "Degraded", "Unhealthy")
COPY_STATUSES = ("Healthy", "Failed", "Suspended", "SeedingSource", "DisconnectedAndHealthy", "Resynchronizing")


def _components() -> list[list[str]]:

    return [[c, p] for c, p in COMPONENTS]


def _layout(seed: int) -> dict[str, list[str]]:
    rng = random.Random(seed)
    copies = {db: list(rng.sample(MEMBERS, rng.randint(2, 5))) for db in DBS[:3]}
    return {**copies, "SDB1": ["MBXS1"]}


_bcss = st.one_of(
    st.just({}),
    st.fixed_dictionaries(
        {
            "order": st.sampled_from(["TierMajor", "CriteriaMajor"]),
            "up_to_normal": st.sampled_from(["NormalAndAbove", "NormalOnly"]),
            "require_status": st.booleans(),
            "below_source": st.booleans(),
        }
    ),
)


def _setup(seed: int, bcss: dict[str, Any], dial: str | None = None) -> dict[str, Any]:
    """`dial`: every server's AutoDatabaseMountDial at start (None: the catalogue's default). A third of the
    runs start Lossless or BestAvailability, so that the sort by activation preference (AM-036) and the
    other thresholds reach BCSS runs without waiting for a `dial` step."""
    return {
        "seed": seed,
        "dag": "DAG1",
        "members": list(MEMBERS),
        "standalone": ["MBXS1"],
        "copies": _layout(seed),
        "bcss": bcss,
        "components": _components(),
        "default_dial": dial or _default_dial(),
        "mount_fail": 0.2,
    }


_servers = st.sampled_from(SERVERS)
_dbs = st.sampled_from(DBS)
_comp = st.sampled_from(["OutlookWeb", "ActiveSync", "Transport", "Search"])
_copy_change = st.one_of(
    st.fixed_dictionaries({"status": st.sampled_from(COPY_STATUSES)}),
    st.fixed_dictionaries({"content_index": st.sampled_from(["Healthy", "Crawling", "Failed"])}),
    st.fixed_dictionaries({"replay_queue": st.sampled_from([0, 49, 50, 200])}),
    st.fixed_dictionaries({"blocked": st.booleans()}),
    st.fixed_dictionaries({"suspended": st.booleans()}),
)


def _process(s: Session) -> bool:
    """Process faults only for systems behind the adapter, at most twice a run (each restart costs a start)."""
    return hasattr(s.system, "kill_and_restart") and s.state.get("restarts", 0) < 2


def _d(**kw: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(kw)


class AmDriver:
    name = "am"
    setup = st.builds(
        _setup,
        st.integers(0, 2**16),
        _bcss,
        st.sampled_from([None, None, None, None, "Lossless", "BestAvailability"]),
    )
    ops: Mapping[str, Op] = {
        "crash": Op(_d(server=_servers)),
        "restart": Op(_d(server=_servers)),
        "partition": Op(_d(group=st.lists(_servers, min_size=1, max_size=3, unique=True))),
        "heal": Op(st.just({})),
        "fail_database": Op(_d(db=_dbs)),
        "fail_store": Op(_d(server=_servers)),
        "responder": Op(
            _d(server=_servers, component=_comp, also=_servers),
            doc="a component goes Unhealthy somewhere, then a responder fails over",
        ),
        "health": Op(_d(server=_servers, component=_comp, state=st.sampled_from(HEALTH_STATES))),
        "dial": Op(_d(server=_servers, dial=st.sampled_from(["Lossless", "GoodAvailability", "BestAvailability"]))),
        "set_copy": Op(_d(db=_dbs, i=st.integers(0, 4), change=_copy_change)),
        "block": Op(_d(db=_dbs, i=st.integers(0, 4), which=st.sampled_from(["blocked", "suspended"]))),
        "logs": Op(
            _d(
                db=_dbs,
                n=st.integers(1, 30),
                lags=st.lists(st.sampled_from([0, 3, 7, 13, 40]), min_size=len(SERVERS), max_size=len(SERVERS)),
            )
        ),
        "switchover": Op(_d(db=_dbs, lossless=st.booleans())),
        "blocked_failover": Op(
            _d(
                db=st.sampled_from(DBS[:3]),
                i=st.integers(0, 4),
                which=st.sampled_from(["blocked", "suspended"]),
                how=st.sampled_from(["fail_database", "switchover"]),
            ),
            doc="a copy is blocked from activation, then its database fails over: a selection with a blocked "
            "candidate (AM-034)",
        ),
        "responder_on_active": Op(
            _d(db=st.sampled_from(DBS[:3]), component=_comp, also=_servers),
            doc="a component goes Unhealthy somewhere, then the responder on the server holding the database's "
            "mounted copy fails over (AM-032: the target must be better in that component)",
        ),
        "maintenance_of_active": Op(
            _d(db=st.sampled_from(DBS[:3])),
            doc="the server holding the database's mounted copy goes into maintenance (AM-007, then BCSS)",
        ),
        "move_pam": Op(_d(to=st.sampled_from(MEMBERS))),
        "maintenance": Op(_d(server=st.sampled_from(MEMBERS))),
        "query": Op(_d(db=_dbs, server=_servers)),
        "process_restart": Op(
            _d(new_state=st.booleans()),
            _process,
            doc="kill -9 the system's process and restart it with the same or a new state directory",
        ),
    }

    def opening(self, s: Session) -> list[tuple[str, dict[str, Any]]]:
        """A third of the runs start with one server of the largest database Lossless (the others keep the
        setup's dial): mixed dials, so that the Lossless sort (AM-036) and the most restrictive dial scope
        meet a selection early (decided by the setup's seed: the same setup, the same opening)."""
        seed = s.setup["seed"]
        if seed % 3 or s.setup.get("default_dial") == "Lossless":
            return []
        db = max(sorted(DBS[:3]), key=lambda d: len(s.setup["copies"][d]))
        servers = s.setup["copies"][db]
        return [("dial", {"server": servers[seed % len(servers)], "dial": "Lossless"})]

    # --- systems ------------------------------------------------------------------------------------
    def model_factory(self, mutant: str | None = None) -> SystemFactory:
        flaws: frozenset[str] = frozenset()
        if mutant is not None:
            flaws = frozenset({MUTANTS[mutant][0]})

        def build(setup: dict[str, Any]) -> Any:

            layout = Layout(
                setup["dag"],
                tuple(setup["members"]),
                tuple(setup["standalone"]),
                {db: tuple(s) for db, s in setup["copies"].items()},
            )
            opts = Options().with_(**_options(setup["bcss"]))
            # issue 33 (session 16): the kernel's generator, the same draws as `random.Random` for a seed, which the
            # explorer's copies thaw, copy and fingerprint from its kept words while nothing draws (choices scripted)
            env = RngEnv(KernelRandom(setup["seed"]), mount_fail=setup.get("mount_fail", 0.2))
            dials = dict.fromkeys((*layout.members, *layout.standalone), setup.get("default_dial", _default_dial()))
            return ModelSystem(layout, env, flaws, dials=dials, opts=opts)

        return build

    def mutants(self) -> dict[str, tuple[str, ...]]:

        return {name: (entry[1], *ALSO.get(name, ())) for name, entry in MUTANTS.items()}

    def monitor(self) -> Any:

        return get("am").monitor()

    # --- steps --------------------------------------------------------------------------------------
    def expand(self, s: Session, op: str, raw: dict[str, Any]) -> list[Call]:
        copies = s.setup["copies"]
        if op == "partition":
            return [_c("partition", groups=[raw["group"]])]
        if op == "responder":
            return [
                _c("set_health", server=raw["also"], component=raw["component"], state="Unhealthy"),
                _c("responder_failover", server=raw["server"], component=raw["component"]),
            ]
        if op == "health":
            return [_c("set_health", **raw)]
        if op == "dial":
            return [_c("set_dial", **raw)]
        if op in ("set_copy", "block"):
            names = copies[raw["db"]]
            server = names[raw["i"] % len(names)]
            change = raw["change"] if op == "set_copy" else {raw["which"]: True}
            return [_c("set_copy", db=raw["db"], server=server, changes=change)]
        if op == "blocked_failover":
            names = copies[raw["db"]]
            server = names[raw["i"] % len(names)]
            then = (
                _c("fail_database", db=raw["db"])
                if raw["how"] == "fail_database"
                else _c("switchover", db=raw["db"], lossless=False)
            )
            ask = _c("query", db=raw["db"], server=names[(raw["i"] + 1) % len(names)])  # where is it now? (AM-019)
            return [_c("set_copy", db=raw["db"], server=server, changes={raw["which"]: True}), then, ask]
        if op in ("maintenance_of_active", "responder_on_active"):
            on = sorted(s.system.mounted(raw["db"]))
            server = on[0] if on else copies[raw["db"]][0]
            ask = _c("query", db=raw["db"], server=copies[raw["db"]][-1])  # a SAM asked afterwards (AM-019)
            if op == "maintenance_of_active":
                return [_c("maintenance", server=server), ask]
            return [
                _c("set_health", server=raw["also"], component=raw["component"], state="Unhealthy"),
                _c("responder_failover", server=server, component=raw["component"]),
                ask,
            ]
        if op == "logs":
            return [_c("generate_logs", db=raw["db"], n=raw["n"], lags=dict(zip(SERVERS, raw["lags"], strict=True)))]
        if op == "process_restart":
            s.state["restarts"] = s.state.get("restarts", 0) + 1
            return [_c("kill_and_restart", new_state=raw["new_state"])]
        return [_c(op, **raw)]

    def simpler(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        """Simpler versions of a recorded step that the generator could also have drawn, simplest first (for
        `minimise`): fewer logs, smaller lags (all at 0, then one server's at a time), a smaller partition."""
        op, calls = step["op"], step["calls"]
        out: list[dict[str, Any]] = []
        if op == "logs" and len(calls) == 1:
            args = calls[0]["args"]
            out += [{"op": op, "calls": [_c("generate_logs", **{**args, "n": n})]} for n in (1, 2) if n < args["n"]]
            lags = args["lags"]
            if any(lags.values()):
                out.append({"op": op, "calls": [_c("generate_logs", **{**args, "lags": dict.fromkeys(lags, 0)})]})
                out += [
                    {"op": op, "calls": [_c("generate_logs", **{**args, "lags": {**lags, server: 0}})]}
                    for server, lag in sorted(lags.items())
                    if lag
                ]
        if op == "partition" and len(calls) == 1 and len(calls[0]["args"]["groups"][0]) > 1:
            group = calls[0]["args"]["groups"][0]
            out += [{"op": op, "calls": [_c("partition", groups=[[x for x in group if x != y]])]} for y in group]
        return out

    def resolve(self, s: Session, args: dict[str, Any]) -> dict[str, Any]:
        """`set_copy`'s `changes` (the protocol's shape) become keyword arguments of the Python protocol."""
        changes = args.get("changes")
        if isinstance(changes, dict):
            return {**{k: v for k, v in args.items() if k != "changes"}, **changes}
        return args

    # --- replay files (`replayfile.py`; the checks are `am_setup.py`) -------------------------------
    def full_setup(self, setup: dict[str, Any]) -> dict[str, Any]:
        return full_setup(setup)

    def check_setup(self, setup: dict[str, Any]) -> list[str]:
        return check_setup(setup)

    def check_call(self, setup: dict[str, Any], call: str, args: dict[str, Any]) -> str:
        return check_call(setup, call, args)

    def absorb(self, s: Session, call: str, result: Any) -> None:
        if call == "__init__":
            s.state["trace"] = 0
            self._start_trace(s, getattr(s.system, "initial", []) or [])
        elif call == "kill_and_restart":
            if result:  # a new state directory: the old deployment is gone, a new trace starts
                self._start_trace(s, getattr(s.system, "initial", []) or [])
        elif isinstance(result, list):
            self._record(s, result)

    def _start_trace(self, s: Session, outs: list[Any]) -> None:
        s.state["trace"] = n = s.state.get("trace", 0) + 1
        s.state["trace_id"] = f"am-conform-s{s.setup['seed']}-{n}"
        s.state["seq"] = 0
        cfg = json.dumps(
            {"bcss": bcss_in_force(s.setup), "layout": s.setup["copies"]}, sort_keys=True, separators=(",", ":")
        )
        self._emit(
            s,
            "sim",
            "core",
            s.state["trace_id"],
            "TRACE_START",
            {"seed": s.setup["seed"], "model": "am", "config": cfg},
        )
        self._record(s, outs)

    def _emit(self, s: Session, node: str, mech: str, entity: str, kind: str, attrs: dict[str, Any]) -> None:
        seq = s.state["seq"]
        s.state["seq"] = seq + 1
        s.outs.append(
            Event(
                schema_version=SCHEMA_VERSION,
                trace_id=s.state["trace_id"],
                seq=seq,
                event_id=f"{s.state['trace_id']}-{seq}",
                ts_ms=seq,
                node=node,
                mechanism=mech,
                entity=entity,
                kind=kind,
                attrs=attrs,
            )
        )

    def _record(self, s: Session, outs: list[Any]) -> None:
        for entity, kind, attrs in outs:
            self._emit(s, "am", "am", entity, kind, dict(attrs))

    def events(self, s: Session) -> list[Event]:
        return s.outs

    def finish(self, s: Session) -> list[Call]:
        return []

    def end_checks(self, s: Session) -> list[EndProblem]:
        """What the system exposes must agree with the invariants too (AM-005, AM-009)."""
        problems = []
        pams = sorted(s.system.pams())
        if len(pams) > 1:
            problems.append(EndProblem(SINGLE_PAM, f"the system reports PAMs {pams}"))
        for db in s.setup.get("copies", DBS):  # the setup's databases (an explored setup has fewer)
            mounted = sorted(s.system.mounted(db))
            if len(mounted) > 1:
                problems.append(EndProblem(ONE_ACTIVE_COPY, f"the system reports {db} mounted on {mounted}"))
        return problems


SINGLE_PAM, ONE_ACTIVE_COPY = RULES["single-pam"], RULES["one-active-copy"]  # the end-of-run checks' rules


def _c(call: str, **args: Any) -> Call:
    return {"call": call, "args": args}


DRIVER = AmDriver()
