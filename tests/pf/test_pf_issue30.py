"""Issue 30's public folder monitor families, each case beside its twin (hand-built traces, seed 003).

Family 2, key 1 of backfill source selection in every form the record shows a server down or unavailable
(BF-011, BF-014, BF-I07, BF-I16): a crash not followed by a restart, a partition in force. Family 3, the
"new folder replica" delay of seed 001's schedule read every way the seeds allow (BF-008, BF-I17).
"""

from __future__ import annotations

import pytest

from conformance.check import verdict
from tests.traces9.pf.builder import Step, build, recv, send
from tests.traces9.pf.scenarios import BREQ, BRESP, F, backfill_steps


def _cut(steps: list[Step], minute: float) -> list[Step]:
    """The steps up to (and including) `minute`."""
    return [s for s in steps if s[0] <= minute]


def _asking(source: str, *extra: Step) -> list[Step]:
    """`backfill_steps` with `extra` recorded after B's last status at 14 min, then B's check at 28 min asking
    `source` for A#0:4 (A and C tie on all five keys by the configuration)."""
    return [
        *_cut(backfill_steps(), 14),
        *extra,
        (28, "B", F, "BACKFILL", {"requests": [f"{source}=A#0:4"]}),
        send(28, "B", F, "b1", BREQ, [source], [], request=["A#0:4"], reason="backfill"),
    ]


def _answered(source: str, *extra: Step) -> list[Step]:
    return [
        *_asking(source, *extra),
        recv(29, source, F, "b1"),
        send(29, source, F, "r1", BRESP, ["B"], ["A#0:4"], ["A#0:4"], reply_to="b1", reason="backfill_response"),
        recv(30, "B", F, "r1"),
    ]


CRASH_C = (14, "C", "C", "CRASH", {})
RESTART_C = (20, "C", "C", "RESTART", {"storage": "same", "storage_epoch": 0})
CRASH_A = (14, "A", "A", "CRASH", {})
SPLIT_C = (14, "sim", "network", "PARTITION", {"groups": ["C"]})
HEAL = (20, "sim", "network", "HEAL", {})

SOURCE_CASES: list[tuple[str, list[Step], set[str]]] = [
    # the case: C crashed 14 minutes before the request and has not restarted; A is up and ties
    ("asks-crashed-store-over-up-one", _asking("C", CRASH_C), {"backfill-source-order"}),
    ("asks-up-store-while-other-crashed", _answered("A", CRASH_C), set()),
    ("asks-store-restarted-before-request", _answered("C", CRASH_C, RESTART_C), set()),
    ("asks-crashed-store-when-all-holders-down", _asking("C", CRASH_C, CRASH_A), set()),
    ("asks-partitioned-store-over-reachable-one", _asking("C", SPLIT_C), {"backfill-source-order"}),
    ("asks-reachable-store-during-partition", _answered("A", SPLIT_C), set()),
    ("asks-store-after-partition-healed", _answered("C", SPLIT_C, HEAL), set()),
    ("asks-tied-store-nobody-down", _answered("C"), set()),
]


@pytest.mark.unit
@pytest.mark.parametrize(("name", "steps", "expected"), SOURCE_CASES, ids=[c[0] for c in SOURCE_CASES])
def test_down_or_unavailable_sorts_last(name: str, steps: list[Step], expected: set[str]) -> None:
    """Family 2: a crashed (not restarted) or partitioned-away holder is asked only when no up holder that ties
    on the other keys is; the twins (a restart or a heal before the check, the up store asked) are clean."""
    result = verdict(build(name, steps))
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    if expected:
        assert any("crashed" in v.explanation or "partition" in v.explanation for v in result.violations)
