"""The registry of mechanism models: how the CLI and the checkers find simulators and monitors.

Each mechanism package `model/<name>/` exports `MECHANISM = MechanismSpec(...)` from its `mechanism`
module. The registry imports the packages it knows of; a mechanism not yet built is simply absent. It owns
the one list of monitors every checker runs (`monitor_runs`): the mechanisms' monitors, then the monitors
without a generator (`ENTRIES`: imported message tracking logs, and clock skew when a bound is given).
The kernel's own network workload (`net`, mechanism `core`) is always present: it exercises the kernel
and the mechanism-independent rules.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache, lru_cache, partial
from typing import Any

from model.kernel.mechanism import Deferred, DeferredTable, MechanismSpec, MonitorEntry, Simulate
from model.msgtrk.mechanism import ENTRY as MSGTRK
from model.skew.mechanism import ENTRY as SKEW
from traces.schema import Event
from traces.verdict import Monitor

__all__ = [
    "MechanismSpec",
    "MonitorEntry",
    "Simulate",
    "get",
    "mechanisms",
    "monitor_factories",
    "monitor_runs",
    "monitors",
    "vocabulary",
]
KNOWN = ("sr", "am", "pf")
ENTRIES: tuple[MonitorEntry, ...] = (MSGTRK, SKEW)  # monitors without a generator, after the mechanisms'


# the kernel's workload (`model.kernel.workload`), loaded on first use: a check loads no simulator (session 14)
NET = MechanismSpec(
    name="net",
    title="Kernel network workload (mechanism-independent rules only)",
    simulate=Deferred("model.kernel.workload", "simulate"),
    monitor=None,
    mutants=DeferredTable("model.kernel.workload", "MUTANTS"),
    trace_mechanism="core",
)


def _load(name: str) -> MechanismSpec | None:
    try:
        module = importlib.import_module(f"model.{name}.mechanism")
    except ModuleNotFoundError as exc:
        if exc.name in (f"model.{name}", f"model.{name}.mechanism"):
            return None
        raise
    spec = getattr(module, "MECHANISM", None)
    if not isinstance(spec, MechanismSpec):
        raise TypeError(f"model.{name}.mechanism does not export MECHANISM = MechanismSpec(...)")
    return spec


@lru_cache(maxsize=1)
def mechanisms() -> dict[str, MechanismSpec]:
    """Every available mechanism model, by name (`net` first, then the known mechanisms present)."""
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


def monitor_factories(skew_ms: int | None = None) -> list[tuple[str, Callable[[], Monitor]]]:
    """The one monitor list every checker runs (`conformance.check`, the single-process and Spark engines,
    the dataset check), as (name, factory): each mechanism that has a monitor, then each entry of `ENTRIES`
    (msgtrk always; skew only when a bound `skew_ms` is given). A factory pickles (Spark ships it to its
    executors) and builds a fresh monitor."""
    runs = [(name, partial(_make, name, skew_ms)) for name, spec in mechanisms().items() if spec.monitor is not None]
    runs += [(e.name, partial(_make, e.name, skew_ms)) for e in ENTRIES if e.skew != "required" or skew_ms is not None]
    return runs


def monitor_runs(skew_ms: int | None = None) -> list[tuple[str, Monitor]]:
    """(name, fresh monitor) for each entry of `monitor_factories`."""
    return [(name, make()) for name, make in monitor_factories(skew_ms)]


def _make(name: str, skew_ms: int | None) -> Monitor:
    for entry in ENTRIES:
        if entry.name == name:
            return entry.make(skew_ms)
    factory = get(name).monitor
    if factory is None:
        raise KeyError(f"mechanism {name!r} has no monitor")
    return factory()


def monitors(skew_ms: int | None = None) -> list[Monitor]:
    """The monitors of `monitor_runs`, without their names."""
    return [monitor for _, monitor in monitor_runs(skew_ms)]


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
