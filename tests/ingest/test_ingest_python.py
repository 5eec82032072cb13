"""`haconform ingest` then `haconform check DATASET` (Python engine) gives the report of the original input.

Parity on clean, mutant (violating, with a duplicate event ID across files and a trace split over two
files out of order) and malformed corpora (every damaged-input case that is usable). Twins: a data file
changed or missing after ingest, an unlisted file, a duplicates record that no longer matches the files,
and unusable inputs to ingest must all exit 2 naming the file; the dataset really holds whole traces per
file in recording order.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance import pycheck
from conformance.cli import main
from conformance.dataset_check import check_dataset
from tests.damaged.corpus import CASES
from traces import dataset as fmt
from traces.corpus import SAMPLES_DIR
from traces.ingest import ingest
from traces.io import TraceFileError, read_events, write_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.unit

CLEAN = ("am-s1.jsonl", "net-s1.jsonl", "pf-s1.jsonl", "sr-s3.parquet")  # every mechanism, both formats
MUTANTS = ("am--sam-activates.jsonl", "pf--never-backfill.jsonl", "sr--ack-before-shadow.jsonl")


def report(outcome) -> dict:
    return {
        "summary": outcome.summary(),
        "violations": outcome.violations,
        "quarantine": outcome.quarantine,
        "unknown": outcome.unknown,
    }


def ingest_and_check(paths: list[str], out: Path, files: int = 3) -> dict:
    ingest(paths, out, files=files)
    return report(check_dataset(str(out)))


def mutant_corpus(tmp: Path) -> list[str]:
    """A few mutant traces, a clean trace split over two files in the wrong order (TR-001 across files)
    and an event ID used in two traces of two files (TR-002)."""
    src = tmp / "mut"
    src.mkdir()
    for n in MUTANTS:
        shutil.copy(SAMPLES_DIR / "mutants" / n, src / n)
    net = read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events
    sr = read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events
    write_events(src / "x1-late-half.jsonl", net[len(net) // 2 :])
    write_events(src / "x2-early-half.parquet", net[: len(net) // 2])
    stolen = net[3].event_id
    sr[9] = type(sr[9])(**{**{s: getattr(sr[9], s) for s in sr[9].__slots__}, "event_id": stolen})
    write_events(src / "x3-dup.jsonl", sr)
    return [str(src)]


def test_clean_corpus_same_report(tmp_path):
    paths = [str(SAMPLES_DIR / "clean" / n) for n in CLEAN]
    got = ingest_and_check(paths, tmp_path / "ds")
    assert got == report(pycheck.check_paths(paths))
    assert got["summary"]["verdict"] == "valid" and got["summary"]["rows_checked"] > 0


def test_mutant_corpus_same_report(tmp_path):
    paths = mutant_corpus(tmp_path)
    want = report(pycheck.check_paths(paths))
    rules = {r["rule"] for r in want["summary"]["violations_by_rule"]}
    assert {"event-id-unique", "seq-strictly-increasing"} <= rules  # the planted violations are there
    assert want["summary"]["verdict"] == "invalid"
    for files in (1, 5):
        assert ingest_and_check(paths, tmp_path / f"ds{files}", files) == want


@pytest.mark.parametrize("case", [c for c in CASES if c.exit != 2 and not c.extra_args], ids=lambda c: c.name)
def test_malformed_corpus_same_report(case, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    args = [a for a in case.build(src) if not a.startswith("--")]
    assert ingest_and_check(args, tmp_path / "ds") == report(pycheck.check_paths(args))


def test_dataset_files_hold_whole_traces_in_recording_order(tmp_path):
    paths = mutant_corpus(tmp_path)
    manifest = ingest(paths, tmp_path / "ds", files=3).manifest
    home: dict[str, str] = {}
    for entry in manifest["files"]:
        table = pq.read_table(tmp_path / "ds" / entry["path"])
        assert table.schema.equals(arrow_schema())
        traces = table.column("trace_id").to_pylist()
        assert traces == sorted(traces)
        for t in set(traces):
            assert home.setdefault(t, entry["path"]) == entry["path"]
            assert fmt.bucket_of(t, 3) == entry["bucket"]
    net = [e for e in read_events(tmp_path / "ds" / manifest["files"][0]["path"]).events]
    assert net  # readable as an ordinary trace file too
    split = next(t for t in home if t.startswith("net"))
    rows = pq.read_table(tmp_path / "ds" / home[split]).to_pylist()
    seqs = [r["seq"] for r in rows if r["trace_id"] == split]
    assert seqs != sorted(seqs)  # recording order kept: the late half first, as in the input
    assert manifest["duplicates"]["rows"] == 2


def _cli(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.fixture
def dataset(tmp_path, capsys) -> Path:
    out = tmp_path / "ds"
    code, _ = _cli(["ingest", *mutant_corpus(tmp_path), "--out", str(out), "--files", "2"], capsys)
    assert code == 0
    return out


def test_cli_check_of_dataset_exits_like_the_original(dataset, tmp_path, capsys):
    code, _ = _cli(["check", str(dataset), "--engine", "python", "--out", str(tmp_path / "r"), "--quiet"], capsys)
    assert code == 1
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["verdict"] == "invalid" and summary["files"][0].endswith(MUTANTS[0])


@pytest.mark.parametrize("damage", ["changed", "missing", "unlisted", "duplicates"])
def test_tampered_dataset_is_unusable(damage, dataset, tmp_path, capsys):
    manifest = json.loads((dataset / fmt.MANIFEST).read_text())
    part = dataset / manifest["files"][0]["path"]
    if damage == "changed":  # same size, one byte different
        raw = bytearray(part.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        part.write_bytes(bytes(raw))
        named = part.name
    elif damage == "missing":
        part.unlink()
        named = part.name
    elif damage == "unlisted":
        shutil.copy(part, dataset / "part-99999.parquet")
        named = "part-99999.parquet"
    else:  # the record emptied and the manifest made to agree: only the re-verification can see it
        fmt.write_ipc(dataset / fmt.DUPLICATES, arrow_schema().empty_table())
        facts = fmt.file_facts(dataset / fmt.DUPLICATES)
        manifest["duplicates"].update(rows=0, **facts)
        (dataset / fmt.MANIFEST).write_text(json.dumps(manifest))
        named = "recorded at ingest"
    out = tmp_path / "r"
    code, err = _cli(["check", str(dataset), "--engine", "python", "--out", str(out), "--quiet"], capsys)
    assert code == 2
    assert named in err
    assert json.loads((out / "summary.json").read_text())["verdict"] == "unusable"


def test_foreign_manifest_version_is_unusable(dataset):
    manifest = json.loads((dataset / fmt.MANIFEST).read_text())
    manifest["format_version"] = 99
    (dataset / fmt.MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(fmt.DatasetError, match="format version 99"):
        fmt.open_dataset(dataset)


def test_dataset_with_other_paths_is_a_usage_error(dataset, tmp_path, capsys):
    code, err = _cli(["check", str(dataset), str(SAMPLES_DIR / "clean"), "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "on its own" in err


@pytest.mark.parametrize("kind", ["empty", "bad", "foreign-out"])
def test_ingest_of_unusable_input_exits_2(kind, tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    out = tmp_path / "ds"
    if kind == "empty":
        (src / "a.jsonl").write_text("\n \n")
        named = "no events"
    elif kind == "bad":
        pq.write_table(pa.table({"x": [1]}), src / "a.jsonl")
        named = "a.jsonl"
    else:
        shutil.copy(SAMPLES_DIR / "clean" / "net-s1.jsonl", src / "a.jsonl")
        out.mkdir()
        (out / "keep.txt").write_text("mine")
        named = "not a haconform dataset"
    code, err = _cli(["ingest", str(src), "--out", str(out)], capsys)
    assert code == 2 and named in err
    if kind == "foreign-out":
        assert (out / "keep.txt").read_text() == "mine"
    else:
        assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".ds.")]  # no temporary directory left


def test_reingest_replaces_an_earlier_dataset(dataset, tmp_path):
    ingest([str(SAMPLES_DIR / "clean" / "net-s1.jsonl")], dataset, files=1)
    ds = fmt.open_dataset(dataset)
    assert ds.input["files"] == [str(SAMPLES_DIR / "clean" / "net-s1.jsonl")] and len(ds.files) == 1


def test_files_must_be_positive(tmp_path):
    with pytest.raises(TraceFileError, match="at least 1"):
        ingest([str(SAMPLES_DIR / "clean")], tmp_path / "ds", files=0)


def test_small_groups_and_batches_give_the_same_report(tmp_path, monkeypatch):
    """The streamed dataset check: batches cut inside traces; and an engine that keeps no event (the
    violations' events read again from the file) gives the same report."""
    from conformance import dataset_check
    from conformance.engine import driver

    paths = mutant_corpus(tmp_path)
    ingest(paths, tmp_path / "ds", files=2)
    whole = report(check_dataset(str(tmp_path / "ds")))
    assert whole == report(pycheck.check_paths(paths))
    monkeypatch.setattr(dataset_check, "BATCH_ROWS", 7)
    assert report(check_dataset(str(tmp_path / "ds"))) == whole
    monkeypatch.setattr(driver, "KEEP_EVENTS", 0)
    assert report(check_dataset(str(tmp_path / "ds"))) == whole


def test_dataset_without_its_manifest_is_refused(dataset, tmp_path, capsys):
    (dataset / fmt.MANIFEST).unlink()
    code, err = _cli(["check", str(dataset), "--engine", "python", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "without its manifest" in err


def test_every_row_quarantined_gives_a_dataset_without_data_files(tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.jsonl").write_text('{"not": "an event"}\nnot json\n')
    manifest = ingest([str(src)], tmp_path / "ds").manifest
    assert manifest["files"] == [] and manifest["input"]["rows_quarantined"] == 2
    got = report(check_dataset(str(tmp_path / "ds")))
    assert got == report(pycheck.check_paths([str(src)]))
    assert got["summary"]["verdict"] == "invalid" and [q["line"] for q in got["quarantine"]] == [1, 2]


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 1000])
def test_trace_order_finds_a_break_wherever_the_batches_cut(tmp_path, monkeypatch, batch):
    """`trace_order` compares each row with the one before it, across batch boundaries too; the twin: a
    trace whose seq goes back exactly at a cut between two batches is found, and a clean one is not."""
    from conformance import dataset_check
    from traces.schema import Event

    def trace(t: str, seqs: list[int]) -> list[Event]:
        return [Event(t, s, f"{t}:{i}", i, "n", "core", t, "K", {}) for i, s in enumerate(seqs)]

    events = trace("a", [0, 1, 2]) + trace("b", [0, 1, 2, 2, 3]) + trace("c", [0, 1, 2, 3]) + trace("d", [0, 5, 4])
    write_events(tmp_path / "f.parquet", events)
    monkeypatch.setattr(dataset_check, "BATCH_ROWS", batch)
    sizes, broken = dataset_check.trace_order(str(tmp_path / "f.parquet"))
    assert sizes == {"a": 3, "b": 5, "c": 4, "d": 3} and broken == {"b", "d"}


def test_out_inside_the_input_is_refused(tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    shutil.copy(SAMPLES_DIR / "clean" / "net-s1.jsonl", src / "a.jsonl")
    code, err = _cli(["ingest", str(src), "--out", str(src / "ds")], capsys)
    assert code == 2 and "inside the input directory" in err
    assert not (src / "ds").exists()


def test_a_dataset_is_not_ingested_again(dataset, tmp_path, capsys):
    code, err = _cli(["ingest", str(dataset), "--out", str(tmp_path / "ds2")], capsys)
    assert code == 2 and "already an ingested dataset" in err


def test_internal_error_in_ingest_exits_3_and_writes_nothing(dataset, tmp_path, capsys, monkeypatch):
    from traces import ingest as ingestion

    before = sorted(p.name for p in dataset.iterdir())

    def broken(*args, **kwargs):
        raise RuntimeError("injected")

    monkeypatch.setattr(ingestion, "finish", broken)
    code, err = _cli(["ingest", str(SAMPLES_DIR / "clean" / "net-s1.jsonl"), "--out", str(dataset)], capsys)
    assert code == 3 and "internal error" in err and "injected" in err
    assert sorted(p.name for p in dataset.iterdir()) == before  # the earlier dataset is untouched
    fmt.open_dataset(dataset)
    assert not [p for p in dataset.parent.iterdir() if p.name.startswith(".ds.")]


def test_skew_option_gives_the_same_report(tmp_path):
    paths = mutant_corpus(tmp_path)
    ingest(paths, tmp_path / "ds", files=2)
    assert report(check_dataset(str(tmp_path / "ds"), skew_ms=50)) == report(pycheck.check_paths(paths, skew_ms=50))


def test_ingest_progress_counts_every_row_read_and_prints_the_rate(tmp_path, capsys):
    """`--progress`: a bar on stderr even off a terminal, and a final line whose count is the rows read."""
    code, err = _cli(["ingest", str(SAMPLES_DIR / "clean"), "--out", str(tmp_path / "ds"), "--progress"], capsys)
    rows = json.loads((tmp_path / "ds" / fmt.MANIFEST).read_text())["input"]["rows_read"]
    assert code == 0 and "ingesting" in err
    assert f"ingested {rows} rows in " in err and " rows/s" in err
    code, err = _cli(["ingest", str(SAMPLES_DIR / "clean"), "--out", str(tmp_path / "ds2"), "--quiet"], capsys)
    assert code == 0 and err == ""
