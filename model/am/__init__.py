"""Active Manager and best copy and server selection (seed 002_46acbb50977df48d.txt).

Exports `MECHANISM` for the registry: the generator (`sim.simulate`), the trace monitor
(`monitor.AmMonitor`) and the mutants (`mutants.SIMULATORS`). See `README.md`.
"""

from __future__ import annotations

from model.am.events import KINDS
from model.am.monitor import AmMonitor
from model.am.mutants import SIMULATORS
from model.am.sim import simulate
from model.registry import MechanismSpec

MECHANISM = MechanismSpec(
    name="am",
    title="Active Manager and best copy and server selection",
    simulate=simulate,
    monitor=AmMonitor,
    mutants=SIMULATORS,
    kinds=KINDS,
)
