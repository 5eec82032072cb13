"""A Hypothesis state machine over any `ShadowRedundancySystem` (the conformance harness).

`machine_for(factory)` returns a `RuleBasedStateMachine` class driving the system built by
`factory(seed, options)` with random topologies, configurations, workloads and faults, and checking
every safety rule after every step with the trace monitor's own fold; the teardown quiesces the system
(fairness) and checks the liveness rules. A failure prints Hypothesis's replayable step list.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from model.kernel.sim import HOUR, MINUTE, SECOND
from model.sr.monitor import Folder
from model.sr.protocol import ShadowRedundancySystem
from model.sr.sim import LAYOUTS
from tests.sr.helpers import report

Factory = Callable[[int, dict[str, Any]], ShadowRedundancySystem]
FORKS = ["mbx", "ext:contoso.example", "dsn", "journal", "hub:HUB2010"]  # hub forks kept only if possible
STEPS_MS = [SECOND, 10 * SECOND, MINUTE, 5 * MINUTE, 30 * MINUTE, 3 * HOUR + 10 * MINUTE]


def machine_for(factory: Factory) -> type[RuleBasedStateMachine]:
    class ShadowRedundancyMachine(RuleBasedStateMachine):
        system: ShadowRedundancySystem | None = None
        failed = False

        @initialize(
            seed=st.integers(0, 2**16),
            layout=st.sampled_from(LAYOUTS),
            reject=st.booleans(),
            pref=st.sampled_from(["PreferRemote", "RemoteOnly", "LocalOnly"]),
            enabled=st.sampled_from([True, True, True, False]),
            heartbeat_min=st.sampled_from([2, 30]),
            hub=st.booleans(),
            stall=st.sampled_from([0.0, 0.05, 0.6]),
            n_servers=st.integers(2, 6),
            first=st.tuples(st.integers(0, 7), st.lists(st.sampled_from(FORKS), min_size=1, max_size=3, unique=True)),
        )
        def setup(
            self,
            seed: int,
            layout: str,
            reject: bool,
            pref: str,
            enabled: bool,
            heartbeat_min: int,
            hub: bool,
            stall: float,
            n_servers: int,
            first: tuple[int, list[str]],
        ) -> None:
            self.seed = seed
            self.system = factory(
                seed,
                {
                    "layout": layout,
                    "reject_on_failure": reject,
                    "preference": pref,
                    "enabled": enabled,
                    "heartbeat_ms": heartbeat_min * MINUTE,
                    "hub": hub,
                    "n_servers": n_servers,
                    "stall_p": stall,  # the world's chance that a shadow session stalls (model-only)
                },
            )
            self.folder = Folder()
            self.seen = 0
            self.n_msgs = 0
            self.last_primary = ""
            self.submit(*first)

        def _server(self, i: int) -> str:
            names = self.system.servers()
            return names[i % len(names)]

        @rule(i=st.integers(0, 7), forks=st.lists(st.sampled_from(FORKS), min_size=1, max_size=3, unique=True))
        def submit(self, i: int, forks: list[str]) -> None:
            self.n_msgs += 1
            self.last_primary = self._server(i)
            self.system.submit(f"m{self.n_msgs}", self.last_primary, forks)

        @rule(i=st.integers(0, 7), fork=st.sampled_from(FORKS[:4]))
        def exchange_2010_traffic(self, i: int, fork: str) -> None:
            """A message from the site's Exchange 2010 Hub that also goes back to it (SR-036, SR-037)."""
            self.n_msgs += 1
            self.last_primary = self._server(i)
            self.system.submit(f"m{self.n_msgs}", self.last_primary, [fork, "hub:HUB2010"], origin="hub2010")

        @rule(ms=st.sampled_from(STEPS_MS))
        def advance(self, ms: int) -> None:
            self.system.advance(ms)

        @rule(i=st.integers(0, 7))
        def crash(self, i: int) -> None:
            self.system.crash(self._server(i))

        @precondition(lambda self: bool(self.last_primary))
        @rule()
        def crash_last_primary(self) -> None:
            self.system.crash(self.last_primary)

        @precondition(lambda self: bool(self.last_primary))
        @rule(new=st.booleans())
        def bounce_last_primary(self, new: bool) -> None:
            """The Transport service restarts on the last primary (same or new transport database)."""
            self.system.crash(self.last_primary)
            self.system.restart(self.last_primary, new_database=new)

        @precondition(lambda self: bool(self.last_primary))
        @rule(ms=st.sampled_from(STEPS_MS))
        def outage_of_last_primary(self, ms: int) -> None:
            """A network card failure on the last primary for a while (seed: same-database scenario)."""
            self.system.isolate(self.last_primary)
            self.system.advance(ms)
            self.system.heal()

        @precondition(lambda self: bool(self.last_primary))
        @rule()
        def isolate_last_primary(self) -> None:
            self.system.isolate(self.last_primary)

        @rule(i=st.integers(0, 7), new=st.booleans())
        def restart(self, i: int, new: bool) -> None:
            self.system.restart(self._server(i), new_database=new)

        @rule(new=st.booleans())
        def restart_all(self, new: bool) -> None:
            for name in self.system.servers():
                self.system.restart(name, new_database=new)

        @rule(i=st.integers(0, 7))
        def isolate(self, i: int) -> None:
            self.system.isolate(self._server(i))

        @rule()
        def heal(self) -> None:
            self.system.heal()

        @rule()
        def resubmit_everywhere(self) -> None:
            """A mailbox database failover: every server's Safety Net is asked to resubmit."""
            for name in self.system.servers():
                self.system.safetynet_resubmit(name)

        @precondition(lambda self: bool(self.last_primary))
        @rule()
        def resubmit_last_primary(self) -> None:
            self.system.safetynet_resubmit(self.last_primary)

        def _check(self) -> None:
            events = self.system.events()
            found = self.folder.feed(events[self.seen :])
            self.seen = len(events)
            if found or self.folder.malformed:
                self.failed = True
                why = [*map(str, found), *self.folder.malformed]
                raise AssertionError(f"seed {self.seed}: " + "; ".join(why) + "\n" + report(events))

        @invariant()
        def safety(self) -> None:
            if self.system is not None:
                self._check()

        def teardown(self) -> None:
            # teardown runs in a `finally`: raising again here would hide the invariant's own failure
            if self.system is not None and not self.failed:
                self.system.finish()
                self._check()

    return ShadowRedundancyMachine
