"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the whole model; `model/pf/__init__.py` loads it only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.kernel.mechanism import MechanismSpec
from model.pf.events import ALL_KINDS
from model.pf.monitor import monitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate

MECHANISM = MechanismSpec(
    name="pf",
    title="Public folder replication, backfill, adding and deleting replicas (Exchange 2003)",
    simulate=simulate,
    monitor=monitor,
    mutants=MUTANTS,
    kinds=ALL_KINDS,
)
