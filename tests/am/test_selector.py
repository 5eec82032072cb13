"""Decision-by-decision comparison of a `BestCopySelector` with the reference `select` (seed 002, BCSS).

The reference passes against itself through the JSON stdin/stdout protocol (`model.am.codec`), which checks
the codec; a legacy BCS selector (criteria sets only, no health tiers, no responder constraint) is the
twin that must be found to disagree."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from model.am.bcss import CRITERIA, candidates, meets, sort_candidates, sort_mode
from model.am.codec import ProcessSelector, snapshot_from_json, snapshot_to_json
from model.am.protocol import BestCopySelector, ReferenceSelector
from model.am.state import Snapshot, Trigger
from tests.am.test_bcss_properties import options, snapshots, triggers

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]


class LegacyBcs:
    """Exchange 2010 style: the ten criteria sets over the sorted candidates, no health checks."""

    def select(self, snapshot: Snapshot, trigger: Trigger) -> Sequence[str]:
        from model.am.bcss import default_options

        opts = default_options()
        cands, _ = candidates(snapshot, Trigger(), opts)
        ordered = sort_candidates(cands, snapshot, sort_mode(snapshot, trigger))
        out: list[str] = []
        for n in CRITERIA:
            out += [c.server for c in ordered if c.server not in out and meets(c, n, snapshot.last_log_generated, opts)]
        return out


@given(snapshots(), triggers)
def test_json_round_trip(snap: Snapshot, trigger: Trigger) -> None:
    assert snapshot_from_json(snapshot_to_json(snap)) == snap


def test_reference_over_stdin_stdout_agrees() -> None:
    proc = ProcessSelector([sys.executable, "-m", "model.am.codec"], cwd=str(ROOT))
    ref = ReferenceSelector()
    assert isinstance(proc, BestCopySelector) and isinstance(ref, BestCopySelector)
    try:

        @settings(max_examples=60)
        @given(snapshots(), triggers)
        def agree(snap: Snapshot, trigger: Trigger) -> None:
            assert list(proc.select(snap, trigger)) == list(ref.select(snap, trigger))

        agree()
    finally:
        proc.close()


def test_legacy_bcs_is_found_to_disagree() -> None:
    from hypothesis import find

    ref, legacy = ReferenceSelector(), LegacyBcs()
    snap, trigger = find(
        st.tuples(snapshots(), triggers),
        lambda x: list(legacy.select(*x)) != list(ref.select(*x)),
        settings=settings(max_examples=2000, database=None, phases=[Phase.generate]),
    )
    assert list(legacy.select(snap, trigger)) != list(ref.select(snap, trigger))


@given(snapshots(), triggers, options)
def test_reference_selector_is_select(snap: Snapshot, trigger: Trigger, opts) -> None:
    from model.am.bcss import select

    assert list(ReferenceSelector(opts).select(snap, trigger)) == list(select(snap, trigger, opts).servers)
