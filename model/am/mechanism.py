"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the monitor and the event kinds; the generator and the mutants are loaded on first use
(`model.kernel.mechanism.Deferred`; a check runs monitors only: issue 32, session 14).
`model/am/__init__.py` loads this module only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.am.events import KINDS
from model.am.monitor import AmMonitor
from model.kernel.mechanism import Deferred, DeferredTable, MechanismSpec

MECHANISM = MechanismSpec(
    name="am",
    title="Active Manager and best copy and server selection",
    simulate=Deferred("model.am.sim", "simulate"),
    monitor=AmMonitor,
    mutants=DeferredTable("model.am.mutants", "SIMULATORS"),
    kinds=KINDS,
)
