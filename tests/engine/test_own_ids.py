"""TR-002 without hashing IDs that name their own event (session 29, issue 32: `trace_index.unique_ids`).

The single-process check hashes every event ID in its index pass and sorts the hashes to find those seen twice
(3.3% of a 10^7 check). An ID `<trace_id>:<seq>` (or `-<seq>`) repeats only with its trace and seq
(`conformance.engine.event_ids.own_id`), so a corpus whose every row names its own event and whose every trace is
in strict seq order holds no repeated ID: its files are not hashed (`index_file(..., skip_own=True)`, checked
column-wise) and TR-002 has nothing to find. Anything else is hashed as before.

Checked: the column-wise test per file (each separator; a non-own ID, a negative seq, a row without a trace or an
ID are noes); `unique_ids` over files; the report of a Parquet corpus of own IDs is the report with every ID hashed
(`SKIP_OWN_IDS` False), without the sort. Twins, each a TR-002 violation the shortcut must not hide: an own ID
repeated (a trace's seq written in two files) is found, and a shortcut that ignores seq order misses it; an ID in a
file of other IDs that spells an own ID of another file is found, and a shortcut that asks only the own files
misses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance import pycheck
from conformance.engine import units
from conformance.engine.trace_index import FileIndex, index_file, unique_ids
from model.registry import monitor_runs
from traces.corpus import SAMPLES_DIR
from traces.dataset import id_hash
from traces.io import discover, read_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.unit

SOURCES = ("clean/sr-s1.jsonl", "clean/am-s1.jsonl", "clean/pf-s1.jsonl")


def _rows(name: str) -> list[dict]:
    rows = []
    for e in read_events(SAMPLES_DIR / name).events:
        row = e.to_row()
        row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
        rows.append(row)
    return rows


def _write(path: Path, rows: list[dict]) -> Path:
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return path


def _index(path: Path) -> FileIndex:
    (tf,) = discover([str(path)]).files
    return index_file(tf, hash_of=id_hash, skip_own=True)


def _report(paths: list[str], monkeypatch: pytest.MonkeyPatch, skip: bool = True) -> tuple[dict, int]:
    """The report of a check read in units (never once whole), and how many times the hashes were sorted."""
    sorts = []
    real = pycheck.repeated_hashes
    monkeypatch.setattr(pycheck, "ONCE_EVENTS", 0)
    monkeypatch.setattr(pycheck, "SKIP_OWN_IDS", skip)
    monkeypatch.setattr(pycheck, "repeated_hashes", lambda h: sorts.append(len(h)) or real(h))
    outcome = pycheck.check_paths(paths)
    report = {
        "summary": outcome.summary(),
        "violations": outcome.violations,
        "quarantine": outcome.quarantine,
        "unknown": outcome.unknown,
    }
    return report, len(sorts)


def _tr002(report: dict) -> list[dict]:
    return [v for v in report["violations"] if v.get("requirement") == "TR-002" or v.get("rule") == "event-id-unique"]


# --- the column-wise test of a file -------------------------------------------------------------------------------


def test_a_file_of_own_ids_is_not_hashed(tmp_path: Path) -> None:
    rows = _rows(SOURCES[0])
    assert all(r["event_id"] == f"{r['trace_id']}:{r['seq']}" for r in rows)  # the simulators' IDs
    entry = _index(_write(tmp_path / "a.parquet", rows))
    assert entry.own and len(entry.ids) == 0 and entry.rows == len(rows)
    for r in rows[::2]:
        r["event_id"] = f"{r['trace_id']}-{r['seq']}"  # the harnesses' separator, mixed with the recorder's
    assert _index(_write(tmp_path / "b.parquet", rows)).own


@pytest.mark.parametrize(
    "change",
    [
        lambda r: r.update(event_id="x" + r["event_id"]),  # an ID of another form
        lambda r: r.update(event_id=f"{r['trace_id']}:{r['seq'] + 1}"),  # another event's own ID
        lambda r: r.update(event_id=f"{r['trace_id']}:0{r['seq']}"),  # the seq not as `str` writes it
        lambda r: r.update(seq=-1, event_id=f"{r['trace_id']}:-1"),  # a negative seq
        lambda r: r.update(event_id=None),
        lambda r: r.update(trace_id=None),
    ],
    ids=["other-form", "other-event", "leading-zero", "negative-seq", "no-id", "no-trace"],
)
def test_a_file_with_one_row_not_its_own_is_hashed_whole(tmp_path: Path, change) -> None:
    rows = _rows(SOURCES[1])
    change(rows[5])
    entry = _index(_write(tmp_path / "a.parquet", rows))
    assert not entry.own
    assert len(entry.ids) == sum(1 for r in rows if r["event_id"] is not None)  # every ID it can tell, hashed


def test_unique_ids_needs_every_file_own_and_every_trace_in_order() -> None:
    own = FileIndex({"t": 3}, {"t": (0, 2, True)}, 3, own=True)  # type: ignore[arg-type]
    later = FileIndex({"t": 2}, {"t": (3, 4, True)}, 2, own=True)  # type: ignore[arg-type]
    assert unique_ids([own, later])
    assert not unique_ids([])
    assert not unique_ids([own, later._replace(own=False)])
    assert not unique_ids([own, later._replace(spans={"t": (2, 4, True)})])  # seq 2 again in the second file
    assert not unique_ids([own._replace(spans={"t": (0, 2, False)})])  # out of order within the file


# --- the check ------------------------------------------------------------------------------------------------------


def _corpus(tmp_path: Path) -> list[list[dict]]:
    files = [_rows(name) for name in SOURCES]
    for n, rows in enumerate(files):
        _write(tmp_path / f"f{n}.parquet", rows)
    return files


def test_a_corpus_of_own_ids_is_judged_without_hashes_and_as_before(tmp_path: Path, monkeypatch) -> None:
    _corpus(tmp_path)
    fast, sorts = _report([str(tmp_path)], monkeypatch)
    reference, reference_sorts = _report([str(tmp_path)], monkeypatch, skip=False)
    assert sorts == 0 and reference_sorts == 1  # the shortcut taken; the reference hashes and sorts
    assert fast == reference
    assert fast["summary"]["rows_checked"] > 0 and not _tr002(fast)


def test_twin_an_own_id_repeated_is_found_and_needs_the_seq_order(tmp_path: Path, monkeypatch) -> None:
    files = _corpus(tmp_path)
    _write(tmp_path / "f3.parquet", [files[0][7]])  # sr-s1's seq 7 again, in another file: its own ID twice
    fast, sorts = _report([str(tmp_path)], monkeypatch)
    reference, _ = _report([str(tmp_path)], monkeypatch, skip=False)
    assert sorts == 1 and fast == reference  # not in order: hashed after all
    assert _tr002(fast)
    # a shortcut that trusts own IDs without the seq order hides the repeated ID
    monkeypatch.setattr(units, "unique_ids", lambda index: all(e.own for e in index))
    hidden, _ = _report([str(tmp_path)], monkeypatch)
    assert not _tr002(hidden)


def test_twin_an_id_spelling_another_files_own_id_is_found(tmp_path: Path, monkeypatch) -> None:
    files = _corpus(tmp_path)
    spelled = dict(files[1][0], trace_id="x-trace", seq=0, event_id=files[0][3]["event_id"])  # "sr-s1:3"
    _write(tmp_path / "f3.parquet", [spelled])  # a file of IDs not their own: hashed
    fast, sorts = _report([str(tmp_path)], monkeypatch)
    reference, _ = _report([str(tmp_path)], monkeypatch, skip=False)
    assert sorts == 1 and fast == reference
    assert _tr002(fast)
    # a shortcut that asks only the own files (the other file's IDs not its own) hides the repeated ID
    monkeypatch.setattr(units, "unique_ids", lambda index: unique_ids([e for e in index if e.own]))
    hidden, _ = _report([str(tmp_path)], monkeypatch)
    assert not _tr002(hidden)


# --- a component judged whole (the Spark one-job plan's task, `units.judge_component`) ------------------------------


def _component(tmp_path: Path, twice: bool) -> tuple[list, list[int]]:
    """sr-s1 over two files, one component; with `twice`, its seq 7 written again in the second."""
    rows = _rows(SOURCES[0])
    half = len(rows) // 2
    _write(tmp_path / "a.parquet", rows[:half])
    _write(tmp_path / "b.parquet", rows[half:] + ([rows[7]] if twice else []))
    return discover([str(tmp_path)]).files, [0, 1]


def test_a_component_of_own_ids_in_order_hands_on_no_hash(tmp_path: Path) -> None:
    files, ranks = _component(tmp_path, twice=False)
    runs = monitor_runs()
    index, results, hashes = units.judge_component(files, ranks, runs)
    assert [e.own for e in index] == [True, True] and len(hashes) == 0
    reference, reference_results, every = units.judge_component(files, ranks, runs, skip_own=False)
    assert [e.own for e in reference] == [False, False] and len(every) == sum(e.rows for e in index)
    assert [r.violations for r in results] == [r.violations for r in reference_results]


def test_twin_a_component_with_an_own_id_twice_hands_on_every_hash(tmp_path: Path, monkeypatch) -> None:
    files, ranks = _component(tmp_path, twice=True)
    index, _, hashes = units.judge_component(files, ranks, monitor_runs())
    assert not any(e.own for e in index) and len(hashes) == sum(e.rows for e in index)
    assert len(set(hashes)) == len(hashes) - 1  # the repeated ID's hash, twice: the shuffle finds it
    # a component that trusts own IDs without the seq order hands on nothing: the repeated ID would be missed
    monkeypatch.setattr(units, "unique_ids", lambda index: all(e.own for e in index))
    _, _, hidden = units.judge_component(files, ranks, monitor_runs())
    assert len(hidden) == 0
