"""Planted bugs, one per invariant of `properties.py`: each must be caught by the monitor.

Seed 002. A mutant is the reference generator run with one flaw switched on in the shared rules
(`rules.py`, `actions.py`); the flaw names and the property each one breaks are listed in `MUTANTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from model.am.sim import simulate
from spec.catalogue import require
from traces.schema import Event

# mutant name -> (flaw, the monitor rule that must catch it, requirement ID)
MUTANTS: dict[str, tuple[str, str, str]] = {
    "activate-without-dial": ("no_dial", "dial", "AM-024"),
    "sam-activates": ("sam_activates", "only-pam-activates", "AM-008"),
    "ignore-blocked": ("ignore_blocked", "never-blocked", "AM-034"),
    "second-pam-after-partition": ("second_pam", "single-pam", "AM-005"),
    "wrong-order": ("wrong_order", "selection-order", "AM-039"),
    "ignore-responder-constraint": ("ignore_responder", "responder-target", "AM-032"),
    "no-pam-move-before-maintenance": ("no_pam_move", "pam-before-maintenance", "AM-007"),
}
require(*(req for _, _, req in MUTANTS.values()))


def _mutant(flaw: str, seed: int, **opts: Any) -> list[Event]:
    return simulate(seed, flaws=frozenset({flaw}), **opts)


SIMULATORS: dict[str, Callable[..., list[Event]]] = {
    name: partial(_mutant, flaw) for name, (flaw, _, _) in MUTANTS.items()
}
