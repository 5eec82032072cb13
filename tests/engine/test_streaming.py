"""The single-process engine streams groups of whole traces: the report must not depend on the grouping.

Each corpus is checked read once whole (`pycheck.ONCE_EVENTS`: every trace held), as one streamed unit, and
with units of a few events (every trace alone, files read several times); summaries, violations (with
their events), quarantine and unknown groups must be identical. Twins: a duplicate event ID planted
across two groups must be found (TR-002), and a valid row the trace index missed must be an internal
error, never a dropped row.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance import pycheck
from conformance.engine import trace_index
from conformance.engine.driver import InternalError
from conformance.engine.units import plan_units
from tests.damaged.corpus import CASES
from traces.corpus import SAMPLES_DIR
from traces.io import read_events, write_events

pytestmark = pytest.mark.unit


def _report(paths: list[str], group_events: int, once: int = pycheck.ONCE_EVENTS) -> dict:
    """The report of a check; `once` 0: never read once whole (the corpus is indexed and read in units)."""
    saved, pycheck.ONCE_EVENTS = pycheck.ONCE_EVENTS, once
    try:
        outcome = pycheck.check_paths(paths, group_events=group_events)
    finally:
        pycheck.ONCE_EVENTS = saved
    return {
        "summary": outcome.summary(),
        "violations": outcome.violations,
        "quarantine": outcome.quarantine,
        "unknown": outcome.unknown,
    }


@pytest.mark.parametrize("corpus", ["clean", pytest.param("mutants", marks=pytest.mark.model)])
def test_grouping_does_not_change_the_report(corpus):
    paths = [str(SAMPLES_DIR / corpus)]
    whole = _report(paths, 10**9)
    split = _report(paths, 1)
    assert whole == split
    assert _report(paths, 10**9, once=0) == whole  # one streamed unit
    if corpus == "mutants":
        assert whole["summary"]["violations_total"] > 0  # the comparison is not between two empty reports


@pytest.mark.parametrize("case", [c for c in CASES if c.exit != 2], ids=lambda c: c.name)
def test_grouping_does_not_change_damaged_reports(case, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    args = [a for a in case.build(src) if not a.startswith("--")]
    whole = _report(args, 10**9)
    assert whole == _report(args, 1) == _report(args, 10**9, once=0)


def test_duplicate_id_across_groups_is_found(tmp_path, monkeypatch):
    a = read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events
    b = read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events
    stolen = a[5].event_id
    b = [
        e if i != 7 else type(e)(**{**{s: getattr(e, s) for s in e.__slots__}, "event_id": stolen})
        for i, e in enumerate(b)
    ]
    write_events(tmp_path / "a.jsonl", a)
    write_events(tmp_path / "b.parquet", b)
    for group_events, once in ((1, 0), (10**9, 0), (10**9, pycheck.ONCE_EVENTS)):
        monkeypatch.setattr(pycheck, "ONCE_EVENTS", once)
        outcome = pycheck.check_paths([str(tmp_path)], group_events=group_events)
        dup = [v for v in outcome.violations if v["rule"] == "event-id-unique"]
        assert [v["event_ids"] for v in dup] == [[stolen]], group_events
        assert dup[0]["trace_id"] == a[5].trace_id and len(dup[0]["events"]) == 2
        assert dup[0]["explanation"] == f"event ID {stolen} appears 2 times"


def test_a_row_missed_by_the_index_is_an_internal_error(tmp_path, monkeypatch):
    shutil.copy(SAMPLES_DIR / "clean" / "net-s1.jsonl", tmp_path / "t.jsonl")
    monkeypatch.setattr(trace_index, "_jsonl_trace", lambda line: "elsewhere")
    monkeypatch.setattr(pycheck, "ONCE_EVENTS", 0)  # the index is read first
    with pytest.raises(InternalError, match="missed by the trace index"):
        pycheck.check_paths([str(tmp_path)])


def test_jsonl_index_reads_the_top_level_trace_id():
    row = {"schema_version": 1, "attrs": {"trace_id": "inner"}, "trace_id": 'outer\\"x'}
    assert trace_index._jsonl_trace(json.dumps(row).encode()) == 'outer\\"x'
    assert trace_index._jsonl_trace(b'{"trace_id": "a\\u00e9"}') == "a\u00e9"
    assert trace_index._jsonl_trace(b"[" * 5000) is None


def test_groups_hold_whole_traces_within_the_budget(tmp_path):
    files = sorted(Path(SAMPLES_DIR / "clean").iterdir())
    from traces.io import discover

    found = discover([str(SAMPLES_DIR / "clean")])
    groups = plan_units([trace_index.index_file(tf) for tf in found.files], 1000)  # conformance.engine.units
    group_of = {t: i for i, g in enumerate(groups) for t in g.traces}
    assert len(group_of) == len(files)  # one trace per sample file
    assert all(g.events <= 1000 or len(g.traces) == 1 for g in groups)
    assert sorted(t for g in groups for t in g.traces) == sorted(group_of)
