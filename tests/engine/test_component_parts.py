"""A component judged in parts (session 30, issue 32: `conformance.engine.units.judge_component(..., part=)`, the
Spark one-job plan's tasks when there are few components for the cores, `spark_trace_check.probed_units`).

Each of n callers indexes the whole component, plans the same chunks of whole traces (about 1/n of its rows each,
reading slices) and judges the chunks at its position modulo n. Checked: for n in 1..4, the parts together judge
every row once, with the verdicts, quarantine, counts and event-ID hashes of the component judged whole; only part 0
returns the index. Twin: parts that each judge every chunk count the rows n times over, and the comparison says so.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.engine import units
from model.registry import monitor_runs
from traces.corpus import SAMPLES_DIR
from traces.io import discover, read_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.unit

SOURCES = ("clean/sr-s1.jsonl", "clean/am-s1.jsonl", "clean/pf-s1.jsonl", "mutants/net--recv-without-send.jsonl")


def _component(tmp_path: Path) -> tuple[list, list[int]]:
    """Four traces over two files (every trace's first half in one, its second half in the other), one trace with
    a violation, one row without a trace: one component of several traces."""
    rows = []
    for name in SOURCES:
        for e in read_events(SAMPLES_DIR / name).events:
            row = e.to_row()
            row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
            rows.append(row)
    by_trace: dict[str, list[dict]] = {}
    for row in rows:
        by_trace.setdefault(row["trace_id"], []).append(row)
    first = [r for t in by_trace.values() for r in t[: len(t) // 2]]
    second = [r for t in by_trace.values() for r in t[len(t) // 2 :]]
    second.append(dict(second[0], trace_id=None, event_id="no-trace"))
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    for name, part in (("a.parquet", first), ("b.parquet", second)):
        pq.write_table(pa.Table.from_pylist(part, schema=schema), tmp_path / name, row_group_size=40)
    return discover([str(tmp_path)]).files, [0, 1]


def _judged(results: list) -> dict:
    """What a component's results say, in an order that does not depend on how they were cut."""
    key = lambda v: json.dumps(v, sort_keys=True)  # noqa: E731
    by_file: Counter[int] = Counter()
    judged: Counter = Counter()
    unjudged: Counter = Counter()
    for r in results:
        by_file.update(r.rows_by_file)
        judged.update(r.counts.judged)
        unjudged.update({key: n for key, (n, _) in r.counts.unjudged.items()})
    return {
        "violations": sorted((v for r in results for v in r.violations), key=key),
        "quarantine": sorted((q for r in results for q in r.quarantine), key=key),
        "unknown": sorted((u for r in results for u in r.unknown), key=key),
        "rows_checked": sum(r.rows_checked for r in results),
        "rows_by_file": dict(by_file),
        "judged": dict(judged),
        "unjudged": dict(unjudged),
    }


def _parts(files, ranks, n: int, skip_own: bool = True) -> tuple[list, list, list[int]]:
    runs = monitor_runs()
    index, results, hashes = None, [], []
    for p in range(n):
        got, found, h = units.judge_component(files, ranks, runs, skip_own=skip_own, part=(p, n))
        assert (got is not None) == (p == 0)  # only part 0 returns the index
        index = got if p == 0 else index
        results.extend(found)
        hashes.extend(h)
    return index, results, sorted(hashes)


@pytest.mark.parametrize("skip_own", [True, False])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_the_parts_of_a_component_judge_what_the_whole_does(tmp_path: Path, n: int, skip_own: bool) -> None:
    files, ranks = _component(tmp_path)
    whole_index, whole, whole_hashes = _parts(files, ranks, 1, skip_own)
    index, parts, hashes = _parts(files, ranks, n, skip_own)
    assert len(parts) > 1  # cut for real: several chunks
    assert _judged(parts) == _judged(whole)
    assert index == whole_index and hashes == whole_hashes
    assert _judged(whole)["violations"] and _judged(whole)["quarantine"]  # the mutant's violation, the row's fault
    assert _judged(whole)["rows_checked"] + len(_judged(whole)["quarantine"]) == sum(e.rows for e in index)


def test_twin_parts_that_each_judge_every_chunk_count_rows_again(tmp_path: Path, monkeypatch) -> None:
    files, ranks = _component(tmp_path)
    _, whole, _ = _parts(files, ranks, 1)
    real = units.plan_units

    class Every(list):  # every part takes every chunk: `[p::n]` gives the whole plan
        def __getitem__(self, item):
            return list(self) if isinstance(item, slice) else super().__getitem__(item)

    monkeypatch.setattr(units, "plan_units", lambda index, budget: Every(real(index, budget)))
    _, doubled, _ = _parts(files, ranks, 2)
    assert _judged(doubled) != _judged(whole)
    assert _judged(doubled)["rows_checked"] > _judged(whole)["rows_checked"]


def test_the_cut_is_chosen_where_the_tasks_end_first() -> None:
    from spark_trace_check.probed_units import choose_parts

    assert choose_parts([200_000] * 5, 2) == 2  # five tasks end in three rounds of a file; ten in five of half a file
    assert choose_parts([200_000] * 50, 2) == 1  # fifty even tasks: a cut only reads the files again
    assert choose_parts([200_000] * 4, 2) == 1  # four tasks on two cores end together
    assert choose_parts([100] * 3, 2) == 1  # a task's fixed cost is more than the rows
