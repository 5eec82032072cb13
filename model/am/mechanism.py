"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the whole model; `model/am/__init__.py` loads it only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.am.events import KINDS
from model.am.monitor import AmMonitor
from model.am.mutants import SIMULATORS
from model.am.sim import simulate
from model.kernel.mechanism import MechanismSpec

MECHANISM = MechanismSpec(
    name="am",
    title="Active Manager and best copy and server selection",
    simulate=simulate,
    monitor=AmMonitor,
    mutants=SIMULATORS,
    kinds=KINDS,
)
