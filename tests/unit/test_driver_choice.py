"""`haconform check --engine auto` (conformance.driver_choice): small input -> the single-process engine,
`--master` -> Spark, an input at the crossover -> Spark; the twin one event below it -> python; one core or
`--state` -> python whatever the size. The CLI prints the choice and its reason on one line and runs it."""

from __future__ import annotations

import json

import pytest

import conformance.cli.check as check_cli
import conformance.driver_choice as ec
from conformance.cli import main
from conformance.cli.check import run_check
from model.kernel.workload import simulate
from traces.corpus import SAMPLES_DIR
from traces.io import write_events

pytestmark = pytest.mark.unit
ONE = str(SAMPLES_DIR / "clean" / "am-s1.jsonl")


def test_small_input_goes_to_the_single_process_engine():
    assert ec.choose(7_675, 2).engine == "python"


def test_master_means_spark_whatever_the_size():
    assert ec.choose(10, 1, master="spark://h:7077") == ec.Choice("spark", "--master spark://h:7077 given")


def test_large_input_goes_to_spark_and_the_twin_just_below_the_crossover_to_python():
    limit = ec.crossover(2)
    assert limit is not None and 100_000 < limit < 100_000_000
    assert ec.choose(limit, 2).engine == "spark"
    assert ec.choose(limit - 1, 2).engine == "python"  # the twin: one event fewer
    assert ec.choose(10**9, 2).engine == "spark"


def test_the_crossover_falls_with_cores_and_one_core_never_chooses_spark():
    assert ec.crossover(1) is None and ec.choose(10**9, 1).engine == "python"
    assert ec.crossover(8) < ec.crossover(4) < ec.crossover(2)  # type: ignore[operator]


def test_state_sizes_only_the_new_events(tmp_path):
    """With --state, auto decides from the events not yet read: none when nothing is new, the appended
    tail of a grown JSON Lines file; every event when there is no state yet or it cannot be continued.
    Twin: the same input without a state is sized whole."""
    from conformance.incremental import check_incremental

    src = tmp_path / "in"
    src.mkdir()
    write_events(src / "a.jsonl", simulate(1))
    whole = ec.input_events([str(src)])
    assert ec.state_events([str(src)], str(tmp_path / "st")) == (whole, "no saved state to continue: every event")
    check_incremental([str(src)], tmp_path / "st", cap=10)
    assert ec.state_events([str(src)], str(tmp_path / "st")) == (0, "the new events only")
    with open(src / "a.jsonl", "ab") as handle:
        handle.write(b"x" * ec.JSONL_BYTES_PER_EVENT * 3)
    assert ec.state_events([str(src)], str(tmp_path / "st"))[0] == 3
    (src / "a.jsonl").write_bytes(b"")  # not an append: everything is checked anew
    assert ec.state_events([str(src)], str(tmp_path / "st"))[1].startswith("the saved state cannot be continued")
    choice = ec.choose(10**5, 2, sized="the new events only")
    assert choice.engine == "python" and choice.reason.startswith("--state: the new events only;")
    assert ec.choose(10**9, 2, sized="the new events only").engine == "spark"


def test_input_events_from_footers_and_sizes_before_reading(tmp_path):
    from traces.io import write_parquet

    events = simulate(1)
    write_parquet(tmp_path / "a.parquet", events)
    write_events(tmp_path / "b.jsonl", events)
    size = (tmp_path / "b.jsonl").stat().st_size
    assert ec.input_events([str(tmp_path)]) == len(events) + size // ec.JSONL_BYTES_PER_EVENT
    assert ec.input_events([str(tmp_path / "nosuch")]) is None


def test_cli_auto_prints_the_choice_and_runs_python_on_a_small_input(tmp_path, capsys):
    assert main(["check", ONE, "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0].startswith("haconform check: engine python (auto): ~"), err
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["engine"] == "python"


def test_cli_auto_with_master_starts_spark(tmp_path, capsys, monkeypatch):
    import spark_trace_check.job as job

    ran = []
    monkeypatch.setattr(job, "run_check", lambda args: ran.append(args.master) or run_check(args))  # no JVM here
    assert main(["check", ONE, "--master", "local[1]", "--out", str(tmp_path / "out")]) == 0
    assert ran == ["local[1]"]
    assert "engine spark (auto): --master local[1] given" in capsys.readouterr().err


def test_cli_auto_chooses_spark_above_the_crossover(tmp_path, capsys, monkeypatch):
    import spark_trace_check.job as job

    ran = []
    monkeypatch.setattr(job, "run_check", lambda args: ran.append(args.master) or run_check(args))  # no JVM here
    monkeypatch.setattr(check_cli, "input_events", lambda paths: 10**8)
    monkeypatch.setattr(check_cli, "cores", lambda: 2)
    assert main(["check", ONE, "--out", str(tmp_path / "out")]) == 0
    assert ran == ["local[2]"] and "engine spark (auto): ~100,000,000 events" in capsys.readouterr().err
