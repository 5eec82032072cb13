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
"""

from __future__ import annotations

import builtins
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conformance import pycheck
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


def _reads(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Data reads per file name, counted once discovery is done (it reads each file's first 4 KB to tell
    what it holds, `traces.io.sniff`)."""
    reads: Counter[str] = Counter()
    real_open, real_file, real_table, real_discover = builtins.open, pq.ParquetFile, pq.read_table, pycheck.discover
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

    monkeypatch.setattr(pycheck, "discover", discover)
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
