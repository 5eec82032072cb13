"""Named invariants of shadow redundancy, each with its requirement ID, kind and fairness assumption.

Seed 000. `always` properties are safety rules checked by `rules.step` on every event; `eventually`
properties are liveness rules checked at a quiesced end of run; `sometimes` properties say the model
can reach an interesting state at all (a model that never promotes would pass every safety rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from model.sr import events as ev
from model.sr.rules import RULES
from spec.catalogue import require
from traces.schema import Event

FAIRNESS = (
    "every crashed server is eventually restarted (same or new storage), every partition heals, and "
    "the run then continues for ShadowResubmitTimeSpan + 3 x ShadowHeartbeatFrequency plus the "
    "slowest next hop and the sender's retries; at most one of a message's two copy holders "
    "loses its transport database (SR-017)"
)


@dataclass(frozen=True)
class Property:
    name: str  # the rule name used in violations
    kind: str  # always | eventually
    requirement: str
    statement: str


_EVENTUALLY = {"no-loss", "shadow-released"}
_TEXT = {
    "shadow-before-ack": "the sender is acknowledged only after the shadow server acknowledged the copy",
    "reject-required": "with RejectMessageOnShadowFailure no message is accepted without a shadow",
    "shadow-while-inbound-open": "the shadow session is opened while the sender's session is open",
    "shadow-in-boundary": "the shadow lives on another server of the primary's boundary",
    "shadow-placement": "shadow attempts follow ShadowMessagePreference and the retry counts",
    "shadow-disabled": "no shadow is made when shadow redundancy is disabled",
    "shadow-ack-after-store": "a shadow acknowledgement follows the shadow's store",
    "failure-outcome": "a failed shadow leads to reject or accept exactly as configured",
    "rejection-text": "the rejection is exactly 451 4.4.0 Message failed to be made redundant",
    "no-xshadow-advertised": "a 2013 server never advertises XSHADOW",
    "no-premature-discard": "a fork's discard notification follows its processing by the primary",
    "all-forks-before-release": "the shadow is released only after every fork's discard notification",
    "primary-keeps-copy": "the primary keeps its copy until every fork is processed",
    "promotion-timing": "a shadow takes ownership only after ShadowResubmitTimeSpan without contact",
    "promotion-db-change": "a database-ID promotion needs a changed database ID",
    "no-safetynet-resubmit-across-boundary": "Safety Net never resubmits what crossed the boundary",
    "no-safetynet-resubmit-to-2010": "Safety Net never resubmits to an Exchange 2010 Hub",
    "duplicates-documented": "a second delivery happens only in a documented scenario",
    "duplicate-hidden-from-mailbox": "duplicates never reach Exchange mailbox users",
    "shadow-expiry": "unacknowledged shadows expire no earlier than SafetyNetHoldTime + MessageExpirationTimeout",
    "no-loss": "every accepted message reaches all its destinations unless both copy holders lost their database",
    "heartbeat-frequency": "a shadow queries each primary it holds shadows for at least every ShadowHeartbeatFrequency",
    "queue-expiry": "queued forks expire no earlier than MessageExpirationTimeout after arrival",
    "shadow-released": "every shadow of a fully processed message is eventually released (discard persisted)",
}
PROPERTIES = {
    name: Property(name, "eventually" if name in _EVENTUALLY else "always", req, _TEXT[name])
    for name, req in RULES.items()
}
require(*(p.requirement for p in PROPERTIES.values()))

# `sometimes`: event kinds a healthy batch of runs must contain (the model can progress)
SOMETIMES = {
    ev.HARECEIVE: "SR-030",
    ev.HADISCARD: "SR-062",
    ev.PROMOTE: "SR-058",
    ev.DUPLICATEDELIVER: "SR-073",
    ev.REJECT: "SR-020",
    ev.LOST: "SR-068",
    ev.RESUBMIT: "SR-033",
    ev.DISCARD_NOTIFY: "SR-056",
}
require(*SOMETIMES.values())


def reached(events: Iterable[Event]) -> Counter[str]:
    return Counter(e.kind for e in events if e.mechanism == ev.MECH and e.kind in SOMETIMES)
