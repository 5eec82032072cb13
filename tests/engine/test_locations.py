"""TR-002 when an event ID first repeats in an incremental check (issue 32, `conformance.locations`): the
state marks where its events were read (`statedir.Marks`, `locations.pickle`), so a rerun whose appended lines
repeat the ID of an event read before reads the appended lines once and, of the earlier files, only the rows
of the marks that hold the events it must show (a JSON Lines file from the mark's byte, a Parquet file's row
groups). Reads are counted as in tests/engine/test_read_once.py, and every report equals a full check's.
Twins: a state without its locations (saved before marks, or by the Spark driver) reads every file again
for TR-002; a mark that points at another row is an internal error, never a verdict.
"""

from __future__ import annotations

import json
import pickle
import shutil
from array import array
from pathlib import Path

import pytest

from conformance import locations, pycheck
from conformance.engine import driver, resume, statedir
from tests.engine.test_read_once import MUTANTS, _incremental, _names
from traces import io as trace_io
from traces.corpus import SAMPLES_DIR
from traces.io import read_events, write_events

pytestmark = pytest.mark.unit

EARLIER = "sr--double-send.jsonl"  # an earlier JSON Lines file whose event's ID is used again


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """The mutants of test_read_once, a JSON Lines and a Parquet file of clean samples (no ID repeated)."""
    for name in MUTANTS:
        shutil.copy(SAMPLES_DIR / "mutants" / name, tmp_path / name)
    write_events(tmp_path / "a.jsonl", read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events)
    write_events(tmp_path / "b.parquet", read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events)
    return tmp_path


def _late(corpus: Path, tag: str = "late") -> int:
    """Two new traces appended to a.jsonl, each reusing the ID of an event read before: one of b.parquet,
    one of `EARLIER` (past its first rows); the appended lines' count."""
    lines = []
    for n, (sample, row) in enumerate(((SAMPLES_DIR / "clean" / "sr-s1.jsonl", 7), (corpus / EARLIER, 9))):
        old = json.loads(sample.read_text().splitlines()[row])
        lines.append(json.dumps({**old, "trace_id": f"{tag}-{n}", "seq": 0}) + "\n")
    with (corpus / "a.jsonl").open("a") as out:
        out.writelines(lines)
    return len(lines)


def test_a_first_repeat_reads_the_appended_lines_and_the_marked_rows(corpus, monkeypatch, tmp_path_factory):
    state = tmp_path_factory.mktemp("state") / "s"
    _, found = _incremental(corpus, state, monkeypatch)
    assert "event-id-unique" not in found["rules"]
    assert (state / "locations.pickle").is_file()
    _late(corpus)
    reads, found = _incremental(corpus, state, monkeypatch)  # equals a full check (`_incremental`)
    assert reads == {"a.jsonl": 1, "b.parquet": 1, EARLIER: 1}, reads  # no other earlier file
    assert found["rules"].count("event-id-unique") == 1 and found["total"] >= 2
    _late(corpus, "later")  # the same IDs once more: repeated before now, from the state's repeats alone
    reads, found = _incremental(corpus, state, monkeypatch)
    assert reads == {"a.jsonl": 1}, reads


def test_only_the_rows_of_the_mark_are_read(corpus, monkeypatch, tmp_path_factory):
    monkeypatch.setattr(statedir, "CHUNK", 4)  # a mark every 4 rows (the state begins with it)
    state = tmp_path_factory.mktemp("state") / "s"
    _incremental(corpus, state, monkeypatch)
    appended = _late(corpus)
    judged: list[int] = []
    real_line, real_batch = trace_io.check_line, locations.judge_batch

    def counted_line(*a, **kw):
        judged.append(1)
        return real_line(*a, **kw)

    def counted_batch(batch):
        judged.extend([1] * batch.num_rows)
        return real_batch(batch)

    monkeypatch.setattr(trace_io, "check_line", counted_line)
    monkeypatch.setattr(locations, "judge_batch", counted_batch)
    outcome = locations_check(corpus, state)
    monkeypatch.undo()
    full = pycheck.check_paths([str(corpus)])
    assert outcome.summary() == full.summary() and outcome.violations == full.violations
    assert len(judged) == appended + 4 + 4, judged  # the appended lines, one mark's rows of each earlier file


def locations_check(corpus: Path, state: Path):
    from conformance import incremental

    return incremental.check_incremental([str(corpus)], state, cap=pycheck.DEFAULT_CAP)


def test_twin_a_state_without_locations_reads_every_file(corpus, monkeypatch, tmp_path_factory):
    state = tmp_path_factory.mktemp("state") / "s"
    _incremental(corpus, state, monkeypatch)
    (state / "locations.pickle").unlink()  # where the saved events were read is not known
    _late(corpus)
    reads, found = _incremental(corpus, state, monkeypatch)
    assert reads == {**dict.fromkeys(_names(corpus), 1), "a.jsonl": 2}, reads  # every file read for TR-002
    assert "event-id-unique" in found["rules"]
    assert (state / "locations.pickle").is_file()  # the new events are marked from now on


def test_twin_a_mark_that_points_elsewhere_is_an_internal_error(corpus, monkeypatch, tmp_path_factory):
    state = tmp_path_factory.mktemp("state") / "s"
    _incremental(corpus, state, monkeypatch)
    _late(corpus)
    with (state / "locations.pickle").open("rb") as handle:
        marks = statedir.Marks.load(pickle.load(handle))
    marks.first = array("q", [max(0, i - 1) for i in marks.first])  # each mark one event early
    with (state / "locations.pickle").open("wb") as handle:
        pickle.dump(marks.dump(), handle)
    with pytest.raises(driver.InternalError, match="not the saved one"):
        locations_check(corpus, state)


def test_marks_find_and_round_trip():
    marks = statedir.Marks(chunk=2)
    marks.add(0, None)
    marks.add(3, "a.jsonl", 0, 1)
    marks.add(5, "a.jsonl", 40, 3)
    marks.add(5, "b.parquet", 0, 1)  # a part with no event: the next mark holds index 5
    assert marks.find(2) is None and marks.find(4) == (1, "a.jsonl", 0, 1)
    assert marks.find(5) == (3, "b.parquet", 0, 1)
    again = statedir.Marks.load(marks.dump())
    assert again == marks and again.find(9) == (3, "b.parquet", 0, 1)


@pytest.mark.parametrize("chunk", [7, 16, 1024])
def test_marks_across_row_groups_and_gzip(tmp_path, monkeypatch, tmp_path_factory, chunk):
    """Earlier events in a Parquet file of several row groups (a mark's rows may span two) and in a gzip JSON
    Lines file (its marks are offsets in the decompressed text): every ID of both used again in one append,
    each found from its mark, the report the full check's."""
    import gzip

    import pyarrow as pa
    import pyarrow.parquet as pq

    monkeypatch.setattr(statedir, "CHUNK", chunk)
    sr = read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events
    rows = [json.loads(line) for line in (SAMPLES_DIR / "clean" / "sr-s1.jsonl").read_text().splitlines()]
    table = pa.Table.from_pylist(list(trace_io._rows(sr[:120])), schema=trace_io.arrow_schema())
    pq.write_table(table, tmp_path / "b.parquet", row_group_size=25)
    assert pq.ParquetFile(tmp_path / "b.parquet").metadata.num_row_groups == 5
    text = (SAMPLES_DIR / "clean" / "net-s1.jsonl").read_bytes()
    with gzip.open(tmp_path / "c.jsonl.gz", "wb") as out:
        out.write(text)
    (tmp_path / "a.jsonl").write_bytes((SAMPLES_DIR / "clean" / "net-s2.jsonl").read_bytes())
    state = tmp_path_factory.mktemp("state") / "s"
    locations_check(tmp_path, state)
    net = [json.loads(line) for line in text.decode().splitlines()]
    again = [{**r, "trace_id": f"again-{n}", "seq": 0} for n, r in enumerate(rows[3:120:11] + net[2::9])]
    with (tmp_path / "a.jsonl").open("a") as out:
        out.writelines(json.dumps(r) + "\n" for r in again)
    monkeypatch.setattr(resume, "repeated_events", None)  # TR-002's read of every file: not called
    outcome = locations_check(tmp_path, state)
    monkeypatch.undo()
    full = pycheck.check_paths([str(tmp_path)])
    assert outcome.summary() == full.summary() and outcome.violations == full.violations
    dup = [v for v in outcome.violations if v["rule"] == "event-id-unique"]
    assert len(dup) == len(again) and all(len(v["events"]) == 2 for v in dup)


def test_spark_hashes_placed_in_file_order_and_found_again(tmp_path):
    """The Spark pass's hashes (session 14): sent in no file order with where each event was read, put in file
    order and marked (`locations.Placed`; JSON Lines marks by line, counted again past blank lines and in gzip);
    every event is found again from its mark. Twin: a file's lines off by one are an internal error."""
    import gzip
    import random

    import pyarrow as pa
    import pyarrow.parquet as pq

    sr = read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events[:60]
    table = pa.Table.from_pylist(list(trace_io._rows(sr)), schema=trace_io.arrow_schema())
    pq.write_table(table, tmp_path / "b.parquet", row_group_size=25)
    lines = (SAMPLES_DIR / "clean" / "am-s1.jsonl").read_text().splitlines()
    (tmp_path / "a.jsonl").write_text("".join(f"\n{line}\n\n" for line in lines))
    with gzip.open(tmp_path / "c.jsonl.gz", "wt") as out:
        out.write("".join(f"{line}\n" for line in (SAMPLES_DIR / "clean" / "net-s1.jsonl").read_text().splitlines()))
    files = trace_io.discover([str(tmp_path)]).files
    placed_at: list[tuple[int, int, str]] = []  # (rank, line, event ID) of every event
    for rank, tf in enumerate(files):
        if tf.kind == "parquet":
            placed_at += [(rank, row, e.event_id) for row, e in enumerate(read_events(tf.path).events, start=1)]
        else:
            placed_at += [(rank, n, json.loads(raw)["event_id"]) for n, raw in trace_io.jsonl_lines(tf)]

    def state_of(at: list[tuple[int, int, str]]) -> tuple[statedir.State, locations.Placed]:
        shuffled = random.Random(7).sample(at, len(at))
        blobs = []
        for part in (shuffled[:50], shuffled[50:51], shuffled[51:]):  # three tasks
            hashes = array("Q", [statedir.stable_hash(i) for _, _, i in part])
            blobs.append(
                locations.pack_located(hashes, array("i", [r for r, _, _ in part]), array("q", [n for _, n, _ in part]))
            )
        state = statedir.State(key={})
        state.marks.chunk = 4
        return state, locations.Placed(state, blobs, files)

    state, placed = state_of(placed_at)
    ordered = sorted(placed_at)
    assert list(state.hashes) == [statedir.stable_hash(i) for _, _, i in ordered]
    assert placed.index(*ordered[9][:2]) == 9
    assert len(state.marks.first) > len(files) and statedir.LINE_ONLY in list(state.marks.byte)
    paths = {tf.name: tf for tf in files}
    got = locations.locate(state.marks, paths, dict(enumerate(state.hashes)))
    assert [e.event_id for _, e in (got[i] for i in range(len(ordered)))] == [i for _, _, i in ordered]
    state, _ = state_of([(r, n + 1 if r == 0 else n, i) for r, n, i in ordered])  # a file's lines off by one
    with pytest.raises(driver.InternalError, match=r"not the saved one|past"):
        locations.locate(state.marks, paths, dict(enumerate(state.hashes)))
    with pytest.raises(driver.InternalError, match="not 20 bytes an event"):
        locations.unpack_located(b"x" * 21)
