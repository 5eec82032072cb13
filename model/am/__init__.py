"""Active Manager and best copy and server selection (seed 002_46acbb50977df48d.txt).

Exports `MECHANISM` for the registry: the generator (`sim.simulate`), the trace monitor
(`monitor.AmMonitor`) and the mutants (`mutants.SIMULATORS`). See `README.md`.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["MECHANISM"]


def __getattr__(name: str) -> Any:
    """`MECHANISM` on first use (PEP 562): importing a submodule such as `state` loads no monitor,
    simulator or mutant."""
    if name == "MECHANISM":
        return importlib.import_module(f"{__name__}.mechanism").MECHANISM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
