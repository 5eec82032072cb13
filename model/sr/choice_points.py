"""The choice points of the shadow redundancy model (issue 33): every random decision the *system* makes.

Seed 000 leaves these open; the model resolves each through `sim.choices` (`model.kernel.choice`) under one of
the labels below: seeded in simulation (drawing exactly as the direct `rng` calls did, so traces are
byte-identical), scripted in exploration (every allowed outcome, ranges at their ends by default). The
environment's choices (topology, workload, faults: `model/sr/sim.py`) are not here: the explorer's actions
replace them. A choice with one allowed outcome (one eligible server, a probability of 0) is no choice.
`model/sr/README.md`, "Choice points", says what each decides and which seed section allows its outcomes.
"""

from __future__ import annotations

SHADOW_SERVER = "sr.shadow-server"  # which eligible server of the attempt's site class takes the shadow (SR-028)
SHADOW_STALL = "sr.shadow-stall"  # the shadow session stalls until ConnectionInactivityTimeout (SR-039)
SHADOW_SLOW = "sr.shadow-slow"  # the shadow session transfers slowly (up to 6 minutes)
SHADOW_LATENCY = "sr.shadow-latency"  # how long a normal shadow session takes
SHADOW_SLOW_LATENCY = "sr.shadow-slow-latency"  # how long a slow shadow session takes
ACK_LOST = "sr.ack-lost"  # the 250 to the sender is lost: the sender's session times out (SR-042)
RETRY_SERVER = "sr.retry-server"  # which server of the boundary the sender's redelivery reaches (SR-042)
RETRY_DELAY = "sr.retry-delay"  # when the sender transmits again
HOP_SLOW = "sr.hop-slow"  # a fork's next hop is slow
HOP_LATENCY = "sr.hop-latency"  # how long a fork takes to its next hop
HOP_SLOW_LATENCY = "sr.hop-slow-latency"  # how long a fork takes to a slow next hop
HEARTBEAT_PHASE = "sr.heartbeat-phase"  # when a server's first heartbeat comes after it (re)starts (SR-054)

LABELS = (
    SHADOW_SERVER,
    SHADOW_STALL,
    SHADOW_SLOW,
    SHADOW_LATENCY,
    SHADOW_SLOW_LATENCY,
    ACK_LOST,
    RETRY_SERVER,
    RETRY_DELAY,
    HOP_SLOW,
    HOP_LATENCY,
    HOP_SLOW_LATENCY,
    HEARTBEAT_PHASE,
)
