"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the monitor and the event kinds; the generator and the mutants are loaded on first use
(`model.kernel.mechanism.Deferred`; a check runs monitors only: issue 32, session 14).
`model/pf/__init__.py` loads this module only when `MECHANISM` is asked for.
"""

from __future__ import annotations

from model.kernel.mechanism import Deferred, DeferredTable, MechanismSpec
from model.pf.events import ALL_KINDS
from model.pf.monitor import monitor

MECHANISM = MechanismSpec(
    name="pf",
    title="Public folder replication, backfill, adding and deleting replicas (Exchange 2003)",
    simulate=Deferred("model.pf.sim", "simulate"),
    monitor=monitor,
    mutants=DeferredTable("model.pf.mutants", "MUTANTS"),
    kinds=ALL_KINDS,
)
