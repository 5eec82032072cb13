"""Public folder replication, backfill and replica lifecycle (Exchange Server 2003; seeds 001, 003, 004)."""

from model.pf.events import ALL_KINDS
from model.pf.monitor import monitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate
from model.registry import MechanismSpec

MECHANISM = MechanismSpec(
    name="pf",
    title="Public folder replication, backfill, adding and deleting replicas (Exchange 2003)",
    simulate=simulate,
    monitor=monitor,
    mutants=MUTANTS,
    kinds=ALL_KINDS,
)
