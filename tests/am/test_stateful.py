"""Hypothesis stateful tests driving an `ActiveManagerSystem` with failures, switchovers and partitions.

After every step the invariants of `model/am/properties.py` are checked on what the system exposes
(`pams`, `mounted`) and, through the monitor, on every event it recorded. An external implementation
plugs in by subclassing `AmMachine` with its own `make_system`. Each mutant must be found by the search.
A failure prints the seed and the steps as a runnable program (Hypothesis' stateful output).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule, run_state_machine_as_test

from model.am.bcss import Options
from model.am.monitor import Replay
from model.am.mutants import MUTANTS
from model.am.protocol import ActiveManagerSystem, Layout, ModelSystem, RngEnv
from model.am.state import COMPONENTS, DIALS
from tests.am.test_bcss_properties import options
from traces.schema import Event

MEMBERS = ("MBX1", "MBX2", "MBX3", "MBX4", "MBX5")
SERVERS = (*MEMBERS, "MBXS1")
DBS = ("DB1", "DB2", "DB3", "SDB1")
servers = st.sampled_from(SERVERS)
dbs = st.sampled_from(DBS)
components = st.sampled_from([c for c, _ in COMPONENTS])
health_states = st.sampled_from(["Healthy", "Degraded", "Unhealthy"])
copy_changes = st.one_of(
    st.fixed_dictionaries({"status": st.sampled_from(["Healthy", "Failed", "Suspended", "SeedingSource",
                                                      "DisconnectedAndHealthy", "Resynchronizing"])}),
    st.fixed_dictionaries({"content_index": st.sampled_from(["Healthy", "Crawling", "Failed"])}),
    st.fixed_dictionaries({"replay_queue": st.sampled_from([0, 49, 50, 200])}),
    st.fixed_dictionaries({"blocked": st.booleans()}),
    st.fixed_dictionaries({"suspended": st.booleans()}),
)


class AmMachine(RuleBasedStateMachine):
    flaws: frozenset[str] = frozenset()
    watch: frozenset[str] | None = None  # only these monitor rules fail the run (None: every rule)

    def make_system(self, layout: Layout, seed: int, opts: Options) -> ActiveManagerSystem:
        return ModelSystem(layout, RngEnv(random.Random(seed), mount_fail=0.2), self.flaws, opts=opts)

    @initialize(seed=st.integers(0, 2**16), opts=st.one_of(st.just(Options()), options))
    def start(self, seed: int, opts: Options) -> None:
        rng = random.Random(seed)
        copies = {db: tuple(rng.sample(MEMBERS, rng.randint(2, 5))) for db in DBS[:3]}
        layout = Layout("DAG1", MEMBERS, ("MBXS1",), {**copies, "SDB1": ("MBXS1",)})
        self.layout = layout
        self.sys = self.make_system(layout, seed, opts)
        self.replay = Replay(opts)  # the monitor judges by the reading the system was built with
        self.seq = 0
        self.feed(getattr(self.sys, "initial", []))

    def feed(self, outs: list) -> None:
        events = []
        for entity, kind, attrs in outs:
            events.append(Event(schema_version=1, trace_id="stateful", seq=self.seq,
                                event_id=f"s-{self.seq}", ts_ms=self.seq, node="n", mechanism="am",
                                entity=entity, kind=kind, attrs=attrs))
            self.seq += 1
        self.replay.feed(events)

    @rule(s=servers)
    def crash(self, s: str) -> None:
        self.feed(self.sys.crash(s))

    @rule(s=servers)
    def restart(self, s: str) -> None:
        self.feed(self.sys.restart(s))

    @rule(group=st.lists(servers, min_size=1, max_size=3, unique=True))
    def partition(self, group: list[str]) -> None:
        self.feed(self.sys.partition([group]))

    @rule()
    def heal(self) -> None:
        self.feed(self.sys.heal())

    @rule(db=dbs)
    def fail_database(self, db: str) -> None:
        self.feed(self.sys.fail_database(db))

    @rule(s=servers)
    def fail_store(self, s: str) -> None:
        self.feed(self.sys.fail_store(s))

    @rule(s=servers, comp=components, also=st.sampled_from(SERVERS))
    def responder(self, s: str, comp: str, also: str) -> None:
        self.feed(self.sys.set_health(also, comp, "Unhealthy"))
        self.feed(self.sys.responder_failover(s, comp))

    @rule(s=servers, comp=components, state=health_states)
    def health(self, s: str, comp: str, state: str) -> None:
        self.feed(self.sys.set_health(s, comp, state))

    @rule(s=servers, dial=st.sampled_from(DIALS))
    def dial(self, s: str, dial: str) -> None:
        self.feed(self.sys.set_dial(s, dial))

    def _copy(self, db: str, i: int) -> str:
        names = self.layout.copies[db]
        return names[i % len(names)]

    @rule(db=dbs, i=st.integers(0, 4), change=copy_changes)
    def set_copy(self, db: str, i: int, change: dict) -> None:
        self.feed(self.sys.set_copy(db, self._copy(db, i), **change))

    @rule(db=dbs, i=st.integers(0, 4), which=st.sampled_from(["blocked", "suspended"]))
    def block(self, db: str, i: int, which: str) -> None:
        self.feed(self.sys.set_copy(db, self._copy(db, i), **{which: True}))

    @rule(db=dbs, n=st.integers(1, 30),
          lags=st.lists(st.sampled_from([0, 3, 7, 13, 40]), min_size=len(SERVERS), max_size=len(SERVERS)))
    def logs(self, db: str, n: int, lags: list[int]) -> None:
        self.feed(self.sys.generate_logs(db, n, dict(zip(SERVERS, lags, strict=True))))

    @rule(db=dbs, lossless=st.booleans())
    def switchover(self, db: str, lossless: bool) -> None:
        self.feed(self.sys.switchover(db, lossless))

    @rule(to=st.sampled_from(MEMBERS))
    def move_pam(self, to: str) -> None:
        self.feed(self.sys.move_pam(to))

    @rule(s=st.sampled_from(MEMBERS))
    def maintenance(self, s: str) -> None:
        self.feed(self.sys.maintenance(s))

    @rule(db=dbs, s=servers)
    def query(self, db: str, s: str) -> None:
        self.feed(self.sys.query(db, s))

    @invariant()
    def safety(self) -> None:
        if not hasattr(self, "sys"):
            return
        if self.watch is None:
            assert len(self.sys.pams()) <= 1, f"single-pam (AM-005): {sorted(self.sys.pams())}"
            for db in DBS:
                mounted = sorted(self.sys.mounted(db))
                assert len(mounted) <= 1, f"one-active-copy (AM-009): {db} on {mounted}"
        found = [v for v in self.replay.out if self.watch is None or v.rule in self.watch]
        assert not found, "\n".join(map(str, found[:3]))


TestActiveManager = pytest.mark.model(AmMachine.TestCase)


def _mutant_machine(flaw: str, rule_name: str) -> type[AmMachine]:
    return type(f"Mutant_{flaw}", (AmMachine,), {"flaws": frozenset({flaw}), "watch": frozenset({rule_name})})


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_search_finds_mutant(name: str) -> None:
    """Random steps alone (no scripted prelude) reach each planted flaw and the named rule reports it."""
    flaw, rule_name, requirement = MUTANTS[name]
    budget = settings(max_examples=300, stateful_step_count=100, deadline=None, database=None, derandomize=True,
                      phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    with pytest.raises(AssertionError) as info:
        run_state_machine_as_test(_mutant_machine(flaw, rule_name), settings=budget)
    text = str(info.value)
    assert f"[{requirement} {rule_name}]" in text, text
