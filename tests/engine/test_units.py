"""Units of whole traces (`conformance.engine.units`): the report must not depend on how the traces are cut.

The corpus here spreads its traces over three files of both formats (each file holds rows of every trace,
interleaved), with a garbage line, a Parquet row without a trace, a trace recorded out of seq order across
two files, a violation and an event ID used twice. It is checked as one unit and cut into units of a few
events, where a file is read in slices (`traces.slices`) by several units and owned by one; every report
must be the same. The plan's invariants are checked directly. Twins: a plan that gives one file two owners,
and one that leaves a slice unread, must be internal errors (rows read twice, rows never read), never a
report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.engine.driver import InternalError
from conformance.engine.trace_index import index_file
from conformance.engine.units import finish_units, judge_unit, plan_units, read_amplification
from model.registry import monitor_runs
from tests.engine.test_streaming import _report
from traces.corpus import SAMPLES_DIR
from traces.io import discover, read_events, write_events
from traces.schema import arrow_schema
from traces.slices import Slice

pytestmark = pytest.mark.unit

SOURCES = ("clean/sr-s1.jsonl", "clean/am-s1.jsonl", "clean/pf-s1.jsonl", "mutants/net--recv-without-send.jsonl")


def spread_corpus(directory: Path) -> list[str]:
    """Three files, each holding rows of every trace (round robin), with the damage the module lists."""
    traces = [read_events(SAMPLES_DIR / name).events for name in SOURCES if (SAMPLES_DIR / name).exists()]
    assert len(traces) >= 3, "the sample corpus changed"
    files: list[list] = [[], [], []]
    for evs in traces:
        for i, e in enumerate(evs):
            files[i % 3].append(e)
    moved = traces[0][4]  # out of seq order: a later row of trace 0 in the first file goes to the end of it
    files[1].remove(moved)
    files[0].append(moved)
    twin = traces[1][2]
    files[2].append(type(twin)(**{**{s: getattr(twin, s) for s in twin.__slots__}, "seq": 10**6}))  # same ID
    directory.mkdir(parents=True, exist_ok=True)
    write_events(directory / "a.jsonl", files[0])
    with (directory / "a.jsonl").open("a") as handle:
        handle.write('{"not": "an event"}\n')
    rows = [e.to_row() for e in files[1]]
    for row in rows:
        row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
    rows[3]["trace_id"] = None
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), directory / "b.parquet")
    write_events(directory / "c.jsonl", files[2])
    return [str(directory)]


def test_cutting_traces_into_units_does_not_change_the_report(tmp_path):
    paths = spread_corpus(tmp_path / "in")
    whole = _report(paths, 10**9)
    assert whole["summary"]["violations_total"] > 0 and whole["summary"]["rows_quarantined"] == 2
    rules = {v["rule"] for v in whole["violations"]}
    assert {"event-id-unique", "seq-strictly-increasing"} <= rules, rules
    for budget in (1, 50, 400):
        assert _report(paths, budget) == whole, budget


def _plan(paths: list[str], budget: int):
    found = discover(paths)
    index = [index_file(tf) for tf in found.files]
    return found, index, plan_units(index, budget)


@pytest.mark.parametrize("budget", [1, 50, 400, 10**9])
def test_every_trace_in_one_unit_and_every_file_owned_once(tmp_path, budget):
    _found, index, units = _plan(spread_corpus(tmp_path / "in"), budget)
    traces = [t for u in units for t in u.traces]
    assert sorted(traces) == sorted(set(traces)) == sorted({t for entry in index for t in entry.counts})
    for rank, entry in enumerate(index):
        readers = [u for u in units if rank in u.files]
        owners = [u for u in readers if u.slices is None or u.slices[rank].known is not None]
        assert len(owners) == 1, (rank, budget)
        sliced = [u.slices[rank].traces for u in readers if u.slices is not None]
        assert sum(len(s) for s in sliced) == len(frozenset().union(*sliced)) if sliced else True
        if sliced:
            assert frozenset().union(*sliced) == set(entry.counts)
    if budget == 1:
        assert any(u.slices for u in units) and read_amplification(index, units) > 1


def _judged(found, index, units):
    runs = monitor_runs(None)
    results = [judge_unit(found.files, u, runs) for u in units]
    return finish_units(found, index, results, [n for n, _ in runs], ([], {}), engine="python", cap=100)


def test_a_plan_with_two_owners_of_a_file_is_an_internal_error(tmp_path):
    found, index, units = _plan(spread_corpus(tmp_path / "in"), 50)
    assert _judged(found, index, units).rows_read == sum(e.rows for e in index)  # the plan as made is sound
    second = next(u for u in units if u.slices and any(s.known is None for s in u.slices.values()))
    rank = next(r for r, s in second.slices.items() if s.known is None)
    second.slices[rank] = Slice(second.slices[rank].traces, frozenset(index[rank].counts))
    with pytest.raises(InternalError, match="the units read"):
        _judged(found, index, units)


def test_a_plan_that_leaves_a_slice_unread_is_an_internal_error(tmp_path):
    found, index, units = _plan(spread_corpus(tmp_path / "in"), 50)
    cut = next(u for u in units if u.slices and len(u.files) > 1)
    dropped = cut.files.pop()
    with pytest.raises(InternalError, match=f"{found.files[dropped].name}: the units read"):
        _judged(found, index, units)
