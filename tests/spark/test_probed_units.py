"""The Spark units plan in one job where the files' trace_id dictionaries tell the components
(`spark_trace_check.probed_units`), against the single-process engine.

The corpus is all Parquet: the sample traces, one trace split over two files (a component of two files), a
row without a trace, a trace out of seq order, a violation, and (in two variants) an event ID used in two
files or twice in one. Each report must be the single-process engine's, with the plan announced. A clean
corpus reads no file again for TR-002; a repeated ID has exactly the files of the components that hold it
read again (the exact read is spied on), and is found by that read.
Twins: a component over the budget, and a JSON Lines file in the corpus, must take the two-job units plan
(same report); a probe that misses a trace two files share must be an internal error, never a verdict.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spark_trace_check.job as job
import spark_trace_check.probed_units as probed_units
from conformance.engine.driver import InternalError
from conformance.pycheck import check_paths
from traces.corpus import SAMPLES_DIR
from traces.io import read_events, write_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.spark

SOURCES = ("clean/sr-s1.jsonl", "clean/am-s1.jsonl", "clean/pf-s1.jsonl", "mutants/net--recv-without-send.jsonl")
ANNOUNCED = "told by their trace_id dictionaries"


def _write(path: Path, events: list, damage=None) -> None:
    rows = [e.to_row() for e in events]
    for row in rows:
        row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
    if damage:
        damage(rows)
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path, row_group_size=50)


def parquet_corpus(directory: Path, repeat_id: str | None) -> list[str]:
    """One file per sample trace; the first trace's last rows moved to a file of their own (two files, one
    trace), its fifth row moved to the end (out of seq order); a row without a trace; with `repeat_id`
    "across", an event ID of the second trace used again in the third, "within", one of the third used twice
    in it."""
    traces = [read_events(SAMPLES_DIR / name).events for name in SOURCES]
    directory.mkdir(parents=True, exist_ok=True)
    first = traces[0]
    head, tail = first[: len(first) - 6], first[len(first) - 6 :]
    head = head[:4] + head[5:] + [head[4]]
    _write(directory / "t0.parquet", head)
    _write(directory / "t0-tail.parquet", tail)

    def no_trace(rows: list[dict]) -> None:
        rows[2]["trace_id"] = None

    _write(directory / "t1.parquet", traces[1], no_trace)
    third = list(traces[2])
    if repeat_id:
        e, again = third[3], (traces[1][6] if repeat_id == "across" else third[7]).event_id
        third[3] = type(e)(**{**{s: getattr(e, s) for s in e.__slots__}, "event_id": again})
    _write(directory / "t2.parquet", third)
    _write(directory / "t3.parquet", traces[3])
    return [str(directory)]


def _same(a, b) -> None:
    assert a.summary() | {"engine": ""} == b.summary() | {"engine": ""}
    assert a.violations == b.violations and a.quarantine == b.quarantine and a.unknown == b.unknown


@pytest.mark.parametrize("repeat_id", [None, "across", "within"])
def test_one_job_gives_the_python_report(spark, tmp_path, monkeypatch, capsys, repeat_id):
    paths = parquet_corpus(tmp_path / "in", repeat_id)
    probed = probed_units.probe(paths)
    assert probed is not None and len(probed.groups) == 4 and [0, 1] in probed.groups  # t0 with its tail
    reads = []
    real = probed_units.exact_duplicates

    def exact(sc, files, *args):
        reads.append(sorted(Path(files[r].name).name for r in args[-1]))
        return real(sc, files, *args)

    monkeypatch.setattr(probed_units, "exact_duplicates", exact)
    outcome = job.check(spark, paths, plan="auto", announce=True)
    assert ANNOUNCED in capsys.readouterr().err
    python = check_paths(paths)
    assert python.violations_total > 0 and python.rows_quarantined >= 1
    _same(outcome, python)
    again = {None: [], "across": [["t1.parquet", "t2.parquet"]], "within": [["t2.parquet"]]}[repeat_id]
    assert reads == again  # a clean corpus is read once; else only the files that hold a repeated ID again
    assert any(v["requirement"] == "TR-002" for v in python.violations) == bool(repeat_id)


def test_a_component_over_the_budget_or_a_json_lines_file_takes_the_two_job_plan(spark, tmp_path, monkeypatch, capsys):
    paths = parquet_corpus(tmp_path / "in", "across")
    python = check_paths(paths)
    monkeypatch.setattr(probed_units, "ONCE_BUDGET", 20)
    assert probed_units.probe(paths) is None
    _same(job.check(spark, paths, plan="auto", announce=True), python)
    said = capsys.readouterr().err
    assert ANNOUNCED not in said and "unit(s) of whole traces" in said
    monkeypatch.undo()
    write_events(tmp_path / "in" / "more.jsonl", read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events)
    assert probed_units.probe(paths) is None
    _same(job.check(spark, paths, plan="units", announce=True), check_paths(paths))
    assert ANNOUNCED not in capsys.readouterr().err


def test_a_probe_that_misses_a_shared_trace_is_an_internal_error(spark, tmp_path, monkeypatch):
    paths = parquet_corpus(tmp_path / "in", None)
    real = probed_units.probe_traces

    def blind(files):  # the tail file's trace left out: t0 and its tail judged apart
        names = real(files)
        return [n if not files[i].name.endswith("t0-tail.parquet") else frozenset() for i, n in enumerate(names)]

    monkeypatch.setattr(probed_units, "probe_traces", blind)
    probed = probed_units.probe(paths)
    assert probed is not None and [0, 1] not in probed.groups
    with pytest.raises(InternalError, match=r"t0-tail\.parquet: trace"):
        job.check(spark, paths, plan="auto")


def test_the_one_job_runs_with_the_server_compiler_off_and_the_shuffle_plan_never_probes(spark, tmp_path, monkeypatch):
    from tests.spark.test_client_compiler import _excluded

    paths = parquet_corpus(tmp_path / "in", None)
    seen: list[int] = []
    judge = probed_units.check_probed

    def spy(*args, **kwargs):
        seen.append(_excluded(spark))
        return judge(*args, **kwargs)

    monkeypatch.setattr(probed_units, "check_probed", spy)
    before = _excluded(spark)
    job.check(spark, paths, plan="auto")
    assert seen == [before + 1] and _excluded(spark) == before
    job.check(spark, paths, plan="shuffle")  # twin: the plan asked for is the shuffle, never the one job
    assert seen == [before + 1]
