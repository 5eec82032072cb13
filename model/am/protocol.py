"""The interface an Active Manager implementation offers to the conformance suite, and the model's own.

Seed 002, all sections. `ActiveManagerSystem` is a `typing.Protocol`: an external implementation (or an
adapter driving a real DAG in a lab) implements it and the conformance suite's state machine,
`conformance.harness.machine("am", factory)` (driver: `conformance/harness/am.py`), drives it with
failures, switchovers and partitions, checking the invariants of `properties.py` on the events it records
after every step; other languages speak `conformance/PROTOCOL.md` (`haconform conform am --sut ...`).
`ModelSystem` is the reference implementation: the pure rules of `rules.py`/`actions.py` with an
injected environment.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from model.am import actions as act
from model.am import events as ev
from model.am.bcss import Options, select
from model.am.decisions import Out, Tx, _mount, copy_attrs
from model.am.state import COMPONENTS, CopyState, Snapshot, Trigger, World, empty_world
from model.kernel.choice import Chooser, seeded
from spec.catalogue import param_default, require

require("AM-002", "AM-003", "AM-005", "AM-008", "AM-009", "AM-011", "AM-021")


@runtime_checkable
class ActiveManagerSystem(Protocol):
    """Inputs an operator or the world applies, and what can be observed. Every call returns the
    events recorded while handling it, as (entity, kind, attrs) triples in order."""

    def crash(self, server: str) -> list[Out]: ...
    def restart(self, server: str) -> list[Out]: ...
    def partition(self, groups: Sequence[Sequence[str]]) -> list[Out]: ...
    def heal(self) -> list[Out]: ...
    def fail_database(self, db: str) -> list[Out]: ...
    def fail_store(self, server: str) -> list[Out]: ...
    def responder_failover(self, server: str, component: str) -> list[Out]: ...
    def switchover(self, db: str, lossless: bool) -> list[Out]: ...
    def move_pam(self, to: str) -> list[Out]: ...
    def maintenance(self, server: str) -> list[Out]: ...
    def set_health(self, server: str, component: str, state: str) -> list[Out]: ...
    def set_dial(self, server: str, dial: str) -> list[Out]: ...
    def set_copy(self, db: str, server: str, **changes: Any) -> list[Out]: ...
    def generate_logs(self, db: str, n: int, lags: Mapping[str, int]) -> list[Out]: ...
    def query(self, db: str, server: str) -> list[Out]: ...
    def pams(self) -> frozenset[str]: ...
    def mounted(self, db: str) -> frozenset[str]: ...


@runtime_checkable
class BestCopySelector(Protocol):
    """Just the BCSS decision: the servers, in the order they would be tried (AM-039). An implementation
    of this alone can be compared with `bcss.select` on any snapshot (`tests/am/test_selector.py`)."""

    def select(self, snapshot: Snapshot, trigger: Trigger) -> Sequence[str]: ...


class ReferenceSelector:
    """`bcss.select` behind the `BestCopySelector` interface."""

    def __init__(self, opts: Options | None = None) -> None:
        self.opts = opts

    def select(self, snapshot: Snapshot, trigger: Trigger) -> Sequence[str]:
        return select(snapshot, trigger, self.opts).servers


# Choice points of the Active Manager system (issue 33; the table in model/am/README.md): what the seed leaves
# to the environment, resolved through a `model.kernel.choice.Chooser` (seeded in simulation, scripted when
# exploring).
CHOICE_PAM = "am.pam-holder"  # which quorum member takes the PAM (AM-005, AM-006, AM-007)
CHOICE_MOUNT_FAILS = "am.mount-fails"  # the store fails to mount the chosen copy (AM-025)
CHOICE_ACLL_SHORT = "am.acll-short"  # the ACLL source provides fewer logs than generated (AM-023)
CHOICE_ACLL_SHORTFALL = "am.acll-shortfall"  # how many logs fewer, 1..20 (AM-023)


@dataclass
class RngEnv:
    """The environment's answers (`decisions.Env`) as choice points: each is a named call on `choices`, by
    default a `SeededChooser` over `rng`, which draws exactly as the direct `rng` calls did; the explorer
    gives a `ScriptedChooser` instead (`env.choices = ...`) and branches on every outcome (issue 33)."""

    rng: random.Random
    mount_fail: float = 0.15
    acll_short: float = 0.2
    choices: Chooser | None = None

    def __post_init__(self) -> None:
        if self.choices is None:
            self.choices = seeded(self.rng)

    @property
    def chooser(self) -> Chooser:
        assert self.choices is not None  # set by __post_init__
        return self.choices

    def choose(self, options: Sequence[str]) -> str:
        return self.chooser.pick(CHOICE_PAM, list(options))

    def mount_ok(self, db: str, server: str) -> bool:
        return not self.chooser.chance(CHOICE_MOUNT_FAILS, self.mount_fail)

    def source_last_log(self, db: str, lgen: int) -> int:
        if not self.chooser.chance(CHOICE_ACLL_SHORT, self.acll_short):
            return lgen
        return max(0, lgen - self.chooser.randint(CHOICE_ACLL_SHORTFALL, 1, 20))


@dataclass(frozen=True)
class Layout:
    """The shape of a generated DAG: members, standalone servers, databases and their copies."""

    dag: str
    members: tuple[str, ...]
    standalone: tuple[str, ...]
    copies: Mapping[str, tuple[str, ...]]  # database -> servers in activation preference order

    @staticmethod
    def random(rng: random.Random, members: int = 4, databases: int = 3, standalone: int = 1) -> Layout:
        names = tuple(f"MBX{i + 1}" for i in range(members))
        alone = tuple(f"MBXS{i + 1}" for i in range(standalone))
        copies: dict[str, tuple[str, ...]] = {}
        for i in range(databases):
            k = rng.randint(min(3, members), members)
            copies[f"DB{i + 1}"] = tuple(rng.sample(names, k))
        for i, s in enumerate(alone):
            copies[f"SDB{i + 1}"] = (s,)
        return Layout("DAG1", names, alone, copies)


class ModelSystem:
    """The reference implementation of `ActiveManagerSystem` (optionally with planted flaws)."""

    # The boot's recorded outputs (the trace's first events: history), never read once the system is built. Left out
    # of the explorer's fingerprint (issue 33, session 22): walked, they told every state apart by its root's boot
    # record (which server the boot elected PAM) and by which recorded dicts its world still shares with it, though
    # the model's behaviour depends on neither (`tests/explore/test_not_state.py`).
    __not_state__ = ("initial",)

    def __init__(
        self,
        layout: Layout,
        env: Any,
        flaws: frozenset[str] = frozenset(),
        dials: Mapping[str, str] | None = None,
        opts: Options | None = None,
    ) -> None:
        self.layout, self.env, self.flaws = layout, env, flaws
        self.world = empty_world(opts or Options())
        self.initial: list[Out] = self._boot(dials or {})

    def _boot(self, dials: Mapping[str, str]) -> list[Out]:
        """Every initial fact is recorded and applied (`step.apply`): view, PAM, configuration, copies."""
        layout = self.layout
        servers = layout.members + layout.standalone
        tx = Tx(self.world, self.flaws)
        act._emit_view(tx, layout.dag, layout.members, frozenset(servers), (frozenset(servers),))
        act._elect(tx, self.env)
        default = param_default("AutoDatabaseMountDial")
        for s in sorted(servers):
            tx.emit(layout.dag, ev.AM_CONFIG, server=s, dial=dials.get(s, default))
            for comp, prio in COMPONENTS:
                tx.emit(layout.dag, ev.SERVER_HEALTH, server=s, component=comp, priority=prio, state="Healthy")
        for db, servers_of in sorted(layout.copies.items()):
            dag = None if servers_of[0] in layout.standalone else layout.dag
            tx.emit(db, ev.DB_CREATE, dag=dag, servers=list(servers_of))
            for i, s in enumerate(servers_of):
                tx.emit(db, ev.COPY_STATE, **copy_attrs(CopyState(s, preference=i + 1)))
            by = servers_of[0] if dag is None else tx.w.pam
            tx.emit(db, ev.ACTIVE_MOVE, src=None, dst=servers_of[0], by=by)
            tx.emit(db, ev.MOUNT_START, server=servers_of[0], by=by)
            _mount(tx, db, servers_of[0])
        self.world, outs = tx.world()
        return outs

    def _apply(self, result: tuple[World, list[Out]]) -> list[Out]:
        self.world, outs = result
        return outs

    # --- observers --------------------------------------------------------------------------------
    def pams(self) -> frozenset[str]:
        return self.world.claims

    def mounted(self, db: str) -> frozenset[str]:
        return self.world.dbs[db].on

    # --- inputs -----------------------------------------------------------------------------------
    def crash(self, server: str) -> list[Out]:
        w = self.world
        return self._apply(act.change_view(w, w.up - {server}, w.groups, self.env, self.flaws))

    def restart(self, server: str) -> list[Out]:
        w = self.world
        return self._apply(act.change_view(w, w.up | {server}, w.groups, self.env, self.flaws))

    def partition(self, groups: Sequence[Sequence[str]]) -> list[Out]:
        w = self.world
        listed = {s for g in groups for s in g}
        rest = [frozenset(s for s in self.layout.members + self.layout.standalone if s not in listed)]
        parts = [frozenset(g) for g in groups if g] + [g for g in rest if g]
        return self._apply(act.change_view(w, w.up, parts, self.env, self.flaws))

    def heal(self) -> list[Out]:
        w = self.world
        everyone = frozenset(self.layout.members + self.layout.standalone)
        return self._apply(act.change_view(w, w.up, (everyone,), self.env, self.flaws))

    def fail_database(self, db: str) -> list[Out]:
        return self._apply(act.fail_database(self.world, db, self.env, self.flaws))

    def fail_store(self, server: str) -> list[Out]:
        return self._apply(act.fail_store(self.world, server, self.env, self.flaws))

    def responder_failover(self, server: str, component: str) -> list[Out]:
        return self._apply(act.responder_failover(self.world, server, component, self.env, self.flaws))

    def switchover(self, db: str, lossless: bool) -> list[Out]:
        return self._apply(act.switchover(self.world, db, lossless, self.env, self.flaws))

    def move_pam(self, to: str) -> list[Out]:
        return self._apply(act.move_pam(self.world, to, self.flaws))

    def maintenance(self, server: str) -> list[Out]:
        return self._apply(act.maintenance(self.world, server, self.env, self.flaws))

    def set_health(self, server: str, component: str, state: str) -> list[Out]:
        return self._apply(act.set_health(self.world, server, component, state))

    def set_dial(self, server: str, dial: str) -> list[Out]:
        return self._apply(act.set_dial(self.world, server, dial))

    def set_copy(self, db: str, server: str, **changes: Any) -> list[Out]:
        return self._apply(act.set_copy(self.world, db, server, self.env, **changes))

    def generate_logs(self, db: str, n: int, lags: Mapping[str, int]) -> list[Out]:
        return self._apply(act.generate_logs(self.world, db, n, lags))

    def query(self, db: str, server: str) -> list[Out]:
        return self._apply(act.query(self.world, db, server, self.flaws))
