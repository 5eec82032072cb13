"""What a mechanism model exports for the registry (`model.registry`): `MechanismSpec`, and `MonitorEntry`,
a monitor the checkers run that has no generator of its own (imported logs, clock skew).

It sits in the kernel, below the mechanism packages, so that each `model/<name>/mechanism.py` can build its
`MECHANISM` without importing the registry above it (layers: traces <- spec <- kernel <- mechanisms <-
registry; `tests/unit/test_layering.py`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from traces.schema import Event
from traces.verdict import Monitor

Simulate = Callable[..., list[Event]]
SkewUse = Literal["none", "optional", "required"]


def _attribute(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class Deferred:
    """A simulate function named by module and attribute, its module loaded on the first call (issue 32,
    session 14: a check, which runs monitors only, loads no simulator). The layering test reads the module
    named here as an import (tests/unit/test_layering.py), as it reads `importlib.import_module("...")`.
    Pickles as the two names; `inspect.signature` reads the loaded function's (`__wrapped__`)."""

    module: str
    name: str

    def __call__(self, *args: Any, **options: Any) -> list[Event]:
        return _attribute(self.module, self.name)(*args, **options)

    @property
    def __wrapped__(self) -> Simulate:
        return _attribute(self.module, self.name)


class DeferredTable(Mapping[str, Simulate]):
    """A mechanism's mutants, by name: attribute `name` of `module`, a mapping or a function that returns one,
    loaded on first use (`Deferred`'s reason and rule)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name
        self._table: Mapping[str, Simulate] | None = None

    def _loaded(self) -> Mapping[str, Simulate]:
        if self._table is None:
            found = _attribute(self.module, self.name)
            self._table = found if isinstance(found, Mapping) else found()
        return self._table

    def __getitem__(self, name: str) -> Simulate:
        return self._loaded()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._loaded())

    def __len__(self) -> int:
        return len(self._loaded())

    def __repr__(self) -> str:
        return f"DeferredTable({self.module!r}, {self.name!r})"


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


@dataclass(frozen=True)
class MonitorEntry:
    """A registered monitor without a generator. `make(skew_ms)` builds it; `skew`: how it takes the
    `--skew` bound ("optional": given, None when absent; "required": it runs only when a bound is given)."""

    name: str
    title: str
    make: Callable[[int | None], Monitor]
    skew: SkewUse = "optional"
