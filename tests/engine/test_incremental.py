"""Incremental checking (`haconform check --state DIR`): the report of a check that read only the new events
equals the report of a full check of everything (clean, mutant and damaged corpora, appended lines and new
files), and a state that cannot be used is refused or set aside with the reason.

Twin: an incremental check that does not read the appended lines (a broken `segments`) gives another report,
so the comparison can fail.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conformance import incremental, pycheck
from conformance.engine import driver, resume
from conformance.engine.statedir import StateError
from tests.damaged.corpus import CASES
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit


def _report(outcome) -> dict:
    return {
        "summary": outcome.summary(),
        "violations": outcome.violations,
        "quarantine": outcome.quarantine,
        "unknown": outcome.unknown,
    }


def _halves(src: Path, dst: Path) -> list[tuple[Path, bytes]]:
    """Copy `src`'s files into `dst`: JSON Lines files cut in half (the rest returned, to append later),
    every third file held back whole (returned, to add later); Parquet files copied."""
    dst.mkdir(parents=True, exist_ok=True)
    later: list[tuple[Path, bytes]] = []
    for i, path in enumerate(sorted(p for p in src.rglob("*") if p.is_file())):
        target = dst / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix != ".jsonl":
            shutil.copyfile(path, target)
        elif i % 3 == 2:
            later.append((target, path.read_bytes()))
        else:
            lines = path.read_bytes().splitlines(keepends=True)
            cut = len(lines) // 2
            target.write_bytes(b"".join(lines[:cut]))
            later.append((target, b"".join(lines[cut:])))
    return later


def _grow(later: list[tuple[Path, bytes]]) -> None:
    for target, rest in later:
        with open(target, "ab") as handle:
            handle.write(rest)


def _two_steps(corpus: Path, tmp: Path) -> tuple[dict, dict]:
    later = _halves(corpus, tmp / "in")
    state = tmp / "state"
    incremental.check_incremental([str(tmp / "in")], state, cap=pycheck.DEFAULT_CAP)
    _grow(later)
    inc = incremental.check_incremental([str(tmp / "in")], state, cap=pycheck.DEFAULT_CAP)
    full = pycheck.check_paths([str(tmp / "in")])
    return _report(inc), _report(full)


@pytest.mark.parametrize("corpus", ["clean", pytest.param("mutants", marks=pytest.mark.model)])
def test_incremental_equals_full(corpus, tmp_path):
    inc, full = _two_steps(SAMPLES_DIR / corpus, tmp_path)
    assert inc == full
    if corpus == "mutants":
        assert full["violations"]


def test_incremental_equals_full_on_damaged_inputs(tmp_path):
    src = tmp_path / "damaged"
    for case in CASES:
        if case.exit == 2 or case.extra_args:
            continue  # an unusable input has no report to compare
        where = src / case.name.replace("/", "_")
        where.mkdir(parents=True)
        case.build(where)
    inc, full = _two_steps(src, tmp_path / "work")
    assert inc == full
    assert full["quarantine"], "the damaged corpus must quarantine rows for this test to mean anything"


def test_a_third_step_with_nothing_new_reads_nothing(tmp_path, monkeypatch):
    later = _halves(SAMPLES_DIR / "clean", tmp_path / "in")
    state = tmp_path / "state"
    incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    _grow(later)
    second = incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    read: list[str] = []
    original = incremental.iter_trace_file
    for module in (incremental, resume):  # the driver's reader, and the shared one (events of violations)
        monkeypatch.setattr(module, "iter_trace_file", lambda tf, *a: read.append(tf.name) or original(tf, *a))
    third = incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    assert read == [] and _report(third) == _report(second)


def test_twin_skipping_appended_lines_changes_the_report(tmp_path, monkeypatch):
    later = _halves(SAMPLES_DIR / "mutants", tmp_path / "in")
    state = tmp_path / "state"
    incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    _grow(later)
    original = incremental.segments
    monkeypatch.setattr(incremental, "segments", lambda files, st: [s for s in original(files, st) if s[1] == 0])
    inc = incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    assert _report(inc) != _report(pycheck.check_paths([str(tmp_path / "in")]))


def test_state_of_another_configuration_is_refused(tmp_path):
    incremental.check_incremental([str(SAMPLES_DIR / "clean")], tmp_path / "st", cap=10)
    with pytest.raises(StateError, match="skew_ms"):
        incremental.check_incremental([str(SAMPLES_DIR / "clean")], tmp_path / "st", cap=10, skew_ms=50)
    (tmp_path / "junk").mkdir()
    with pytest.raises(StateError, match="not a haconform state directory"):
        incremental.check_incremental([str(SAMPLES_DIR / "clean")], tmp_path / "junk", cap=10)


def test_a_changed_file_is_checked_anew_with_the_reason(tmp_path, capsys):
    src = tmp_path / "in"
    shutil.copytree(SAMPLES_DIR / "clean", src)
    incremental.check_incremental([str(src)], tmp_path / "st", cap=10)
    victim = sorted(src.glob("*.jsonl"))[0]
    lines = victim.read_bytes().splitlines(keepends=True)
    victim.write_bytes(b"".join(lines[:-1]))  # the last line removed: not an append
    inc = incremental.check_incremental([str(src)], tmp_path / "st", cap=10)
    assert "changed since the saved check" in capsys.readouterr().err
    assert _report(inc) == _report(pycheck.check_paths([str(src)], cap=10))


def test_cli_state_option(tmp_path):
    from conformance.cli import main

    out = tmp_path / "out"
    code = main(["check", str(SAMPLES_DIR / "clean"), "--state", str(tmp_path / "st"), "--out", str(out), "--quiet"])
    assert code == 0 and (tmp_path / "st" / "state.json").is_file()
    again = main(["check", str(SAMPLES_DIR / "clean"), "--state", str(tmp_path / "st"), "--out", str(tmp_path / "o2")])
    assert again == 0
    assert (out / "violations.jsonl").read_bytes() == (tmp_path / "o2" / "violations.jsonl").read_bytes()


def test_appended_events_going_back_in_seq_are_checked_anew(tmp_path, capsys):
    src = tmp_path / "in"
    shutil.copytree(SAMPLES_DIR / "clean", src)
    incremental.check_incremental([str(src)], tmp_path / "st", cap=10)
    victim = sorted(src.glob("net-*.jsonl"))[0]
    lines = victim.read_bytes().splitlines(keepends=True)
    with open(victim, "ab") as handle:
        handle.write(lines[3])  # an earlier event again: its seq goes back (TR-001), its ID repeats (TR-002)
    inc = incremental.check_incremental([str(src)], tmp_path / "st", cap=10)
    assert "checking everything anew" in capsys.readouterr().err
    full = pycheck.check_paths([str(src)], cap=10)
    assert _report(inc) == _report(full) and full.violations


def test_new_events_in_a_file_read_before_the_saved_ones_are_checked_anew(tmp_path, capsys, monkeypatch):
    """A trace's later events in a new file that is read before the file holding its saved events come
    first in recording order: a full check finds its seqs going back (TR-001), so its folds cannot go on.
    Twin: with that check removed, the incremental report differs from the full one."""
    assert_read_before_is_refused(
        tmp_path,
        capsys,
        lambda: monkeypatch.setattr(incremental, "check_after", lambda *a: None),
        lambda paths, state: incremental.check_incremental(paths, state, cap=10),
        lambda paths: pycheck.check_paths(paths, cap=10),
    )


def assert_read_before_is_refused(tmp_path: Path, capsys, skip_check, run, full_check) -> None:
    """The case above for a driver: `run(paths, state)` its incremental check, `full_check(paths)` its full
    check, `skip_check()` removes its order check (the twin)."""
    src = tmp_path / "in"
    src.mkdir()
    lines = (SAMPLES_DIR / "clean" / "net-s1.jsonl").read_bytes().splitlines(keepends=True)
    for state, twin in ((tmp_path / "st", False), (tmp_path / "twin", True)):
        (src / "a.jsonl").unlink(missing_ok=True)
        (src / "b.jsonl").write_bytes(b"".join(lines[:100]))
        run([str(src)], state)
        (src / "a.jsonl").write_bytes(b"".join(lines[100:]))  # the rest of the trace, in a file read first
        if twin:
            skip_check()
        inc = run([str(src)], state)
        full = full_check([str(src)])
        assert full.violations
        if twin:
            assert _report(inc) != _report(full)
        else:
            assert "which is read before" in capsys.readouterr().err
            assert _report(inc) == _report(full)


@pytest.mark.parametrize("keep", [None, 0], ids=["kept", "twin-nothing-kept"])
def test_new_violations_take_their_events_from_the_read(tmp_path, monkeypatch, keep):
    """The second step's new violations get their events from the events its read kept (issue 32): the
    shared reader (`resume.read_events`) reads nothing again; the twin, an engine that keeps no event, reads
    the new segments again. Both give the full check's report."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("net--clock-backwards.jsonl", "sr--double-send.jsonl", "net--recv-without-send.jsonl"):
        shutil.copy(SAMPLES_DIR / "mutants" / name, src / name)
    later = _halves(src, tmp_path / "in")
    state = tmp_path / "state"
    incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    _grow(later)
    again: list[str] = []
    original = resume.iter_trace_file
    monkeypatch.setattr(resume, "iter_trace_file", lambda tf, *a: again.append(tf.name) or original(tf, *a))
    if keep is not None:
        monkeypatch.setattr(driver, "KEEP_EVENTS", keep)
    inc = incremental.check_incremental([str(tmp_path / "in")], state, cap=pycheck.DEFAULT_CAP)
    assert _report(inc) == _report(pycheck.check_paths([str(tmp_path / "in")]))
    assert inc.violations_total > 0
    assert (again == []) == (keep is None), again
