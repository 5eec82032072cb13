"""The Spark units plan's budget (`spark_trace_check.units.choose_units`, issue 32): whole files when they
balance the cores, slices only when the balance pays for the rows read again. Twin: the same corpus with
re-reading made dear must not be sliced."""

from __future__ import annotations

from collections import Counter

import pytest

import spark_trace_check.units as units
from conformance.engine.trace_index import FileIndex

pytestmark = pytest.mark.unit


def _corpus(files: int, traces: int, events: int) -> list[FileIndex]:
    """`files` files, each holding `traces` whole traces of `events` events, in seq order."""
    out = []
    for r in range(files):
        counts = Counter({f"f{r}-t{i}": events for i in range(traces)})
        out.append(FileIndex(counts, {t: (0, events - 1, True) for t in counts}, traces * events))
    return out


def test_whole_files_when_they_balance_the_cores():
    index = _corpus(4, 100, 1_000)  # 4 files of 100k events on 2 cores
    chosen = units.choose_units(index, 400_000, 2)
    assert len(chosen) == 2 and all(u.slices is None for u in chosen)
    assert sorted(u.events for u in chosen) == [200_000, 200_000]


def test_slices_when_the_balance_pays_for_the_rows_read_again():
    index = _corpus(3, 100, 1_000)  # 3 files on 2 cores: whole files end at 2 files' time, halves at 1.5
    rows = [entry.rows for entry in index]
    chosen = units.choose_units(index, 300_000, 2)
    assert any(u.slices for u in chosen)
    assert units.makespan([units.unit_cost(u, rows) for u in chosen], 2) < 200_000


def test_twin_dear_rereading_keeps_files_whole(monkeypatch):
    monkeypatch.setattr(units, "SLICE_COST", 10.0)
    chosen = units.choose_units(_corpus(3, 100, 1_000), 300_000, 2)
    assert all(u.slices is None for u in chosen)


def test_makespan_starts_the_largest_first():
    assert units.makespan([1, 1, 2], 2) == 2  # in the given order: 1+2 | 1, done at 3
