"""Public folder replication, backfill and replica lifecycle (Exchange Server 2003; seeds 001, 003, 004)."""

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
