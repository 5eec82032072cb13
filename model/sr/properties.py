"""Named invariants of shadow redundancy, each with its requirement ID, kind and fairness assumption.

Seed 000. `always` properties are safety rules checked by `step.step` on every event; `eventually`
properties are liveness rules checked at a quiesced end of run; `sometimes` properties say the model
can reach an interesting state at all (a model that never promotes would pass every safety rule).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

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


require(*(p.requirement for p in RULES.values()))

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
