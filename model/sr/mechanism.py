"""The `MECHANISM` entry the registry loads (`model.registry`): generator, monitor, mutants and event kinds.

Importing it loads the monitor and the event kinds; the generator and the mutants are loaded on first use
(`model.kernel.mechanism.Deferred`; a check runs monitors only: issue 32, session 14).
`model/sr/__init__.py` loads this module only when `MECHANISM` is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping

from model.kernel.mechanism import Deferred, DeferredTable, MechanismSpec, Simulate
from model.sr.events import ALL_KINDS
from model.sr.monitor import monitor


def _simulate() -> Simulate:
    return importlib.import_module("model.sr.sim").simulate


def _mutants() -> Mapping[str, Simulate]:
    return importlib.import_module("model.sr.mutants").simulators()


MECHANISM = MechanismSpec(
    name="sr",
    title="Shadow redundancy (Exchange 2013 transport)",
    simulate=Deferred(_simulate),
    monitor=monitor,
    mutants=DeferredTable(_mutants),
    kinds=frozenset(ALL_KINDS),
)
