"""The seed's delay claims measured on generated runs (SR-071, SR-074, SR-I06..SR-I08, SR-I11).

The claims are stated as the model reads them: after a return with a new database the shadow promotes
within ShadowHeartbeatFrequency of the return; without contact it promotes between ShadowResubmitTimeSpan
and ShadowResubmitTimeSpan + ShadowHeartbeatFrequency after the last contact. Both hold only while the
shadow (and, for the first, the returned primary) stays up and reachable; promotions where that is not
so are skipped, not counted.
"""

from __future__ import annotations

import pytest

from model.sr import events as ev
from model.sr.sim import Workload, simulate
from spec.catalogue import param_ms

HB = param_ms("ShadowHeartbeatFrequency")
SPAN = param_ms("ShadowResubmitTimeSpan")
FAULTY = Workload(n_messages=40, fault_gap_ms=(2 * 60_000, 10 * 60_000))


def _disturbed(events, node: str, start: int, end: int) -> bool:
    """Was `node` crashed, restarted or cut off by a partition between start and end (inclusive)?"""
    for e in events:
        if not (start <= e.ts_ms <= end and e.mechanism == "core"):
            continue
        if e.kind in ("CRASH", "RESTART") and e.node == node:
            return True
        if e.kind == "PARTITION" and node in ",".join(e.attrs.get("groups", [])).split(","):
            return True
    return False


@pytest.mark.unit
def test_promotion_bounds_on_generated_runs() -> None:
    checked = {"resubmit_timespan": 0, "database_id": 0}
    for seed in range(30):
        events = simulate(seed, workload=FAULTY)
        new_db = {}  # primary -> time it returned with a new database
        for e in events:
            if e.kind == "RESTART" and e.attrs.get("storage") == "new":
                new_db[e.node] = e.ts_ms
            if e.kind != ev.PROMOTE:
                continue
            a = e.attrs
            if a["reason"] == "resubmit_timespan":
                if _disturbed(events, e.node, a["last_contact_ms"], e.ts_ms):
                    continue
                assert SPAN <= e.ts_ms - a["last_contact_ms"] <= SPAN + HB, (seed, e)
            else:
                back = new_db[a["primary"]]
                if _disturbed(events, e.node, back, e.ts_ms) or _disturbed(events, a["primary"], back + 1, e.ts_ms):
                    continue
                assert e.ts_ms - back <= HB, (seed, e)
            checked[a["reason"]] += 1
    assert min(checked.values()) > 0, checked  # both bounds were actually exercised


@pytest.mark.unit
def test_new_database_bound_from_the_outage_start_is_false() -> None:
    """Twin: measured from the start of the outage, the ShadowHeartbeatFrequency claim fails (SR-I07)."""
    worst = 0
    for seed in range(30):
        events = simulate(seed, workload=FAULTY)
        down = {}
        for e in events:
            if e.kind == "CRASH":
                down[e.node] = e.ts_ms
            if e.kind == ev.PROMOTE and e.attrs["reason"] == "database_id":
                worst = max(worst, e.ts_ms - down[e.attrs["primary"]])
    assert worst > HB
