"""A conformance harness for any implementation of `protocol.PublicFolderSystem` (Hypothesis stateful).

`make_machine(factory)` returns a `RuleBasedStateMachine` class: `factory(seed)` must build a fresh system
of three stores named A, B and C (A and B in one routing group, C in another). The machine creates
folders, posts, modifies folders, adds, removes and moves replicas, sends clients, crashes and restarts
stores, backs them up and restores them, and loses mail; at teardown it stops all faults (the fairness
assumption of PF-035), lets the convergence bound pass, checks the trace with the pf monitor and checks
through the protocol that every folder's active replicas hold the same CNSet. A failure names the seed
and Hypothesis prints the steps, which paste into a scripted test. Used by `tests/pf/test_pf_stateful.py`.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, initialize, multiple, precondition, rule

from conformance.check import check_events
from model.kernel.sim import HOUR, MINUTE
from model.pf.monitor import PFMonitor
from model.pf.properties import convergence_bound_ms
from model.pf.protocol import PublicFolderSystem
from model.pf.sim import build_fixed
from model.pf.state import ACTIVE, Params
from spec.catalogue import require

require("PF-035", "BF-024", "BF-033")

STORES = ["A", "B", "C"]
SERVERS = [("A", "rg0", "2003"), ("B", "rg0", "5.5"), ("C", "rg1", "2000")]
LINKS = [("rg0", "rg1", 7)]
LATENCY_MAX_MS = 2 * MINUTE

Factory = Callable[[int], PublicFolderSystem]


def model_factory(**kw: object) -> Factory:
    return lambda seed: build_fixed(seed, SERVERS, LINKS, latency_ms=(1_000, LATENCY_MAX_MS), **kw)  # type: ignore[arg-type]


def make_machine(factory: Factory, *, faults: bool = True) -> type[RuleBasedStateMachine]:
    """A state machine over any `PublicFolderSystem`; `faults=False` leaves out outages, loss and restores."""

    class PublicFolderMachine(RuleBasedStateMachine):
        folders = Bundle("folders")

        @initialize(target=folders, seed=st.integers(0, 2**20))
        def start(self, seed: int) -> str:
            self.seed = seed
            self.system = factory(seed)
            self.fids: list[str] = []
            return self._created(self.system.create_folder("A", "first"))

        def _created(self, fid: str) -> object:
            if not fid:
                return multiple()
            self.fids.append(fid)
            return fid

        @rule(target=folders, via=st.sampled_from(STORES))
        def create_folder(self, via: str) -> object:
            return self._created(self.system.create_folder(via, f"f{len(self.fids)}"))

        @rule(
            fid=folders,
            store=st.sampled_from(STORES),
            n=st.integers(1, 4),
            size=st.sampled_from([1, 16, 400]),
        )
        def post(self, fid: str, store: str, n: int, size: int) -> None:
            for _ in range(n):
                self.system.post(store, fid, size)

        @rule(fid=folders, via=st.sampled_from(STORES))
        def modify_folder(self, fid: str, via: str) -> None:
            self.system.modify_folder(via, fid)

        @rule(fid=folders, server=st.sampled_from(STORES), via=st.sampled_from(STORES))
        def add_replica(self, fid: str, server: str, via: str) -> None:
            self.system.add_replica(fid, server, via)

        @rule(fid=folders, server=st.sampled_from(STORES), via=st.sampled_from(STORES))
        def remove_replica(self, fid: str, server: str, via: str) -> None:
            self.system.remove_replica(fid, server, via)

        @rule(fid=folders, src=st.sampled_from(STORES), dst=st.sampled_from(STORES), via=st.sampled_from(STORES))
        def move_replica(self, fid: str, src: str, dst: str, via: str) -> None:
            """Moving a replica (seed 001, "Deleting a Replica"): add the new one, remove the old one."""
            self.system.add_replica(fid, dst, via)
            self.system.remove_replica(fid, src, via)

        @rule(store=st.sampled_from(STORES), fid=folders)
        def client(self, store: str, fid: str) -> None:
            self.system.client_access(store, fid)

        @precondition(lambda self: faults)
        @rule(store=st.sampled_from(STORES))
        def crash(self, store: str) -> None:
            self.system.crash(store)

        @precondition(lambda self: faults)
        @rule(store=st.sampled_from(STORES))
        def restart(self, store: str) -> None:
            self.system.restart(store)

        @precondition(lambda self: faults)
        @rule(store=st.sampled_from(STORES))
        def backup(self, store: str) -> None:
            self.system.backup(store)

        @precondition(lambda self: faults)
        @rule(store=st.sampled_from(STORES))
        def restore(self, store: str) -> None:
            self.system.restore(store)

        @precondition(lambda self: faults)
        @rule(loss=st.sampled_from([0.0, 0.2, 1.0]))
        def set_loss(self, loss: float) -> None:
            self.loss = loss
            self.system.set_loss(loss)

        @precondition(lambda self: faults)
        @rule(fid=folders, store=st.sampled_from(STORES))
        def post_while_mail_is_lost(self, fid: str, store: str) -> None:
            """A post whose replication mail is lost: only backfill can repair it."""
            self.system.set_loss(1.0)
            self.system.post(store, fid, 1)
            self.system.advance(20 * MINUTE)
            self.system.set_loss(getattr(self, "loss", 0.0))

        @rule(minutes=st.sampled_from([1, 4, 10, 30, 90, 6 * 60, 36 * 60]))
        def advance(self, minutes: int) -> None:
            self.system.advance(minutes * MINUTE)

        def teardown(self) -> None:
            if not hasattr(self, "system"):
                return
            self.system.quiesce()
            self.system.advance(convergence_bound_ms(Params(), LATENCY_MAX_MS) + HOUR)
            violations = check_events(self.system.events, [PFMonitor()])
            assert not violations, f"seed {self.seed}: " + "\n".join(map(str, violations[:5]))
            for fid in self.fids:  # PF-035, checked on the live state through the protocol
                active = [s for s, st_ in self.system.replicas(fid).items() if st_ == ACTIVE]
                sets = {s: self.system.cnset(s, fid) for s in active}
                assert len(set(sets.values())) <= 1, f"seed {self.seed}: [convergence PF-035] {fid}: {sets}"

    return PublicFolderMachine
