"""Shadow redundancy (Exchange Server 2013 transport), seed 000_bc7da9fde6232d0b.txt.

The package is the reference model of `spec/requirements/sr.toml`: `rules.py` (pure transition rules),
`cluster.py` and `sim.py` (the generator on the kernel), `monitor.py` (the trace monitor, same rules),
`properties.py`, `protocol.py`, `mutants.py`. See `README.md`.
"""

from __future__ import annotations

from model.registry import MechanismSpec
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
