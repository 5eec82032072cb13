"""The units plan runs with the driver JVM's server compiler off (`spark_trace_check.session.
client_compiler_only`): the directive is in place while the units are judged and gone after, and the shuffle
plan never gets it (it needs the server compiler). Twins: a directive left behind is seen by the same check
that says it is gone; a JVM command that fails leaves the check to run as before."""

from __future__ import annotations

import pytest
from py4j.protocol import Py4JError

import spark_trace_check.job as job
import spark_trace_check.session as session
from tests.engine.test_units import spread_corpus

pytestmark = pytest.mark.spark

_MARK = "c2 directives:\n  inline: -\n  Enable:true Exclude:true"


def _excluded(spark) -> int:
    """How many of the JVM's directives keep every method from the server compiler."""
    return session.directives(spark).count(_MARK)


def test_directive_in_place_inside_and_gone_after(spark):
    before = _excluded(spark)
    with session.client_compiler_only(spark) as added:
        assert added
        assert _excluded(spark) == before + 1
    assert _excluded(spark) == before


def test_a_directive_left_behind_is_seen(spark):
    before = _excluded(spark)
    path = session.fixed_file(session.NO_SERVER_COMPILER_FILE, session._NO_SERVER_COMPILER)
    with session.client_compiler_only(spark):
        pass
    session._diagnostic_command(spark, "compilerDirectivesAdd", str(path))  # the twin: added, never removed
    try:
        assert _excluded(spark) == before + 1
    finally:
        session._diagnostic_command(spark, "compilerDirectivesRemove")
    assert _excluded(spark) == before


@pytest.mark.parametrize("plan", ["units", "shuffle"])
def test_only_the_units_plan_turns_the_server_compiler_off(spark, tmp_path, monkeypatch, plan):
    seen: list[int] = []
    judge = job.units.check_units

    def spy(*args, **kwargs):
        seen.append(_excluded(spark))
        return judge(*args, **kwargs)

    monkeypatch.setattr(job.units, "check_units", spy)
    shuffled = job._shuffled

    def spy_shuffled(*args, **kwargs):
        seen.append(_excluded(spark))
        return shuffled(*args, **kwargs)

    monkeypatch.setattr(job, "_shuffled", spy_shuffled)
    before = _excluded(spark)
    outcome = job.check(spark, spread_corpus(tmp_path / "in"), plan=plan)
    assert outcome.rows_read > 0
    assert seen == [before + (1 if plan == "units" else 0)]
    assert _excluded(spark) == before


def test_a_refused_command_leaves_the_check_as_before(spark, tmp_path, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise Py4JError("no such MBean")

    monkeypatch.setattr(session, "_diagnostic_command", refuse)
    with session.client_compiler_only(spark) as added:
        assert not added
    outcome = job.check(spark, spread_corpus(tmp_path / "in"), plan="units")
    assert outcome.rows_read > 0
