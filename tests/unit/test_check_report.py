"""`haconform check` around the verdict: `--out` refused before any work, the report replaced whole or not
at all, no stale summary after exit 2, counts reconciled independently, and any unexpected exception an
internal error (exit 3, one line on stderr, the full trace in a log), never exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import conformance.engine.stream as stream
import conformance.engine.units as groups
import conformance.pycheck as pycheck
import conformance.report as report
from conformance.cli import main
from traces.corpus import SAMPLES_DIR
from traces.io import ReadResult

pytestmark = pytest.mark.unit

CLEAN = str(SAMPLES_DIR / "clean" / "net-s1.jsonl")
BAD = str(SAMPLES_DIR / "mutants" / "net--seq-repeat.jsonl")


def py_check(*args: str) -> int:
    return main(["check", "--engine", "python", "--quiet", *args])


def test_out_that_is_a_file_or_unwritable_exits_2_before_any_work(tmp_path, capsys, monkeypatch):
    called = []
    monkeypatch.setattr(pycheck, "check_paths", lambda *a, **k: called.append(1))
    (tmp_path / "f").write_text("x")
    assert py_check(CLEAN, "--out", str(tmp_path / "f")) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert py_check(CLEAN, "--out", str(tmp_path / "f" / "sub")) == 2
    assert "cannot write in" in capsys.readouterr().err
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    assert py_check(CLEAN, "--out", str(tmp_path / "mine")) == 2
    assert "not a haconform report (notes.txt)" in capsys.readouterr().err
    assert not called and (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_no_stale_summary_survives_an_exit_2(tmp_path, capsys):
    out = tmp_path / "out"
    assert py_check(CLEAN, "--out", str(out)) == 0
    assert json.loads((out / "summary.json").read_text())["verdict"] == "valid"
    assert py_check(str(tmp_path / "missing"), "--out", str(out)) == 2
    assert sorted(p.name for p in out.iterdir()) == ["summary.json"]
    assert json.loads((out / "summary.json").read_text())["verdict"] == "unusable"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out.")]  # no temporary left behind


def test_a_failure_while_writing_leaves_the_earlier_report_whole(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    assert py_check(BAD, "--out", str(out)) == 1
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def fail(path: Path, rows) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(report, "_write_jsonl", fail)
    monkeypatch.setattr(report, "publish", _publish_then_block_error_report(report.publish))
    assert py_check(CLEAN, "--out", str(out)) == 3
    err = capsys.readouterr().err
    assert err.startswith("haconform: internal error: OSError") and err.count("\n") == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _publish_then_block_error_report(real):
    """Let the first report attempt fail inside `write`; refuse the internal-error report as well, so the
    test sees what a failed write alone leaves behind."""
    calls = []

    def publish(out_dir, write):
        calls.append(out_dir)
        if len(calls) > 1:
            raise OSError(28, "No space left on device")
        return real(out_dir, write)

    return publish


@pytest.mark.parametrize("where", ["monitor", "reader"])
def test_an_unexpected_exception_is_exit_3_with_a_log(where, tmp_path, monkeypatch, capsys):
    def boom(*args, **kwargs):
        raise ZeroDivisionError("injected failure")

    if where == "monitor":
        monkeypatch.setattr(stream, "whole_trace", boom)  # a held trace judged whole (conformance.engine.stream)
    else:
        monkeypatch.setattr(groups, "iter_trace_file", boom)  # the reader of every unit (conformance.engine.units)
        monkeypatch.setattr(pycheck, "iter_trace_file", boom)  # and of a corpus read once whole
    out = tmp_path / "out"
    assert py_check(BAD, "--out", str(out)) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("haconform: internal error: ZeroDivisionError: injected failure; full trace in ")
    log = Path(err.strip().rsplit("full trace in ", 1)[1])
    assert log == out / "haconform-error.log" and "Traceback" in log.read_text() and "boom" in log.read_text()
    assert json.loads((out / "summary.json").read_text())["verdict"] == "internal-error"


def test_internal_error_without_out_goes_to_a_temporary_log(monkeypatch, capsys, tmp_path):
    import conformance.cli as cli

    def boom(args):
        raise KeyError("injected")

    parser = cli.build_parser
    monkeypatch.setattr(cli, "build_parser", lambda command: _with_func(parser(command), boom))
    assert cli.main(["spec"]) == 3
    log = Path(capsys.readouterr().err.strip().rsplit("full trace in ", 1)[1])
    assert log.is_file() and "KeyError" in log.read_text()
    log.unlink()


def _with_func(parser, func):
    parser.set_defaults(func=func)
    sub = next(a for a in parser._actions if a.dest == "command")
    sub.choices["spec"].set_defaults(func=func)
    return parser


def test_counts_that_do_not_reconcile_are_an_internal_error(tmp_path, monkeypatch, capsys):
    real = groups.iter_trace_file

    def lossy(tf) -> Iterator[ReadResult]:
        for part in real(tf):
            if part.events:
                part.events.pop()  # a row read from the file that never reaches the rules nor the quarantine
            yield part

    monkeypatch.setattr(groups, "iter_trace_file", lossy)  # the reader of every unit
    monkeypatch.setattr(pycheck, "iter_trace_file", lossy)  # and of a corpus read once whole
    assert py_check(CLEAN, "--out", str(tmp_path / "out")) == 3
    assert "counts do not reconcile: 333 rows read, 332 reached the rules, 0 quarantined" in capsys.readouterr().err


def test_a_usage_error_raised_as_text_exits_2_not_1(tmp_path, capsys):
    assert main(["simulate", "net", "--seed", "1", "--out", str(tmp_path / "t.jsonl"), "--opt", "novalue"]) == 2
    assert "--opt expects KEY=VALUE" in capsys.readouterr().err


def test_a_missing_path_is_said_before_any_engine_starts(tmp_path, capsys, monkeypatch):
    import spark_trace_check.session as session

    started = []
    monkeypatch.setattr(session, "build_session", lambda *a, **k: started.append(1))
    code = main(["check", "--engine", "spark", str(tmp_path / "nosuch"), "--out", str(tmp_path / "out"), "--quiet"])
    assert code == 2 and not started
    assert "no such file or directory" in capsys.readouterr().err


def test_twin_an_existing_path_does_start_the_engine(tmp_path, monkeypatch):
    import spark_trace_check.session as session

    def refuse(*a, **k):
        raise RuntimeError("engine started")

    monkeypatch.setattr(session, "build_session", refuse)
    with pytest.raises(RuntimeError, match="engine started"):
        report.run_and_report(
            type("A", (), {"out": str(tmp_path / "out"), "paths": [CLEAN]})(),
            "spark",
            lambda: session.build_session("local[1]"),
        )
