"""On Spark: the per-rule states are the single-process engine's, a bug in rule code is exit 3, and a
check where nothing beyond the format rules judged an instance is unknown (exit 2), under both plans.

The planted bug runs in the Python workers: the test module is pickled by value (`pyspark.cloudpickle`), so
its buggy sr fold reaches them through the pass's `extra` monitors (shuffle plan) or a units task that adds
it to the registered monitors (units plan). Its twin, a trace missing an attribute, stays unknown.
"""

from __future__ import annotations

import json
import sys
from functools import partial

import pytest
from pyspark import cloudpickle

import spark_trace_check.job as job
import spark_trace_check.units as units
from conformance.cli import main
from conformance.engine.units import judge_unit
from conformance.pycheck import check_paths
from model.registry import monitor_runs
from model.sr.monitor import SrFold, SrMonitor
from tests.engine.test_rule_states import log_without_shadow_rows
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.spark

CLEAN = SAMPLES_DIR / "clean"
ACK = SAMPLES_DIR / "mutants" / "sr--ack-before-shadow.jsonl"


class PlantedFold(SrFold):
    """The sr fold with a bug planted in its state: the recorded configuration is dropped when a shadow is
    acknowledged, so the rule code dereferences None (an AttributeError inside the rules, not an input
    fault: today's broad catch made it "unreadable attributes", unknown)."""

    def feed(self, e, _context=False):
        if e.kind == "SHADOW_ACK":
            self.world.cfg = None
        super().feed(e, _context)


class PlantedMonitor(SrMonitor):
    def start(self, context=()):
        return PlantedFold(context)


def _planted_units(files, skew_ms, bits, hash_of, candidates=None, shuffle=False):
    def run(items):
        runs = [(n, m) for n, m in monitor_runs(skew_ms) if n != "sr"] + [("sr", PlantedMonitor())]
        for group in items:
            for unit in group:
                result = judge_unit(files, unit, runs, hash_of, candidates=candidates)
                result.hashes = None  # no hashes shuffled: the index named TR-002's candidates
                yield -1, result

    return run


@pytest.fixture
def planted(monkeypatch):
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    monkeypatch.setattr(job, "trace_pass", partial(job.trace_pass, extra=[("sr-planted", PlantedMonitor)]))
    monkeypatch.setattr(units, "_units_task", _planted_units)
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.parametrize("plan", ["shuffle", "units"])
def test_a_bug_in_rule_code_is_exit_3_on_spark(spark, tmp_path, planted, capsys, plan):
    out = tmp_path / "out"
    argv = ["check", "--engine", "spark", str(CLEAN / "sr-s1.jsonl"), "--out", str(out), "--quiet"]
    assert main([*argv, "--spark-plan", plan]) == 3, capsys.readouterr()
    assert json.loads((out / "summary.json").read_text())["verdict"] == "internal-error"
    assert "AttributeError" in (out / "haconform-error.log").read_text()


@pytest.mark.parametrize("plan", ["shuffle", "units"])
def test_rule_rows_are_the_python_engines(spark, plan):
    for path in (CLEAN, ACK):
        python = check_paths([str(path)])
        sparked = job.check(spark, [str(path)], plan=plan)
        assert sparked.rules == python.rules
        assert sparked.nothing_judged == python.nothing_judged is False


@pytest.mark.parametrize("plan", ["shuffle", "units"])
def test_nothing_to_judge_is_exit_2_on_spark(spark, tmp_path, plan):
    """An imported log whose rows no rule beyond the format rules reads: unknown, exit 2, as in one process."""
    trace = log_without_shadow_rows(tmp_path)
    out = tmp_path / "out"
    argv = ["check", str(trace), "--engine", "spark", "--spark-plan", plan, "--out", str(out), "--quiet"]
    assert main(argv) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["nothing_judged"] is True and summary["verdict"] == "unknown"
    assert summary["rules"] == check_paths([str(trace)]).rules
