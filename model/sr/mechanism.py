"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the whole model; `model/sr/__init__.py` loads it only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.kernel.mechanism import MechanismSpec
from model.sr.events import ALL_KINDS
from model.sr.monitor import monitor
from model.sr.mutants import simulators
from model.sr.sim import simulate

MECHANISM = MechanismSpec(
    name="sr",
    title="Shadow redundancy (Exchange 2013 transport)",
    simulate=simulate,
    monitor=monitor,
    mutants=simulators(),
    kinds=frozenset(ALL_KINDS),
)
