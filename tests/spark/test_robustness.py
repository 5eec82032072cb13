"""The Spark engine under failure: an injected error in a monitor is exit 3 with one line and the Java stack
in the log; random lines give the same quarantine in both engines; and the Python workers run the driver's
interpreter, shown by a virtual environment that is not activated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import spark_trace_check.job as job
import spark_trace_check.units as units
from conformance.cli import main
from conformance.pycheck import check_paths
from spark_trace_check.session import TASK_ATTEMPTS
from spark_trace_check.trace_pass import OUT_DDL
from tests.unit.test_rows import lines
from traces.corpus import SAMPLES_DIR
from traces.io import TraceFileError
from traces.schema import FIELD_NAMES

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
BAD = str(SAMPLES_DIR / "mutants" / "net--seq-repeat.jsonl")


def _tried(tries: Path) -> None:
    """Note this task attempt (stage, partition, attempt) in `tries` (local mode: one file system)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    with tries.open("a") as handle:
        handle.write(f"{ctx.stageId()} {ctx.partitionId()} {ctx.attemptNumber()}\n")


def _failing_units(tries: Path):
    def task(*_args):
        def run(items):
            for _ in items:
                _tried(tries)
                raise ZeroDivisionError("injected monitor failure")
            yield None

        return run

    return task


@pytest.mark.parametrize("plan", ["shuffle", "units"])
def test_a_monitor_failing_in_a_worker_is_exit_3_with_the_java_stack_in_the_log(
    spark, tmp_path, monkeypatch, capsys, plan
):
    tries = tmp_path / "tries"

    def failing_pass(rows, partitions, skew_ms, held=None, extra=()):
        def run(batches):
            for batch in batches:
                _tried(tries)
                raise ZeroDivisionError("injected monitor failure")
                yield batch

        return rows.select(*FIELD_NAMES).mapInArrow(run, OUT_DDL)

    monkeypatch.setattr(job, "trace_pass", failing_pass)
    monkeypatch.setattr(units, "_units_task", _failing_units(tries))
    out = tmp_path / "out"
    argv = ["check", "--engine", "spark", BAD, "--out", str(out), "--quiet", "--spark-plan", plan]
    assert main(argv) == 3
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("haconform: internal error: PythonException: ZeroDivisionError: injected monitor failure")
    # the session tries a failed task again (issue 35): this one failed every attempt, and only then the check
    # failed (Spark raises a worker's Python error as it is, without the count of attempts: they are noted here)
    attempts: dict[tuple[str, str], list[int]] = {}
    for line in tries.read_text().splitlines():
        stage, partition, attempt = line.split()
        attempts.setdefault((stage, partition), []).append(int(attempt))
    assert list(range(TASK_ATTEMPTS)) in [sorted(a) for a in attempts.values()], attempts
    log = (out / "haconform-error.log").read_text()
    assert "injected monitor failure" in log and "at org.apache.spark" in log
    assert json.loads((out / "summary.json").read_text())["verdict"] == "internal-error"


@settings(max_examples=2, deadline=None)
@given(st.lists(st.lists(lines, max_size=10), min_size=6, max_size=6))
@example([[b"\xff\xfe{", b"}"], [], [], [], [], []])  # UTF-16 byte-order mark: both engines refuse the file
def test_engines_agree_on_random_lines(spark, tmp_path_factory, files):
    for plan in ("units", "shuffle"):
        _agree_on_random_lines(spark, tmp_path_factory, files, plan)


def _agree_on_random_lines(spark, tmp_path_factory, files, plan):
    tmp = tmp_path_factory.mktemp("random")
    for i, raw_lines in enumerate(files):
        (tmp / f"f{i}.jsonl").write_bytes(b"\n".join(raw_lines))
    outcomes = []
    for run in (lambda: job.check(spark, [str(tmp)], plan=plan), lambda: check_paths([str(tmp)])):
        try:
            outcomes.append(run())
        except TraceFileError as e:  # a file unusable as a whole (UTF-16 text, NUL bytes): exit 2 in the CLI
            outcomes.append(str(e))
    sp, py = outcomes
    if isinstance(sp, str) or isinstance(py, str):
        assert sp == py  # both engines refuse the input, with the same message naming the file
        return
    assert sp.quarantine == py.quarantine
    assert sp.summary() | {"engine": ""} == py.summary() | {"engine": ""}
    assert sp.reconciles


PROBE = textwrap.dedent("""
    import importlib.util, json, sys
    from spark_trace_check.session import build_session
    from conformance.cli import main

    spark = build_session("local[1]", for_tests=True)
    conf = spark.conf.get("spark.pyspark.python")
    workers = spark.sparkContext.parallelize([0], 1).map(
        lambda _: (sys.executable, importlib.util.find_spec("haconform_venv_marker") is not None)).collect()
    code = main(["check", "--engine", "spark", sys.argv[1], "--out", sys.argv[2], "--quiet"])
    print(json.dumps({"conf": conf, "workers": workers, "exit": code, "driver": sys.executable}))
""")


def test_workers_run_the_interpreter_of_an_unactivated_venv(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(site, "haconform_venv_marker.py").write_text("")  # only this interpreter can import it
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")}
    on_path = subprocess.run(["python3", "-c", "import haconform_venv_marker"], env=env, capture_output=True)
    assert on_path.returncode != 0  # PATH's python3 lacks what the venv has
    (tmp_path / "probe.py").write_text(PROBE)
    done = subprocess.run(
        [str(python), str(tmp_path / "probe.py"), str(SAMPLES_DIR / "clean" / "net-s1.jsonl"), str(tmp_path / "out")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["conf"] == result["driver"] == str(python)
    assert result["workers"] == [[str(python), True]]
    assert result["exit"] == 0
