"""`haconform explore`'s Spark settings (issue 33, session 25): `--compress` (each frontier blob LZ4-compressed) and
`--regroup K` (a level's frontier regrouped by its states' ancestors K levels up), the two settings the 10^6-state
bounds were measured with, which only the benchmark scripts could set before. They reach the `Job` the Spark engine
runs (the engine is replaced here by the single-process explorer: what is checked is what the command line hands
it); they are refused with `--engine python` and `--mutants` (one process: exit 2, saying why), a negative K is a
usage error, and when `auto` chooses one process the command says they are not used.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.cli import main
from conformance.explore.bfs import explore

BOUND = ["explore", "am", "--bound", "am-3s-1db-crash-partition"]


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The jobs the Spark engine is given (it runs none: the single-process explorer answers for it)."""
    from spark_trace_check import explore as on_spark

    seen: list[Any] = []

    def run_spark(spark: Any, job: Any, max_states: Any = None, partitions: Any = None, **_: Any) -> Any:
        seen.append((job, partitions))
        return explore(job.bound, job.mutant, max_states=max_states)

    monkeypatch.setattr(on_spark, "session", lambda master: object())
    monkeypatch.setattr(on_spark, "run_spark", run_spark)
    return seen


@pytest.mark.unit
def test_the_settings_reach_the_spark_job(jobs: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BOUND, "--engine", "spark", "--partitions", "2", "--compress", "--regroup", "3", "--check"]) == 0
    assert main([*BOUND, "--engine", "spark", "--check"]) == 0
    (given, parts), (plain, default_parts) = jobs
    assert (given.compress, given.regroup, parts) == (True, 3, 2)
    # twin: a command line that dropped them would hand the engine the defaults, as the plain run does
    assert (plain.compress, plain.regroup, default_parts) == (False, 0, None)
    assert "147 distinct states" in capsys.readouterr().out


@pytest.mark.unit
@pytest.mark.parametrize("flags", [["--engine", "python", "--compress"], ["--mutants", "--regroup", "2"]])
def test_refused_where_one_process_runs(flags: list[str], jobs: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["explore", "am", *flags] if "--mutants" in flags else [*BOUND, *flags]
    assert main(args) == 2
    assert "with --engine spark (or auto) only" in capsys.readouterr().err and jobs == []


@pytest.mark.unit
def test_a_negative_regroup_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main([*BOUND, "--regroup", "-1"])
    assert exc.value.code == 2 and "--regroup: must be a non-negative integer" in capsys.readouterr().err


@pytest.mark.unit
def test_auto_in_one_process_says_they_are_not_used(jobs: list[Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BOUND, "--engine", "auto", "--compress", "--check"]) == 0
    err = capsys.readouterr().err
    assert "one process: --compress and --regroup not used (Spark only)" in err and jobs == []
