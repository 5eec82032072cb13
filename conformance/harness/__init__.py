"""The conformance suite for implementers: one harness shape for shadow redundancy, Active Manager and
public folders, a language-neutral stdin/stdout adapter, replay files, mutant kill reports and coverage.

Public entry points: `machine(mechanism, factory=None)` (a Hypothesis `RuleBasedStateMachine` over any
system built by `factory(setup)`, the model by default), `search(...)`, `driver(mechanism)`, and the stdio
adapter `systems.process_factory(mechanism, command)`. See `conformance/PROTOCOL.md`.
"""

from __future__ import annotations

from typing import Any

from conformance.harness.core import Failure, FailureLog, SystemFactory, machine_for
from conformance.harness.search import MECHANISMS, PROFILES, Outcome, driver, search


def machine(mechanism: str, factory: SystemFactory | None = None, log: FailureLog | None = None) -> Any:
    """The state machine class for `mechanism`, driving systems from `factory` (default: the model)."""
    return machine_for(driver(mechanism), factory, log)


__all__ = ["MECHANISMS", "PROFILES", "Failure", "FailureLog", "Outcome", "driver", "machine", "search"]
