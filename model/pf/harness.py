"""Compatibility shim: the public folder state machine now lives in the conformance suite.

`conformance.harness.machine("pf", factory)` is the one harness shape for every mechanism (its driver is
`conformance/harness/pf.py`, with the same steps, faults and end-of-run convergence check as before).
This module keeps the old names for code that still imports them; the import of the harness is deferred
so that the model package does not depend on the conformance suite at import time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.kernel.sim import MINUTE
from model.pf.protocol import PublicFolderSystem

STORES = ["A", "B", "C"]
SERVERS = [("A", "rg0", "2003"), ("B", "rg0", "5.5"), ("C", "rg1", "2000")]
LINKS = [("rg0", "rg1", 7)]
LATENCY_MAX_MS = 2 * MINUTE

Factory = Callable[[int], PublicFolderSystem]


def model_factory(**kw: object) -> Factory:
    from model.pf.sim import build_fixed

    return lambda seed: build_fixed(seed, SERVERS, LINKS, latency_ms=(1_000, LATENCY_MAX_MS), **kw)  # type: ignore[arg-type]


def make_machine(factory: Factory, *, faults: bool = True) -> Any:
    """The harness's pf state machine over systems built by `factory(seed)`; `faults=False` keeps every
    run free of outages, loss and restores."""
    from conformance.harness import pf as driver_module
    from conformance.harness.core import machine_for

    drv = driver_module.PfDriver()
    if not faults:
        drv.setup = drv.setup.map(lambda s: {**s, "faults": False})  # type: ignore[misc]
    return machine_for(drv, lambda setup: factory(setup["seed"]))
