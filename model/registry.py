"""The registry of mechanism models: how the CLI and the checkers find simulators and monitors.

Each mechanism package `model/<name>/` exports `MECHANISM = MechanismSpec(...)`. The registry imports
the packages it knows of; a mechanism not yet built is simply absent. The kernel's own network workload
(`net`, mechanism `core`) is always present: it exercises the kernel and the mechanism-independent rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from typing import Any

from traces.schema import Event
from traces.verdict import Monitor

Simulate = Callable[..., list[Event]]
KNOWN = ("sr", "am", "pf")


@dataclass(frozen=True)
class MechanismSpec:
    name: str
    title: str
    simulate: Simulate  # simulate(seed: int, **options) -> events; deterministic in the seed
    monitor: Callable[[], Monitor] | None = None
    mutants: Mapping[str, Simulate] = field(default_factory=dict)
    trace_mechanism: str = ""  # value of the `mechanism` column this model records ("" = same as name)
    kinds: frozenset[str] = frozenset()  # every event kind of this mechanism (empty: no vocabulary checked)

    @property
    def records(self) -> str:
        return self.trace_mechanism or self.name


def _load(name: str) -> MechanismSpec | None:
    try:
        module = importlib.import_module(f"model.{name}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"model.{name}",):
            return None
        raise
    spec = getattr(module, "MECHANISM", None)
    if not isinstance(spec, MechanismSpec):
        raise TypeError(f"model.{name} does not export MECHANISM = MechanismSpec(...)")
    return spec


@lru_cache(maxsize=1)
def mechanisms() -> dict[str, MechanismSpec]:
    """Every available mechanism model, by name (`net` first, then the known mechanisms present)."""
    from model.kernel.workload import NET

    found: dict[str, MechanismSpec] = {"net": NET}
    for name in KNOWN:
        spec = _load(name)
        if spec is not None:
            found[name] = spec
    return found


def get(name: str) -> MechanismSpec:
    found = mechanisms()
    if name not in found:
        raise KeyError(f"unknown mechanism {name!r}; available: {', '.join(found)}")
    return found[name]


def monitors() -> list[Monitor]:
    """One monitor instance per mechanism that has one."""
    return [spec.monitor() for spec in mechanisms().values() if spec.monitor is not None]


def simulate(name: str, seed: int, **options: Any) -> list[Event]:
    return get(name).simulate(seed, **options)


@cache
def vocabulary(mechanism: str) -> frozenset[str] | None:
    """The event kinds a mechanism's monitor knows (by the trace's `mechanism` value); None when the
    mechanism has no registered vocabulary (its events are not checked for unknown kinds). A package named
    like the mechanism is loaded alone (a check of one mechanism does not import the others)."""
    if mechanism in KNOWN:
        spec = _load(mechanism)
        if spec is not None and spec.records == mechanism:
            return spec.kinds or None
    return _vocabularies().get(mechanism)


@lru_cache(maxsize=1)
def _vocabularies() -> dict[str, frozenset[str]]:
    return {spec.records: spec.kinds for spec in mechanisms().values() if spec.kinds}
