"""The rule catalogue of the shadow redundancy monitor: rule name -> requirement ID, and `Breach`.

Seed 000. Every rule the fold (`rules.py`) and the end-of-run checks (`liveness.py`) can report is
listed here with the requirement it enforces; `require` fails at import if an ID is not in the catalogue.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.catalogue import require
from traces.schema import Event

RULES: dict[str, str] = {
    "shadow-before-ack": "SR-031",
    "reject-required": "SR-021",
    "shadow-while-inbound-open": "SR-028",
    "shadow-in-boundary": "SR-015",
    "shadow-placement": "SR-044",
    "shadow-disabled": "SR-018",
    "shadow-ack-after-store": "SR-030",
    "failure-outcome": "SR-040",
    "rejection-text": "SR-020",
    "no-xshadow-advertised": "SR-036",
    "no-premature-discard": "SR-062",
    "all-forks-before-release": "SR-063",
    "primary-keeps-copy": "SR-007",
    "promotion-timing": "SR-058",
    "promotion-db-change": "SR-059",
    "no-safetynet-resubmit-across-boundary": "SR-033",
    "no-safetynet-resubmit-to-2010": "SR-038",
    "duplicates-documented": "SR-076",
    "duplicate-hidden-from-mailbox": "SR-073",
    "shadow-expiry": "SR-066",
    "no-loss": "SR-075",
    "shadow-released": "SR-057",
    "heartbeat-frequency": "SR-055",
    "queue-expiry": "SR-067",
}
require(*RULES.values(), "SR-045", "SR-046", "SR-047", "SR-016", "SR-029")


@dataclass(frozen=True, slots=True)
class Breach:
    rule: str
    event_ids: tuple[str, ...]
    explanation: str

    @property
    def requirement(self) -> str:
        return RULES[self.rule]


def breach(rule: str, evs: tuple[Event, ...], why: str) -> Breach:
    return Breach(rule, tuple(e.event_id for e in evs), why)
