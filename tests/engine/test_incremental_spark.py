"""Incremental checking with the Spark engine (`haconform check --state DIR --engine spark`): one state
format for both engines, so a state saved by either is continued by either, and the report of the check
that read only the new rows equals a full check of everything, by the engine that made the last run.

The corpus (`_corpus`): the clean and mutant samples and the damaged-input corpus (quarantined rows),
its JSON Lines files cut in half (traces continued across the two runs: lines appended) or held back
whole (new files), plus a new file whose event repeats an old event's ID (TR-002 across old and new).
Twins: a Spark incremental check that skips the appended lines gives another report; a trace whose new
events go back in seq, a file changed otherwise than by appends, and a state of another configuration
are refused (the first two checked anew, with the reason; the last exit 2), where an append in seq order
is continued without a word.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conformance import incremental, pycheck
from conformance.cli import main
from conformance.engine.statedir import StateError
from conformance.engine.trace_index import file_index
from spark_trace_check import incremental as spark_incremental
from spark_trace_check.job import check
from tests.damaged.corpus import CASES
from tests.engine.test_incremental import _grow, _report, assert_read_before_is_refused
from traces.corpus import SAMPLES_DIR
from traces.io import TraceFile

pytestmark = pytest.mark.spark


def _corpus(tmp: Path) -> tuple[Path, list[tuple[Path, bytes]]]:
    """The input directory as the first run sees it, and what comes later (see the module). The damaged
    corpus is read by the first run (its traces share names: none of them grows). Of the samples (clean,
    a third of the mutants), every third JSON Lines file comes later whole, the others in seq order are
    cut in half (a trace that breaks TR-001 is judged whole and cannot be continued: read whole first)."""
    where = tmp / "in"
    for case in CASES:
        if case.exit == 2 or case.extra_args:
            continue  # an unusable input has no report to compare
        case.build(_mkdir(where / "damaged" / case.name.replace("/", "_")))
    later: list[tuple[Path, bytes]] = []
    mutants = sorted((SAMPLES_DIR / "mutants").glob("*.jsonl"))
    mutants = [p for i, p in enumerate(mutants) if p.name.startswith("net--") or i % 3 == 0]  # a third: fast
    samples = sorted((SAMPLES_DIR / "clean").iterdir()) + mutants
    for i, path in enumerate(samples):
        data = path.read_bytes().replace(b'"trace_id":"net-s1"', b'"trace_id":"net-s1-clean"')  # damaged/ has it
        target = _mkdir(where / "samples" / path.parent.name) / path.name
        if path.suffix != ".jsonl":
            target.write_bytes(data)
        elif i % 3 == 2:
            later.append((target, data))
        elif all(inside for _, _, inside in file_index(TraceFile(path.name, str(path), "jsonl"))[1].values()):
            lines = data.splitlines(keepends=True)
            target.write_bytes(b"".join(lines[: len(lines) // 2]))
            later.append((target, b"".join(lines[len(lines) // 2 :]) + b"not json\n"))  # and a bad row
        else:
            target.write_bytes(data)
    old = json.loads((SAMPLES_DIR / "clean" / "sr-s1.jsonl").read_text().splitlines()[5])
    old["trace_id"] = "late-duplicate"  # a new trace reusing an old event's ID
    later.append((where / "zz-late.jsonl", (json.dumps(old) + "\n" + '{"seq": 1}\n').encode()))
    return where, later


def _mkdir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def _run(engine: str, spark, paths: list[str], state: Path):
    if engine == "spark":
        return spark_incremental.check_incremental(spark, paths, state, cap=pycheck.DEFAULT_CAP)
    return incremental.check_incremental(paths, state, cap=pycheck.DEFAULT_CAP)


def _full(engine: str, spark, paths: list[str]):
    return check(spark, paths) if engine == "spark" else pycheck.check_paths(paths)


@pytest.mark.parametrize("first,second", [("spark", "spark"), ("python", "spark"), ("spark", "python")])
def test_incremental_equals_full_across_engines(first, second, spark, tmp_path, capsys, monkeypatch):
    where, later = _corpus(tmp_path)
    paths, state = [str(where)], tmp_path / "state"
    before = _run(first, spark, paths, state)
    assert _report(before) == _report(_full(first, spark, paths)), "the first run is a full check"
    _grow(later)
    read: list[int] = []
    original = spark_incremental.read_segments
    monkeypatch.setattr(
        spark_incremental, "read_segments", lambda *a: read.append((raw := original(*a)).rows_read) or raw
    )
    inc = _run(second, spark, paths, state)
    full = _full(second, spark, paths)
    assert "anew" not in capsys.readouterr().err, "the saved state must be continued, not set aside"
    assert _report(inc) == _report(full)
    assert full.violations and full.quarantine, "mutants and damaged rows must show in the report"
    assert any(v["rule"] == "event-id-unique" and "late-duplicate" in json.dumps(v) for v in full.violations)
    if second == "spark":  # only the new rows were read
        assert read == [full.rows_read - before.rows_read] and 0 < read[0] < full.rows_read


def test_twin_spark_skipping_appended_lines_changes_the_report(spark, tmp_path, monkeypatch):
    src = tmp_path / "in"
    src.mkdir()
    lines = (SAMPLES_DIR / "mutants" / "sr--ack-before-shadow.jsonl").read_bytes().splitlines(keepends=True)
    (src / "sr.jsonl").write_bytes(b"".join(lines[: len(lines) // 2]))
    spark_incremental.check_incremental(spark, [str(src)], tmp_path / "st")
    _grow([(src / "sr.jsonl", b"".join(lines[len(lines) // 2 :]))])
    original = spark_incremental.segments
    monkeypatch.setattr(spark_incremental, "segments", lambda files, st: [s for s in original(files, st) if s[1] == 0])
    inc = spark_incremental.check_incremental(spark, [str(src)], tmp_path / "st")
    assert _report(inc) != _report(check(spark, [str(src)]))


def test_spark_refuses_what_cannot_be_continued(spark, tmp_path, capsys):
    src = tmp_path / "in"
    shutil.copytree(SAMPLES_DIR / "clean", src)
    state = tmp_path / "st"
    spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    with pytest.raises(StateError, match="skew_ms"):  # another configuration: exit 2
        spark_incremental.check_incremental(spark, [str(src)], state, cap=10, skew_ms=50)
    victim = sorted(src.glob("net-*.jsonl"))[0]
    lines = victim.read_bytes().splitlines(keepends=True)
    with open(victim, "ab") as handle:
        handle.write(lines[3])  # an earlier event again: its trace goes back in seq
    inc = spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    err = capsys.readouterr().err
    assert "not after" in err and "checking everything anew" in err
    assert _report(inc) == _report(check(spark, [str(src)], cap=10)) and inc.violations
    victim.write_bytes(b"".join(lines[:-1]))  # the file cut: not an append
    inc = spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    assert "changed since the saved check" in capsys.readouterr().err
    assert _report(inc) == _report(check(spark, [str(src)], cap=10))


def test_twin_an_append_in_seq_order_is_continued_quietly(spark, tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    lines = (SAMPLES_DIR / "clean" / "net-s1.jsonl").read_bytes().splitlines(keepends=True)
    (src / "net.jsonl").write_bytes(b"".join(lines[:-3]))
    spark_incremental.check_incremental(spark, [str(src)], tmp_path / "st", cap=10)
    _grow([(src / "net.jsonl", b"".join(lines[-3:]))])
    inc = spark_incremental.check_incremental(spark, [str(src)], tmp_path / "st", cap=10)
    assert capsys.readouterr().err == "" and inc.verdict == "valid" and inc.rows_read == len(lines)


def test_cli_state_with_the_spark_engine(spark, tmp_path, capsys):
    src = tmp_path / "in"
    src.mkdir()
    for name in ("sr--ack-before-shadow.jsonl", "net--seq-repeat.jsonl"):
        shutil.copyfile(SAMPLES_DIR / "mutants" / name, src / name)
    out, st = tmp_path / "out", str(tmp_path / "st")
    args = ["check", str(src), "--state", st, "--engine", "spark", "--quiet"]
    assert main([*args, "--out", str(out)]) == 1 and (tmp_path / "st" / "state.json").is_file()
    assert main([*args, "--out", str(tmp_path / "o2")]) == 1
    assert (out / "violations.jsonl").read_bytes() == (tmp_path / "o2" / "violations.jsonl").read_bytes()
    assert main([*args[:-3], "--engine", "python", "--quiet", "--out", str(tmp_path / "o3")]) == 1
    assert (out / "violations.jsonl").read_bytes() == (tmp_path / "o3" / "violations.jsonl").read_bytes()
    capsys.readouterr()
    assert main([*args[:-3], "--out", str(tmp_path / "o4")]) == 1  # auto: sized by the new events, none
    assert "engine python (auto): --state: the new events only; ~0 events" in capsys.readouterr().err
    assert main([*args, "--skew", "50", "--out", str(out)]) == 2  # another configuration: refused
    err = capsys.readouterr().err
    assert st in err and "skew_ms" in err
    assert json.loads((out / "summary.json").read_text())["verdict"] == "unusable"  # never a stale verdict


def test_spark_refuses_new_events_in_a_file_read_before_the_saved_ones(spark, tmp_path, capsys, monkeypatch):
    """As the single-process engine (tests/engine/test_incremental.py): a saved trace's later events in a
    new file read before its saved ones are checked anew. Twin: without that check the report differs."""
    assert_read_before_is_refused(
        tmp_path,
        capsys,
        lambda: monkeypatch.setattr(spark_incremental, "check_after", lambda *a: None),
        lambda paths, state: spark_incremental.check_incremental(spark, paths, state, cap=10),
        lambda paths: check(spark, paths, cap=10),
    )


def _known_repeat(tmp_path: Path, spark) -> tuple[Path, Path]:
    """A corpus whose ID is repeated across two files, checked by Spark with a new state, then a third event
    of that ID appended (no hash repeats for the first time)."""
    src = tmp_path / "in"
    src.mkdir()
    lines = (SAMPLES_DIR / "clean" / "net-s1.jsonl").read_text().splitlines(keepends=True)
    (src / "a.jsonl").write_text("".join(lines))
    again = [json.dumps({**json.loads(lines[4]), "trace_id": name, "seq": 0}) + "\n" for name in ("dup", "dup-3")]
    (src / "b.jsonl").write_text(again[0])
    state = tmp_path / "st"
    spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    _grow([(src / "b.jsonl", again[1].encode())])
    return src, state


def _full_reads(monkeypatch) -> list[int]:
    """Calls of TR-002's read of every file (`resume.repeated_events`), counted."""
    from conformance.engine import resume as resume_module

    calls: list[int] = []
    real = resume_module.repeated_events
    monkeypatch.setattr(resume_module, "repeated_events", lambda *a: calls.append(1) or real(*a))
    return calls


def test_spark_tr002_from_the_saved_repeats_and_the_pass(spark, tmp_path, monkeypatch):
    """The third event of an ID repeated before: its event comes back from the pass (`Keep.repeated`), TR-002
    from it and the saved repeats, no file read again; the report is the full Spark check's."""
    src, state = _known_repeat(tmp_path, spark)
    calls = _full_reads(monkeypatch)
    inc = spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    assert calls == [], "TR-002 read every file again"
    assert _report(inc) == _report(check(spark, [str(src)], cap=10))
    dup = [v for v in inc.violations if v["rule"] == "event-id-unique"]
    assert dup and len(dup[0]["events"]) == 3


def test_twin_spark_without_the_pass_candidates_reads_every_file(spark, tmp_path, monkeypatch):
    src, state = _known_repeat(tmp_path, spark)
    calls = _full_reads(monkeypatch)
    monkeypatch.setattr(spark_incremental, "repeated_before", lambda st: None)  # the old driver: nothing kept
    inc = spark_incremental.check_incremental(spark, [str(src)], state, cap=10)
    assert len(calls) == 2, calls  # every file read for the repeated hash
    assert _report(inc) == _report(check(spark, [str(src)], cap=10))
