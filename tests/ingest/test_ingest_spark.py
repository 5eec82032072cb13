"""Ingested datasets on Spark: ingest with either engine, check with either, same report as the original.

One mixed corpus (mutant traces, a trace split over two files out of order, an event ID in two traces, and
damaged rows of JSON Lines and Parquet that are quarantined) is checked by the Python engine as raw input:
that report is the reference. The Spark ingest read back by the Python engine, and the Python ingest checked
by Spark (one task per file, no shuffle), must both give it (the engine name aside). The Spark ingest reads
the raw rows and judges each once in Python (`spark_trace_check.raw`, `monitors.judge_rows`): its dataset
holds the very rows, in the same order, quarantine and duplicates of the Python ingest's (twin: a bucket's
rows in another order are told apart).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance import pycheck
from conformance.dataset_check import check_dataset as py_check_dataset
from tests.damaged.corpus import CASES
from tests.ingest.test_ingest_python import mutant_corpus, report
from traces import dataset as fmt
from traces.ingest import ingest as py_ingest

pytestmark = pytest.mark.spark

DAMAGED = ("latin1-byte", "duplicate-key", "extra-parquet-column", "int-beyond-64-bits-seq")


def _corpus(tmp: Path) -> list[str]:
    paths = mutant_corpus(tmp)
    for case in (c for c in CASES if c.name in DAMAGED):
        src = tmp / case.name
        src.mkdir()
        paths += [a for a in case.build(src) if not a.startswith("--")]
    return paths


def _engine_free(rep: dict) -> dict:
    rep["summary"] = {k: v for k, v in rep["summary"].items() if k != "engine"}
    return rep


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ingest-spark")
    paths = _corpus(tmp)
    want = _engine_free(report(pycheck.check_paths(paths)))
    assert want["summary"]["rows_quarantined"] >= len(DAMAGED) and want["summary"]["violations_total"] > 0
    return tmp, paths, want


def test_spark_ingest_gives_the_original_report(spark, corpus):
    from spark_trace_check.ingest import ingest

    tmp, paths, want = corpus
    manifest = ingest(spark, paths, tmp / "ds-spark", files=3)
    assert manifest["input"]["rows_quarantined"] == want["summary"]["rows_quarantined"]
    assert _engine_free(report(py_check_dataset(str(tmp / "ds-spark")))) == want


def test_spark_check_of_dataset_gives_the_original_report(spark, corpus):
    from spark_trace_check.dataset import check_dataset

    tmp, paths, want = corpus
    py_ingest(paths, tmp / "ds-py", files=3)
    got = check_dataset(spark, str(tmp / "ds-py"))
    assert got.engine == "spark"
    assert _engine_free(report(got)) == want


def test_spark_check_of_a_tampered_dataset_exits_2(spark, corpus, capsys):
    from conformance.cli import main

    tmp, paths, _ = corpus
    py_ingest(paths, tmp / "ds-bad", files=2)
    part = tmp / "ds-bad" / fmt.open_dataset(tmp / "ds-bad").files[-1]["path"]
    raw = bytearray(part.read_bytes())
    raw[100] ^= 0x01
    part.write_bytes(bytes(raw))
    code = main(["check", str(tmp / "ds-bad"), "--engine", "spark", "--out", str(tmp / "r-bad"), "--quiet"])
    assert code == 2
    assert part.name in capsys.readouterr().err


def _content(ds: Path) -> dict[str, pa.Table]:
    out = {f["path"]: pq.read_table(ds / f["path"]) for f in fmt.open_dataset(ds).files}
    for side in (fmt.QUARANTINE, fmt.DUPLICATES):
        with pa.memory_map(str(ds / side)) as source:
            out[side] = pa.ipc.open_file(source).read_all()
    return out


def _same(a: dict[str, pa.Table], b: dict[str, pa.Table]) -> bool:
    return a.keys() == b.keys() and all(a[k].equals(b[k]) for k in a)


def test_spark_ingest_writes_the_python_ingests_rows(spark, corpus):
    from spark_trace_check.ingest import ingest

    tmp, paths, _ = corpus
    ingest(spark, paths, tmp / "ds-spark-rows", files=3)
    py_ingest(paths, tmp / "ds-py-rows", files=3)
    got, want = _content(tmp / "ds-spark-rows"), _content(tmp / "ds-py-rows")
    assert _same(got, want)
    assert sum(t.num_rows for k, t in want.items() if k.endswith(".parquet")) > 1000


def test_twin_a_bucket_out_of_recording_order_is_told_apart(corpus):
    """What a lost sort (by trace, then file and line) in the Spark ingest would write: the same rows, in
    another order; the comparison must see it."""
    tmp, paths, _ = corpus
    if not (tmp / "ds-py-rows").exists():
        py_ingest(paths, tmp / "ds-py-rows", files=3)
    want = _content(tmp / "ds-py-rows")
    name = max((k for k in want if k.endswith(".parquet")), key=lambda k: want[k].num_rows)
    table = want[name]
    reordered = table.take(pa.array(range(table.num_rows - 1, -1, -1)))
    assert sorted(reordered.column("event_id").to_pylist()) == sorted(table.column("event_id").to_pylist())
    assert not _same({**want, name: reordered}, want)
