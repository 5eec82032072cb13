"""Every file is read once by the single-process engine (issue 32), counted by wrapping its openers.

A corpus with violations of several rules (mutant samples, one trace out of seq order among them), a
duplicate event ID planted across two files (TR-002) and a Parquet file is checked, and the data reads of
each file are counted: a JSON Lines file's opens in `traces.io` after discovery (every reader of the engine
goes through `traces.io.jsonl_lines`; discovery reads each file's first 4 KB, `traces.io.sniff`), a
Parquet file's `pq.ParquetFile` and `pq.read_table` (its footer, read for the schema, is not data).
Read once whole (the default for a corpus within `pycheck.ONCE_EVENTS`): one read per file, violations
with their events and the TR-002 violation found. Indexed and read in units: two reads per file (the
index, the unit), none more for the violations' events or TR-002's candidates, and the same findings.
Twins: the same counter sees the index read of the streamed path (two, not one); a unit engine that keeps
no event (`driver.KEEP_EVENTS` 0: the old second read for the violations' events) and an index that tells
no event ID (TR-002's exact second read) each read files a third time.
Incremental checking (`conformance.incremental`) reads each new segment once: seq order is checked as the
rows are folded (`stream.Router.watch`), no index first; a later check reads only the appended lines, once,
and both reports equal a full check's. Twin: with nothing kept (`driver.KEEP_EVENTS` 0) the trace out of
seq order and the violations' events are read again from the segments. With an ID repeated, the state
keeps the events of its hash (`repeats.pickle`) and the rerun reads only the appended lines; twin: a state
without them reads every file again for TR-002. Shrink (`conformance.shrink`) reads its input once
(`pycheck.check_held`: the report and the trace's events from one read); twin: the old second read of the
trace is counted.
"""

from __future__ import annotations

import builtins
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conformance import incremental, pycheck
from conformance import shrink as shrink_module
from conformance.engine import driver, trace_index
from traces import io as trace_io
from traces.corpus import SAMPLES_DIR
from traces.io import read_events, write_events

pytestmark = pytest.mark.unit

MUTANTS = ("net--seq-repeat.jsonl", "net--clock-backwards.jsonl", "sr--double-send.jsonl")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    for name in MUTANTS:
        shutil.copy(SAMPLES_DIR / "mutants" / name, tmp_path / name)
    a = read_events(SAMPLES_DIR / "clean" / "net-s1.jsonl").events
    b = read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events
    stolen = a[5].event_id
    b[7] = type(b[7])(**{**{s: getattr(b[7], s) for s in b[7].__slots__}, "event_id": stolen})
    write_events(tmp_path / "a.jsonl", a)
    write_events(tmp_path / "b.parquet", b)
    return tmp_path


def _reads(monkeypatch: pytest.MonkeyPatch, driver=pycheck) -> Counter[str]:
    """Data reads per file name, counted once `driver`'s discovery is done (it reads each file's first 4 KB
    to tell what it holds, `traces.io.sniff`)."""
    reads: Counter[str] = Counter()
    real_open, real_file, real_table, real_discover = builtins.open, pq.ParquetFile, pq.read_table, driver.discover
    found = []

    def discover(paths):
        out = real_discover(paths)
        found.append(out)
        return out

    def counted_open(path, *args, **kw):
        if found:
            reads[Path(path).name] += 1
        return real_open(path, *args, **kw)

    def counted_file(path, *args, **kw):
        reads[Path(path).name] += 1
        return real_file(path, *args, **kw)

    def counted_table(path, *args, **kw):
        reads[Path(path).name] += 1
        return real_table(path, *args, **kw)

    monkeypatch.setattr(driver, "discover", discover)
    monkeypatch.setattr(trace_io, "open", counted_open, raising=False)
    monkeypatch.setattr(pq, "ParquetFile", counted_file)
    monkeypatch.setattr(pq, "read_table", counted_table)
    return reads


def _check(corpus: Path, monkeypatch: pytest.MonkeyPatch, once: int) -> tuple[Counter[str], dict]:
    monkeypatch.setattr(pycheck, "ONCE_EVENTS", once)
    reads = _reads(monkeypatch)
    outcome = pycheck.check_paths([str(corpus)])
    summary = {
        "rules": sorted({v["rule"] for v in outcome.violations}),
        "events": all(v["events"] for v in outcome.violations),
        "total": outcome.violations_total,
    }
    return reads, summary


def _names(corpus: Path) -> list[str]:
    return sorted(p.name for p in corpus.iterdir())


def test_read_once_whole_reads_every_file_once(corpus, monkeypatch):
    reads, found = _check(corpus, monkeypatch, pycheck.ONCE_EVENTS)
    assert reads == dict.fromkeys(_names(corpus), 1)
    assert "event-id-unique" in found["rules"] and len(found["rules"]) >= 4 and found["events"]


def test_units_read_every_file_twice_index_and_unit(corpus, monkeypatch):
    once = _check(corpus, monkeypatch, pycheck.ONCE_EVENTS)[1]
    reads, found = _check(corpus, monkeypatch, 0)
    assert reads == dict.fromkeys(_names(corpus), 2)  # the index, then the unit: no read for events or TR-002
    assert found == once


def test_twin_a_second_read_for_the_violations_events_is_counted(corpus, monkeypatch):
    monkeypatch.setattr(driver, "KEEP_EVENTS", 0)  # the engine keeps no event: the old re-read
    reads, found = _check(corpus, monkeypatch, 0)
    assert found["events"]
    assert max(reads.values()) > 2, reads


def test_twin_a_second_read_for_tr002_candidates_is_counted(corpus, monkeypatch):
    monkeypatch.setattr(trace_index, "_jsonl_event_id", lambda line: None)  # no candidate known beforehand
    reads, found = _check(corpus, monkeypatch, 0)
    assert "event-id-unique" in found["rules"]
    assert reads["a.jsonl"] == 3 and reads["b.parquet"] == 3, reads


def _unit_hashes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of event-ID hashes each unit's read returned (filled as `check_paths` runs)."""
    seen: list[int] = []
    real = pycheck.judge_unit

    def judge(*args, **kw):
        result = real(*args, **kw)
        seen.append(len(result.hashes))
        return result

    monkeypatch.setattr(pycheck, "judge_unit", judge)
    return seen


def test_units_hash_no_event_id_the_index_hashed(corpus, monkeypatch):
    """Session 13: the index hashed every row's ID, so the units hash none again (only to keep the events of
    the repeated hashes) and TR-002 is found from the index's hashes and those kept events."""
    once = _check(corpus, monkeypatch, pycheck.ONCE_EVENTS)[1]
    seen = _unit_hashes(monkeypatch)
    reads, found = _check(corpus, monkeypatch, 0)
    assert seen and not any(seen)
    assert found == once and reads == dict.fromkeys(_names(corpus), 2)


def test_twin_an_index_that_missed_an_id_has_the_units_hash_again(corpus, monkeypatch):
    once = _check(corpus, monkeypatch, pycheck.ONCE_EVENTS)[1]
    real = trace_index._jsonl_event_id
    monkeypatch.setattr(trace_index, "_jsonl_event_id", lambda line: None if b'"seq":0,' in line else real(line))
    seen = _unit_hashes(monkeypatch)
    found = _check(corpus, monkeypatch, 0)[1]
    assert sum(seen) > 0 and found == once


def _incremental(corpus: Path, state: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Counter[str], dict]:
    reads = _reads(monkeypatch, incremental)
    outcome = incremental.check_incremental([str(corpus)], state, cap=pycheck.DEFAULT_CAP)
    monkeypatch.undo()
    full = pycheck.check_paths([str(corpus)])
    assert outcome.summary() == full.summary() and outcome.violations == full.violations
    return reads, {"rules": sorted({v["rule"] for v in outcome.violations}), "total": outcome.violations_total}


def test_incremental_reads_each_new_segment_once(corpus, monkeypatch, tmp_path_factory):
    # without the planted duplicate: TR-002's exact read over the whole corpus is not the subject here
    write_events(corpus / "b.parquet", read_events(SAMPLES_DIR / "clean" / "sr-s1.jsonl").events)
    state = tmp_path_factory.mktemp("state") / "s"
    reads, found = _incremental(corpus, state, monkeypatch)  # a new state: every file is new
    assert reads == dict.fromkeys(_names(corpus), 1), reads  # folded in the pass that finds their traces
    assert "seq-strictly-increasing" in found["rules"] and "event-id-unique" not in found["rules"]
    new = read_events(SAMPLES_DIR / "clean" / "net-s2.jsonl").events
    write_events(corpus / "new.jsonl", new)
    with (corpus / "a.jsonl").open("ab") as out:  # lines appended to a file read before
        out.write((corpus / "new.jsonl").read_bytes())
    (corpus / "new.jsonl").unlink()
    reads, _ = _incremental(corpus, state, monkeypatch)
    assert reads == {"a.jsonl": 1}, reads  # only the appended lines, once


def test_twin_incremental_past_the_engines_bound_reads_again(corpus, monkeypatch, tmp_path_factory):
    monkeypatch.setattr(driver, "KEEP_EVENTS", 0)  # nothing kept: the held trace and the events read again
    reads, found = _incremental(corpus, tmp_path_factory.mktemp("state") / "s", monkeypatch)
    assert "seq-strictly-increasing" in found["rules"]
    assert max(reads.values()) > 1, reads


def test_shrink_reads_its_input_once(tmp_path, monkeypatch):
    shutil.copy(SAMPLES_DIR / "mutants" / "net--recv-without-send.jsonl", tmp_path / "t.jsonl")
    reads = _reads(monkeypatch)  # counted from the engine's discovery on (`pycheck.check_held`)
    result = shrink_module.shrink(str(tmp_path / "t.jsonl"), "recv-after-send")
    assert reads == {"t.jsonl": 1} and result.events, reads  # the report and the trace's events: one read


def test_twin_shrink_reading_its_trace_again_is_counted(tmp_path, monkeypatch):
    shutil.copy(SAMPLES_DIR / "mutants" / "net--recv-without-send.jsonl", tmp_path / "t.jsonl")
    reads = _reads(monkeypatch)
    real = pycheck.check_held

    def and_again(paths, **kw):  # the old way: the report, then the trace read again for its events
        outcome, _ = real(paths, **kw)
        return outcome, [
            e for tf in trace_io.discover(paths).files for p in trace_io.iter_trace_file(tf) for e in p.events
        ]

    monkeypatch.setattr(pycheck, "check_held", and_again)
    shrink_module.shrink(str(tmp_path / "t.jsonl"), "recv-after-send")
    assert reads["t.jsonl"] > 1, reads


def test_incremental_with_a_repeated_id_reads_only_the_new_segments(corpus, monkeypatch, tmp_path_factory):
    """The planted duplicate stays repeated: its events are in the saved state (`repeats.pickle`), the
    rerun keeps the new events of its hash, and TR-002 reads no earlier file."""
    state = tmp_path_factory.mktemp("state") / "s"
    _, found = _incremental(corpus, state, monkeypatch)
    assert "event-id-unique" in found["rules"]
    _append(corpus, "net-s2.jsonl")
    reads, found = _incremental(corpus, state, monkeypatch)
    assert reads == {"a.jsonl": 1}, reads  # only the appended lines, once; TR-002 from the state
    assert "event-id-unique" in found["rules"]


def test_twin_a_state_without_its_repeats_reads_every_file_for_tr002(corpus, monkeypatch, tmp_path_factory):
    state = tmp_path_factory.mktemp("state") / "s"
    _incremental(corpus, state, monkeypatch)
    (state / "repeats.pickle").unlink()  # the state does not know its repeated hashes' events
    _append(corpus, "net-s2.jsonl")
    reads, found = _incremental(corpus, state, monkeypatch)
    assert reads == {**dict.fromkeys(_names(corpus), 1), "a.jsonl": 2}, reads  # every file read again for TR-002
    assert "event-id-unique" in found["rules"]


def _append(corpus: Path, sample: str) -> None:
    """The events of a clean sample appended to a.jsonl (a file read before) as JSON Lines."""
    write_events(corpus / "new.jsonl", read_events(SAMPLES_DIR / "clean" / sample).events)
    with (corpus / "a.jsonl").open("ab") as out:
        out.write((corpus / "new.jsonl").read_bytes())
    (corpus / "new.jsonl").unlink()
