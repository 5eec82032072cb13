"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the monitor and the event kinds; the generator and the mutants are loaded on first use
(`model.kernel.mechanism.Deferred`; a check runs monitors only: issue 32, session 14).
`model/sr/__init__.py` loads this module only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.kernel.mechanism import Deferred, DeferredTable, MechanismSpec
from model.sr.events import ALL_KINDS
from model.sr.monitor import monitor

MECHANISM = MechanismSpec(
    name="sr",
    title="Shadow redundancy (Exchange 2013 transport)",
    simulate=Deferred("model.sr.sim", "simulate"),
    monitor=monitor,
    mutants=DeferredTable("model.sr.mutants", "simulators"),
    kinds=frozenset(ALL_KINDS),
)
