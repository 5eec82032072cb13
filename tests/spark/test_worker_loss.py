"""A lost Python worker (issue 35): a local session tries a failed task again, as a cluster does, and the check
gives the report of an undisturbed run; with one attempt per task the same loss is exit 3, never a verdict.

A worker is lost deterministically through the test-only hook `spark_trace_check.faults` (`HACONFORM_TEST_
KILL_WORKER` names a marker file; the first task to reach a kill point after judging something removes it
and SIGKILLs its own process): under the units plan, the shuffle plan and the `--state` pass. The report
(summary.json but its run facts, violations.jsonl, quarantine.jsonl) is compared byte for byte with an
undisturbed run's, so a retried task whose results were counted twice (or lost) fails; the final line and
summary.json's `run.tasks_retried` say one failed attempt was retried, the undisturbed run's none. The twins
run in a process of their own (one session there, `--task-attempts 1`: a session's attempts are fixed when
it starts): the same kill is exit 3 with the worker's crash as the first words of the error.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.cli import _one_line, main
from spark_trace_check.faults import KILL_ENV
from spark_trace_check.progress import PLAN_GROUP, StatusBar
from spark_trace_check.session import ATTEMPTS_ENV, TASK_ATTEMPTS, task_attempts, with_attempts
from tests.unit.test_spark_progress import FakeTracker, Job, Stage
from traces.corpus import SAMPLES_DIR
from traces.io import read_events, write_events
from traces.schema import arrow_schema

pytestmark = pytest.mark.spark
ROOT = Path(__file__).resolve().parents[2]
RETRIED = "1 failed task attempt(s) retried"


def _corpus(tmp: Path) -> Path:
    """Violations (the net mutants and two sr ones, over several files: several units), clean traces of JSON
    Lines and Parquet, quarantined rows."""
    where = tmp / "in"
    where.mkdir()
    mutants = (
        sorted((SAMPLES_DIR / "mutants").glob("net--*.jsonl"))
        + sorted((SAMPLES_DIR / "mutants").glob("sr--*.jsonl"))[:2]
    )
    for path in mutants:
        shutil.copy(path, where / path.name)
    for name in ("net-s1.jsonl", "net-s3.parquet"):
        shutil.copy(SAMPLES_DIR / "clean" / name, where / name)
    lines = (SAMPLES_DIR / "clean" / "net-s2.jsonl").read_bytes().splitlines(keepends=True)
    (where / "net-s2-damaged.jsonl").write_bytes(b"".join(lines[:5]) + b"not json\n{}\n" + b"".join(lines[5:]))
    return where


def _parquet_corpus(tmp: Path) -> Path:
    """`_corpus`'s traces, every file Parquet (the one-job units plan, `spark_trace_check.probed_units`)."""
    where = tmp / "in-parquet"
    where.mkdir()
    for path in sorted(_corpus(tmp).iterdir()):
        if path.suffix == ".jsonl" and "damaged" not in path.name:
            write_events(where / f"{path.stem}.parquet", read_events(path).events)
        elif path.suffix == ".parquet":
            shutil.copy(path, where / path.name)
    rows = [e.to_row() for e in read_events(SAMPLES_DIR / "clean" / "net-s2.jsonl").events]
    for row in rows:
        row["attrs"] = json.dumps(row["attrs"], sort_keys=True, separators=(",", ":"))
    rows[5]["trace_id"] = rows[6]["event_id"] = None  # two rows quarantined
    schema = pa.schema([f.with_nullable(True) for f in arrow_schema()])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), where / "net-s2-damaged.parquet")
    return where


def _report(out: Path) -> tuple[dict, str, str]:
    summary = json.loads((out / "summary.json").read_text())
    run = summary.pop("run")
    return (
        summary | {"tasks_retried": run.get("tasks_retried")},
        (out / "violations.jsonl").read_text(),
        (out / "quarantine.jsonl").read_text(),
    )


def _check(argv: list[str], capsys) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


@pytest.fixture
def marker(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "kill-one-worker"
    monkeypatch.setenv(KILL_ENV, str(path))
    return path


def test_the_shared_session_tries_a_task_as_a_cluster_does(spark):
    master = spark.sparkContext.master  # local[N,F]: a local scheduler reads F from the master alone
    assert master.startswith("local[") and master.endswith(f",{TASK_ATTEMPTS}]"), master


SLOW = pytest.mark.slow  # reason: a Spark check twice more (10-40 s on a busy 2-core machine); units stays in


@pytest.mark.parametrize("plan", ["units", "probed", pytest.param("shuffle", marks=SLOW)])
def test_a_lost_worker_is_retried_and_the_report_is_the_undisturbed_one(spark, tmp_path, capsys, marker, plan):
    corpus = _parquet_corpus(tmp_path) if plan == "probed" else _corpus(tmp_path)
    one_job = plan == "probed"  # all Parquet: the units plan in one job
    argv = ["check", "--engine", "spark", str(corpus), "--spark-plan", "units" if one_job else plan, "--out"]
    code, err = _check([*argv, str(tmp_path / "calm")], capsys)
    assert ("trace_id dictionaries" in err) == one_job, err
    assert code == 1 and RETRIED not in err and not marker.exists()  # no marker: the hook is off
    calm = _report(tmp_path / "calm")
    assert calm[0]["tasks_retried"] == 0 and calm[0]["rows_quarantined"] > 0 and calm[1]

    marker.touch()
    code, err = _check([*argv, str(tmp_path / "lost")], capsys)
    assert not marker.exists(), "no worker reached a kill point: the workers do not run this tree's code"
    assert code == 1, err
    assert err.strip().splitlines()[-1].endswith(RETRIED), err
    lost = _report(tmp_path / "lost")
    assert lost[0].pop("tasks_retried") == 1
    calm[0].pop("tasks_retried")
    assert lost == calm


@SLOW
def test_a_lost_worker_in_the_state_pass_saves_the_state_of_an_undisturbed_run(spark, tmp_path, capsys, marker):
    corpus = _corpus(tmp_path)
    later = sorted(corpus.glob("net--*.jsonl"))[::2]
    for path in later:
        path.rename(tmp_path / path.name)  # a new file for the next run: the saved folds must serve it
    runs: dict[str, list] = {}
    for name in ("calm", "lost"):
        if name == "lost":
            marker.touch()
        argv = ["check", "--engine", "spark", str(corpus), "--state", str(tmp_path / f"state-{name}")]
        code, err = _check([*argv, "--out", str(tmp_path / f"{name}-1")], capsys)
        assert code == 1, err
        assert not marker.exists() and (RETRIED in err) == (name == "lost"), err
        runs[name] = [_report(tmp_path / f"{name}-1")]
    for path in later:
        shutil.copy(tmp_path / path.name, corpus / path.name)
    for name in ("calm", "lost"):
        argv = ["check", "--engine", "spark", str(corpus), "--state", str(tmp_path / f"state-{name}")]
        assert _check([*argv, "--out", str(tmp_path / f"{name}-2")], capsys)[0] == 1
        runs[name].append(_report(tmp_path / f"{name}-2"))
    assert runs["lost"][0][0].pop("tasks_retried") == 1 and runs["calm"][0][0].pop("tasks_retried") == 0
    assert runs["lost"] == runs["calm"]
    full = tmp_path / "full"
    assert main(["check", "--engine", "spark", str(corpus), "--quiet", "--out", str(full)]) == 1
    assert runs["lost"][1][1:] == _report(full)[1:]  # the continued state: a full check's violations


TWIN = textwrap.dedent("""
    import json, os, pathlib, sys
    from conformance.cli import main

    corpus, tmp = sys.argv[1], pathlib.Path(sys.argv[2])
    cases = {"units": ["--spark-plan", "units"], "shuffle": ["--spark-plan", "shuffle"],
             "state": ["--state", str(tmp / "state")]}
    results = []
    for name in sys.argv[3:]:
        marker = pathlib.Path(os.environ["HACONFORM_TEST_KILL_WORKER"])
        marker.touch()
        out = tmp / name
        code = main(["check", "--engine", "spark", corpus, "--quiet", "--task-attempts", "1", "--out", str(out),
                     *cases[name]])
        summary = json.loads((out / "summary.json").read_text())
        results.append({"name": name, "exit": code, "fired": not marker.exists(), "verdict": summary["verdict"]})
    print(json.dumps(results))
""")


@pytest.mark.parametrize("cases", [["units"], pytest.param(["shuffle", "state"], marks=SLOW)])
def test_twin_with_one_attempt_a_lost_worker_is_exit_3(tmp_path, cases):
    """In a process of its own: one session, started by the first check with `--task-attempts 1`, the later
    checks' sessions after it stopped (each check owns its session)."""
    corpus = _corpus(tmp_path)
    (tmp_path / "twin.py").write_text(TWIN)
    env = {**os.environ, "PYTHONPATH": str(ROOT), KILL_ENV: str(tmp_path / "kill-one-worker")}
    env.pop(ATTEMPTS_ENV, None)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "twin.py"), str(corpus), str(tmp_path), *cases],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert [(r["name"], r["exit"], r["fired"], r["verdict"]) for r in results] == [
        (name, 3, True, "internal-error") for name in cases
    ]
    errors = [line for line in done.stderr.splitlines() if line.startswith("haconform: internal error: ")]
    assert len(errors) == len(cases), done.stderr[-3000:]
    for line in errors:  # the task's own error first, then how often it was tried
        assert line.startswith("haconform: internal error: SparkException: Python worker exited unexpectedly"), line
        assert "failed 1 time(s)" in line, line


@pytest.mark.unit
def test_local_masters_name_their_attempts_and_others_are_left_alone(monkeypatch):
    assert with_attempts("local", 4) == "local[1,4]"
    assert with_attempts("local[2]", 4) == "local[2,4]"
    assert with_attempts("local[*]", 1) == "local[*,1]"
    assert with_attempts("local[2,7]", 4) == "local[2,7]"  # the master's own F wins
    assert with_attempts("spark://h:7077", 4) == "spark://h:7077"
    monkeypatch.delenv(ATTEMPTS_ENV, raising=False)
    assert task_attempts() is None and task_attempts(2) == 2
    monkeypatch.setenv(ATTEMPTS_ENV, "3")
    assert task_attempts() == 3 and task_attempts(1) == 1  # the option before the environment
    monkeypatch.setenv(ATTEMPTS_ENV, "0")
    with pytest.raises(ValueError, match="at least 1"):
        task_attempts()


@pytest.mark.unit
def test_the_cli_refuses_zero_attempts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["check", "x.jsonl", "--task-attempts", "0"])
    assert exit_.value.code == 2 and "at least 1" in capsys.readouterr().err


@pytest.mark.unit
def test_an_aborted_stage_names_the_task_error_first():
    class Py4JJavaError(Exception):
        pass

    text = (
        "An error occurred while calling o91.collectToPython.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 3 in stage 4.0 failed 4 times, "
        "most recent failure: Lost task 3.3 in stage 4.0 (TID 17) (127.0.0.1 executor driver): "
        "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed). Consider setting "
        "'spark.sql.execution.pyspark.udf.faulthandler.enabled' for the better Python traceback.\n"
        "\tat org.apache.spark.api.python.BasePythonRunner(PythonRunner.scala:1136)\n"
    )
    line = _one_line(Py4JJavaError(text))
    assert line == (
        "SparkException: Python worker exited unexpectedly (crashed); task 3 in stage 4.0 failed 4 time(s) "
        "(Py4JJavaError)"
    ), line
    # twin: an error that is no aborted stage keeps its type first
    assert _one_line(
        Py4JJavaError("An error occurred while calling o7.x.\n: java.io.IOException: disk full")
    ).startswith("Py4JJavaError: java.io.IOException: disk full")


@pytest.mark.unit
def test_the_bar_and_the_final_line_count_failed_attempts_of_this_checks_jobs_only():
    tracker = FakeTracker()
    tracker.stages[2] = Stage(2, 0, "shuffle", 4, 1, 3, 2)  # a job submitted before the check: not counted
    with StatusBar(tracker, events=1000, file=(out := io.StringIO()), interval=3600) as status:
        tracker.jobs[8] = Job(8, [10], "RUNNING")
        tracker.stages[10] = Stage(10, 0, "units", 4, 1, 2, 1)  # this check's: one attempt failed and is retried
        plan_jobs = tracker.getJobIdsForGroup
        tracker.getJobIdsForGroup = lambda group: [*plan_jobs(group), 8] if group == PLAN_GROUP else plan_jobs(group)
        status.render()
        assert "1 retried" in out.getvalue(), out.getvalue()
        settled = []
        status.settle = lambda: settled.append(True)
        status.close(events=1000)
    assert settled and status.retried == 1
    assert out.getvalue().strip().splitlines()[-1].endswith("events/s; 1 failed task attempt(s) retried")
    # twin: nothing failed in the check's jobs, nothing said
    with StatusBar(FakeTracker(), events=10, bar=False, file=(calm := io.StringIO())) as status:
        status.close(events=10)
    assert status.retried == 0 and calm.getvalue().strip().endswith(" events/s")
