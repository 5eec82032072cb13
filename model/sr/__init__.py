"""Shadow redundancy (Exchange Server 2013 transport), seed 000_bc7da9fde6232d0b.txt.

The package is the reference model of `spec/requirements/sr.toml`: `rules.py` (pure transition rules),
`cluster.py` and `sim.py` (the generator on the kernel), `monitor.py` (the trace monitor, same rules),
`properties.py`, `protocol.py`, `mutants.py`. See `README.md`.
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
