"""What a mechanism model exports for the registry (`model.registry`): `MechanismSpec`, and `MonitorEntry`,
a monitor the checkers run that has no generator of its own (imported logs, clock skew).

It sits in the kernel, below the mechanism packages, so that each `model/<name>/mechanism.py` can build its
`MECHANISM` without importing the registry above it (layers: traces <- spec <- kernel <- mechanisms <-
registry; `tests/unit/test_layering.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from traces.schema import Event
from traces.verdict import Monitor

Simulate = Callable[..., list[Event]]
SkewUse = Literal["none", "optional", "required"]


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
