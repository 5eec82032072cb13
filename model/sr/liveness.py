"""End-of-run and heartbeat rules: what must eventually happen, and how often the shadow must ask.

Seed 000, "How shadow messages are maintained" (SR-055, SR-057) and "Message processing after an outage"
(SR-075). Liveness is judged at the harness's SNAPSHOT record of a quiesced run; the fairness assumed is
`properties.FAIRNESS`. The heartbeat rule reads one shadow/primary pair's XQUERYDISCARD record.
"""

from __future__ import annotations

from itertools import pairwise

from model.sr import events as ev
from model.sr.breaches import Breach, breach
from model.sr.state import MessageView
from traces.schema import Event


def final_breaches(mv: MessageView, e: Event) -> list[Breach]:
    """Liveness at a quiesced end of run (SR-075, SR-057): fairness assumed = every crashed server was
    restarted, partitions healed, and the run continued for ShadowResubmitTimeSpan plus two heartbeats."""
    if not e.attrs.get("quiesced"):
        return []
    out = []
    for iv in mv.insts:
        if iv.outcome != "accepted":
            continue
        missing = sorted(set(iv.forks) - mv.delivered - iv.expired)
        shadow_gone = iv.shadow_state in ("lost", "expired", "none", "released")
        excused = iv.primary_lost and (not iv.redundant or shadow_gone)
        if missing and not excused:
            out.append(
                breach(
                    "no-loss",
                    (e,),
                    f"instance {iv.inst} was accepted but forks {missing} never reached "
                    "their destination although at most one of its copies was destroyed",
                )
            )
        if (
            iv.shadow_state == "held"
            and set(iv.forks) <= iv.processed
            and not iv.primary_lost
            and "auto-discard" not in mv.licences
        ):
            out.append(
                breach(
                    "shadow-released",
                    (e,),
                    f"instance {iv.inst} was fully processed but its shadow on {iv.shadow} was never released",
                )
            )
    return out


def heartbeat_breaches(events: list[Event]) -> list[Breach]:
    """One shadow's XQUERYDISCARD record towards one primary (entity `hb:<shadow>><primary>`): while it
    still holds shadows for that primary, the next query of the same service run comes within
    ShadowHeartbeatFrequency (SR-055, SR-I05)."""
    out = []
    for a, b in pairwise(events):
        if a.kind != ev.XQUERYDISCARD or b.kind != ev.XQUERYDISCARD:
            continue
        gap = b.ts_ms - a.ts_ms
        if a.attrs.get("held") and a.attrs.get("boot_ms") == b.attrs.get("boot_ms") and gap > a.attrs["heartbeat_ms"]:
            out.append(
                breach(
                    "heartbeat-frequency",
                    (a, b),
                    f"{a.node} waited {gap} ms between queries to "
                    f"{a.attrs['primary']} while holding shadows for it, more than ShadowHeartbeatFrequency "
                    f"({a.attrs['heartbeat_ms']} ms)",
                )
            )
    return out
