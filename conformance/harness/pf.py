"""Public folders through the harness: the generator's inputs and faults on `PublicFolderSystem`.

Seeds 001, 003. Three stores A, B (routing group rg0) and C (rg1). The steps create folders (replicating, and
local ones that never replicate, PF-004), delete folders (several in one instant: one hierarchy broadcast packs
them, PF-011), post, modify folders, add, remove and move replicas (several at once: BF-I14), send clients,
crash, restart, back up and restore stores, and lose mail (faults only when the setup's `faults` is true). The
setup draws the deleted-folder limit (`DELETED_FOLDER_LIMITS`: the seed's 500, 2 and 1), recorded in PF_CONFIG.
At the end the harness stops all faults (the fairness assumption of PF-035), lets the convergence bound pass,
records the END snapshot where the monitor's `convergence` rule judges every folder (issue 36), and checks
through the protocol that every folder's active replicas hold one CNSet. Folders are referred to in recorded
steps as `{"$folder": k}`, the k-th folder the run created, so a replay works on a system that numbers FIDs its
own way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from hypothesis import strategies as st

from conformance.harness import pf_scenarios as PS
from conformance.harness.core import (
    NOT_RECORDED,
    Call,
    Divergence,
    EndProblem,
    Op,
    Session,
    SystemFactory,
    machine_for,
)
from model.kernel.sim import HOUR, MINUTE
from model.pf import mutants as M
from model.pf.mutants import ALSO, EXPECTED
from model.pf.properties import convergence_bound_ms
from model.pf.rules import RULES
from model.pf.sim import build_fixed
from model.pf.state import Params, default_params
from model.registry import get
from spec.catalogue import require
from traces.schema import Event

require("PF-035", "BF-024", "BF-033", "PF-004", "PF-011", "PF-025")

STORES = ["A", "B", "C"]
SERVERS = PS.LAYOUTS["cost-vs-version"]  # the first layout: what a replay file without a layout ran on
LINKS = [("rg0", "rg1", 7)]
LATENCY_MAX_MS = 2 * MINUTE
ADVANCE_MINUTES = [1, 4, 10, 30, 90, 6 * 60, 36 * 60]
POST_SIZES = [1, 16, 400]
DELETED_FOLDER_LIMITS = [500, 2, 1]  # ReplicationDeletedFolderCountLimit (PF-011): the seed's default first
_store = st.sampled_from(STORES)
_folder = st.integers(0, 15)


def _faults(s: Session) -> bool:
    return bool(s.setup.get("faults"))


def _process(s: Session) -> bool:
    """Process faults only for systems behind the adapter, at most twice a run (each restart costs a start)."""
    return hasattr(s.system, "kill_and_restart") and s.state.get("restarts", 0) < 2


def _d(**kw: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(kw)


def convergence_wait_ms() -> int:
    return convergence_bound_ms(Params(), LATENCY_MAX_MS) + HOUR


def layout_of(seed: int) -> str:
    """The layout of a run (`pf_scenarios.LAYOUTS`), turning with its seed: no draw of its own, so the searches of
    the tests that restrict the steps draw what they drew before issue 34 (seed 0: the first layout)."""
    return sorted(PS.LAYOUTS)[seed % len(PS.LAYOUTS)]


def params_of(setup: Mapping[str, Any]) -> Any:
    """The model's `Params` for a setup: the catalogue's, with the setup's deleted-folder limit (PF-011) when it
    names one (a replay file written before the setup drew it keeps the seed's 500)."""
    from dataclasses import replace

    limit = setup.get("deleted_folder_limit")
    return default_params() if limit is None else replace(default_params(), deleted_folder_limit=int(limit))


class PfDriver:
    name = "pf"
    setup = st.builds(
        lambda seed, faults, limit: {
            "seed": seed,
            "faults": faults,
            "layout": layout_of(seed),
            "stores": [list(s) for s in PS.LAYOUTS[layout_of(seed)]],
            "links": [list(link) for link in LINKS],
            "latency_max_ms": LATENCY_MAX_MS,
            "deleted_folder_limit": limit,
        },
        st.integers(0, 2**20),
        st.booleans(),
        st.sampled_from(DELETED_FOLDER_LIMITS),
    )
    ops: Mapping[str, Op] = {
        "create_folder": Op(_d(via=_store)),
        "create_local_folder": Op(
            _d(via=_store),
            doc="a Restrictions or Views folder (seed 001, PF-004): a local folder that never replicates",
        ),
        "delete_folders": Op(
            _d(via=_store, folders=st.lists(_folder, min_size=1, max_size=3, unique=True)),
            doc="folders deleted on one store in one instant (PF-025): one hierarchy broadcast packs the deletes",
        ),
        "post": Op(_d(folder=_folder, store=_store, n=st.integers(1, 4), size=st.sampled_from(POST_SIZES))),
        "modify_folder": Op(_d(folder=_folder, via=_store)),
        "add_replica": Op(_d(folder=_folder, server=_store, via=_store)),
        "scratch_folders": Op(
            _d(via=_store, n=st.integers(2, 3)),
            doc="as the model's workload does (`model.pf.sim.scratch`): n scratch folders created on a store, and "
            "at the next such step all of them deleted together on that store (PF-011's deleted-folder limit)",
        ),
        "remove_replica": Op(
            _d(folder=_folder, server=_store, via=_store),
            doc="a client of `via`, a replica removed there, at once a client of its store (BF-028, BF-035)",
        ),
        "remove_two_at_once": Op(
            _d(folder=_folder, server=_store),
            doc="a canned scenario (BF-I14, `model.pf.sim.remove_two_at_once` on an existing folder): a replica "
            "added on `server`, 20 minutes, three posts on a store holding the folder, 20 minutes, then both replicas "
            "removed in one instant, each on its own store before the other hears of it; an hour later a replica on "
            "the third store, which the two hand their content to (else they ask for status for ever: BF-I11)",
        ),
        "remove_replicas_at_once": Op(
            _d(folder=_folder),
            doc="every active replica of a folder removed in one instant, each on its own store before the others "
            "hear of it (BF-I14)",
        ),
        "move_replica": Op(
            _d(folder=_folder, src=_store, dst=_store, via=_store),
            doc='moving a replica (seed 001, "Deleting a Replica"): add the new, remove the old, a client of the old',
        ),
        "client": Op(_d(store=_store, folder=_folder)),
        "crash": Op(_d(store=_store), _faults),
        "restart": Op(_d(store=_store), _faults),
        "backup": Op(_d(store=_store), _faults),
        "restore": Op(_d(store=_store), _faults),
        "set_loss": Op(_d(loss=st.sampled_from([0.0, 0.2, 1.0])), _faults),
        "post_while_mail_is_lost": Op(
            _d(folder=_folder, store=_store),
            _faults,
            doc="a post whose replication mail is lost: only backfill can repair it",
        ),
        "backfill_twice": Op(
            _d(folder=_folder, store=_store, other=_store),
            _faults,
            doc="a replica added on `other`, then twice a lost post on `store`, each followed by 36 hours: the other "
            "replica backfills twice, so its backfill check's schedule is judged (BF-036)",
        ),
        **{
            name: Op(_d(folder=_folder, store=_store), _faults if faulty else None, doc=doc)
            for name, (faulty, doc) in PS.SCENARIO_DOCS.items()
        },
        "advance": Op(_d(minutes=st.sampled_from(ADVANCE_MINUTES))),
        "process_restart": Op(
            _d(new_state=st.booleans()),
            _process,
            doc="kill -9 the system's process and restart it with the same or a new state directory",
        ),
    }

    # --- systems ------------------------------------------------------------------------------------
    def model_factory(self, mutant: str | None = None) -> SystemFactory:
        kw: dict[str, Any] = {}
        if mutant is not None:
            if mutant in M.RULE_MUTANTS:
                kw["rules"] = M.RULE_MUTANTS[mutant]
            else:
                kw["store_class"] = M.STORE_MUTANTS[mutant]

        def build(setup: dict[str, Any]) -> Any:
            servers = [tuple(s) for s in setup["stores"]]
            links = [tuple(link) for link in setup["links"]]
            latency = (1_000, setup["latency_max_ms"])
            return build_fixed(setup["seed"], servers, links, latency_ms=latency, params=params_of(setup), **kw)

        return build

    def mutants(self) -> dict[str, tuple[str, ...]]:
        return {name: (rule, *ALSO.get(name, ())) for name, rule in EXPECTED.items()}

    def monitor(self) -> Any:
        return get("pf").monitor()

    # --- steps --------------------------------------------------------------------------------------
    def opening(self, s: Session) -> list[tuple[str, dict[str, Any]]]:
        return [("create_folder", {"via": "A"})]

    def expand(self, s: Session, op: str, raw: dict[str, Any]) -> list[Call]:
        fids = s.state.get("fids", [])
        s.state["scratching"] = False
        ref = {"$folder": raw["folder"] % len(fids)} if "folder" in raw and fids else None
        if ("folder" in raw or "folders" in raw) and not fids:
            return []  # no folder exists yet: nothing to do
        if op == "create_folder":
            return [_c("create_folder", via=raw["via"], name=f"f{s.state.get('created', 0)}")]
        if op == "create_local_folder":
            name = f"Views{s.state.get('created', 0)}"
            return [_c("create_folder", via=raw["via"], name=name, tree="NON_IPM", replicating=False)]
        if op == "scratch_folders":
            made, via = s.state.get("scratch", []), s.state.get("scratch_via", raw["via"])
            if made:
                s.state["scratch"] = []
                return [_c("delete_folder", via=via, fid={"$folder": k}) for k in made]
            s.state.update(scratching=True, scratch_via=raw["via"])
            base = s.state.get("created", 0)
            return [_c("create_folder", via=raw["via"], name=f"scratch{base + i}") for i in range(raw["n"])]
        if op == "delete_folders":
            ks = sorted({k % len(fids) for k in raw["folders"]})
            return [_c("delete_folder", via=raw["via"], fid={"$folder": k}) for k in ks]
        if op == "remove_two_at_once":
            return PS.remove_two_at_once(ref, (_holders(s, ref) or [raw["server"]])[0], raw["server"])
        if op == "remove_replicas_at_once":
            holders = _holders(s, ref)
            return [_c("remove_replica", fid=ref, server=x, via=x) for x in holders] if len(holders) > 1 else []
        if op in PS.SCENARIOS:
            via = (_holders(s, ref) or [raw["store"]])[0]
            return PS.SCENARIOS[op](ref, via, raw["store"], s.state.get("loss", 0.0))
        if op == "post":
            return [_c("post", store=raw["store"], fid=ref, size_kb=raw["size"]) for _ in range(raw["n"])]
        if op == "modify_folder":
            return [_c("modify_folder", via=raw["via"], fid=ref)]
        if op == "add_replica":
            return [_c(op, fid=ref, server=raw["server"], via=raw["via"])]
        if op == "remove_replica":  # clients just before and just after: served or redirected only while active
            return [
                _c("client_access", store=raw["via"], fid=ref),
                _c(op, fid=ref, server=raw["server"], via=raw["via"]),
                _c("client_access", store=raw["server"], fid=ref),
            ]
        if op == "move_replica":
            return [
                _c("add_replica", fid=ref, server=raw["dst"], via=raw["via"]),
                _c("remove_replica", fid=ref, server=raw["src"], via=raw["via"]),
                _c("client_access", store=raw["src"], fid=ref),
            ]
        if op == "client":
            return [_c("client_access", store=raw["store"], fid=ref)]
        if op in ("crash", "restart", "backup", "restore"):
            return [_c(op, store=raw["store"])]
        if op == "set_loss":
            s.state["loss"] = raw["loss"]
            return [_c("set_loss", loss=raw["loss"])]
        if op == "post_while_mail_is_lost":
            return PS.lost_post(ref, raw["store"], s.state.get("loss", 0.0))
        if op == "backfill_twice":
            return PS.backfill_twice(ref, raw["store"], raw["other"], s.state.get("loss", 0.0))
        if op == "advance":
            return [_c("advance", ms=raw["minutes"] * MINUTE)]
        if op == "process_restart":
            s.state["restarts"] = s.state.get("restarts", 0) + 1
            again = [_c("create_folder", via="A", name="first")] if raw["new_state"] else []
            return [_c("kill_and_restart", new_state=raw["new_state"]), *again]
        raise KeyError(op)

    def simpler(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        """Simpler versions of a recorded step that the generator could also have drawn, simplest first (for
        `minimise`): a shorter `advance`, fewer or smaller posts, fewer folders deleted or replicas removed at
        once (at least two of those), an earlier folder."""
        op, calls = step["op"], step["calls"]
        out: list[dict[str, Any]] = []
        if op == "advance" and len(calls) == 1:
            ms = calls[0]["args"]["ms"]
            out += [{"op": op, "calls": [_c("advance", ms=m * MINUTE)]} for m in ADVANCE_MINUTES if m * MINUTE < ms]
        if op == "post" and calls:
            args = calls[0]["args"]
            out += [{"op": op, "calls": calls[:n]} for n in range(1, len(calls))]
            smaller = [z for z in POST_SIZES if z < args["size_kb"]]
            out += [{"op": op, "calls": [_c("post", **{**args, "size_kb": z}) for _ in calls]} for z in smaller]
        if op in ("delete_folders", "remove_replicas_at_once") and len(calls) > (1 if op == "delete_folders" else 2):
            out += [{"op": op, "calls": calls[:i] + calls[i + 1 :]} for i in range(len(calls))]
        refs = {c["args"]["fid"]["$folder"] for c in calls if isinstance(c["args"].get("fid"), dict)}
        if len(refs) == 1 and op != "post_while_mail_is_lost":
            (k,) = refs
            out += [{"op": op, "calls": [_refer(c, j) for c in calls]} for j in range(k)]
        return out

    def resolve(self, s: Session, args: dict[str, Any]) -> dict[str, Any]:
        """`{"$folder": k}` -> the k-th folder this system created (`Divergence`: none, issue 36)."""
        out = dict(args)
        for k, v in args.items():
            if isinstance(v, dict) and "$quiesce" in v:  # `end`: when this run's quiescent phase began
                out[k] = int(s.state.get("quiesce_ms", 0))
            if isinstance(v, dict) and "$folder" in v:
                fids, n = s.state["fids"], v["$folder"]
                if not 0 <= n < len(fids) or fids[n] is None:
                    made = sum(f is not None for f in fids)
                    raise Divergence(
                        f"names folder {n} ({{'$folder': {n}}}), which this system never created (it created "
                        f"{made} folder(s) so far; the system that recorded the run answered a create_folder "
                        "this one refused)"
                    )
                out[k] = fids[n]
        return out

    def absorb(self, s: Session, call: str, result: Any) -> None:
        if call == "__init__":
            s.state.update(fids=[], created=0, loss=0.0, scratch=[])
        elif call == "create_folder":
            s.state["created"] = s.state.get("created", 0) + 1
            theirs = s.recorded()  # a replay following another system's answers (the coverage floor's)
            if theirs is not NOT_RECORDED and bool(theirs) != bool(result):
                if theirs:  # it created a folder here and this system did not: keep the numbering, unresolvable
                    s.diverge(f"the recording system created folder {theirs!r}; this one refused ({result!r})")
                    s.state["fids"].append(None)
                else:  # this system created one the recording system did not: no later call names it
                    s.diverge(f"this system created folder {result!r}; the recording system refused ({theirs!r})")
                return
            if result:
                if s.state.get("scratching"):  # made by a scratch_folders step: deleted by the next one
                    s.state.setdefault("scratch", []).append(len(s.state["fids"]))
                s.state["fids"].append(result)
        elif call == "quiesce" and isinstance(result, int):
            s.state["quiesce_ms"] = result
        elif call == "kill_and_restart" and result:
            s.state.update(fids=[], scratch=[])  # a new state directory: the folders are gone

    def events(self, s: Session) -> list[Event]:
        evs = s.system.events
        return list(evs() if callable(evs) else evs)

    def finish(self, s: Session) -> list[Call]:
        """Fairness (PF-035): faults stop (`quiesce`), the convergence bound passes, then the END snapshot of
        every replica (`end`: the model records its own; behind the adapter the harness records it from the
        system's `replicas` and `cnset` answers), at which the monitor's `convergence` rule judges each folder."""
        calls = [_c("quiesce"), _c("advance", ms=convergence_wait_ms())]
        if callable(getattr(s.system, "end", None)):
            bound = convergence_bound_ms(params_of(s.setup), int(s.setup.get("latency_max_ms", LATENCY_MAX_MS)))
            calls.append(_c("end", quiesce_ms={"$quiesce": 0}, bound_ms=bound))
        return calls

    def end_checks(self, s: Session) -> list[EndProblem]:
        """PF-035 on the live state, through the protocol: active replicas of a folder hold one CNSet."""
        problems = []
        for fid in s.state.get("fids", []):
            if fid is None:  # a folder of the followed run this system never created
                continue
            active = [st_ for st_, state in s.system.replicas(fid).items() if state == "active"]
            sets = {store: _norm(s.system.cnset(store, fid)) for store in active}
            if len(set(sets.values())) > 1:
                problems.append(EndProblem(CONVERGENCE, f"{fid}: active replicas differ after the bound: {sets}"))
        return problems


CONVERGENCE = RULES["convergence"]  # the end-of-run check's rule (PF-035)


def _holders(s: Session, ref: dict[str, int]) -> list[str]:
    """The stores holding an active replica of the referenced folder, as the system reports them (a query: the
    step records the calls it makes with these stores, so a replay does not ask again)."""
    fid = s.state["fids"][ref["$folder"]]
    return sorted(store for store, state in s.system.replicas(fid).items() if state == "active")


def _norm(cnset: Any) -> str:
    if isinstance(cnset, list | tuple):
        return ",".join(sorted(map(str, cnset)))
    encode = getattr(cnset, "encode", None)
    return ",".join(sorted(map(str, encode()))) if callable(encode) else str(cnset)


def _refer(call: Call, k: int) -> Call:
    """The call with its folder reference changed to the k-th folder."""
    args = call["args"]
    return {**call, "args": {**args, "fid": {"$folder": k}}} if isinstance(args.get("fid"), dict) else call


_c = PS.call
DRIVER = PfDriver()


def fixed_model_factory(**kw: object) -> Callable[[int], Any]:
    """Model systems of the fixed three-store layout, one per seed (`model.pf.sim.build_fixed`; the deep
    searches of `tests/pf/test_pf_deep.py`)."""
    return lambda seed: build_fixed(seed, SERVERS, LINKS, latency_ms=(1_000, LATENCY_MAX_MS), **kw)  # type: ignore[arg-type]


def make_machine(factory: Callable[[int], Any], *, faults: bool = True) -> Any:
    """The harness's pf state machine over systems built by `factory(seed)`; `faults=False` keeps every
    run free of outages, loss and restores."""
    drv = PfDriver()
    if not faults:
        drv.setup = drv.setup.map(lambda s: {**s, "faults": False})  # type: ignore[misc]
    return machine_for(drv, lambda setup: factory(setup["seed"]))
