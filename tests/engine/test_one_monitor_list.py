"""One monitor list (issue 20): the registry (`model.registry.monitor_factories`) owns it, and every checker
takes it from there: `conformance.check` (the reference), the single-process engine over a corpus
(`conformance.pycheck`) and over an ingested dataset (`conformance.dataset_check`), and the Spark job
(`spark_trace_check.job`; its run is in `tests/spark/test_spark_check.py`). The imported-log monitor
(msgtrk) is a registered entry with `Rule` rows; clock skew runs when a bound is given. The twin: a monitor
registered once, in the registry only, is run by every driver; taken away, it is run by none.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import model.registry as registry
from conformance.check import check_events
from conformance.dataset_check import check_dataset
from conformance.pycheck import check_paths
from model.kernel.mechanism import MonitorEntry
from model.msgtrk.rules import RULES as MSGTRK_RULES
from spark_trace_check import job, trace_pass
from tests.unit.context_probe import ContextProbe
from traces.corpus import SAMPLES_DIR
from traces.ingest import ingest
from traces.io import read_events
from traces.verdict import Rule

pytestmark = pytest.mark.unit

CLEAN = SAMPLES_DIR / "clean" / "net-s1.jsonl"
PROBE = MonitorEntry("probe", "a probe registered for the test", lambda skew_ms: ContextProbe())


def test_the_registry_lists_every_monitor_with_msgtrk_and_skew():
    assert [n for n, _ in registry.monitor_runs()] == ["sr", "am", "pf", "msgtrk"]
    assert [n for n, _ in registry.monitor_runs(50)] == ["sr", "am", "pf", "msgtrk", "skew"]
    assert [n for n, _ in registry.monitor_factories(50)] == [n for n, _ in registry.monitor_runs(50)]
    assert MSGTRK_RULES and all(isinstance(r, Rule) and r.name == k for k, r in MSGTRK_RULES.items())


def test_both_single_process_drivers_and_spark_take_the_registry_list(tmp_path):
    names = [n for n, _ in registry.monitor_runs(50)]
    assert check_paths([str(CLEAN)], skew_ms=50).monitors == names
    ingest([str(CLEAN)], tmp_path / "ds")
    assert check_dataset(str(tmp_path / "ds"), skew_ms=50).monitors == names
    # the Spark job's list (its names) and its trace pass's (the monitors it runs) are the registry's
    assert job.monitor_runs is registry.monitor_runs and trace_pass.monitor_runs is registry.monitor_runs


def test_the_reference_checker_runs_msgtrk_too():
    """`conformance.check` used to leave msgtrk out: imported rows without IMPORT_START went unflagged."""
    events = read_events(CLEAN).events[:3]
    stray = dataclasses.replace(events[2], mechanism="msgtrk", kind="RECEIVE", entity="m/1")
    found = {v.rule for v in check_events([*events[:2], stray])}
    assert "msgtrk-import-start-first" in found


def _probe_rules(paths: list[str], dataset: Path) -> dict[str, int]:
    events = read_events(Path(paths[0])).events
    return {
        "check": sum(v.rule == "probe" for v in check_events(events)),
        "pycheck": check_paths(paths).violations_by_rule,
        "dataset": check_dataset(str(dataset)).violations_by_rule,
    }


def test_twin_a_monitor_registered_once_runs_in_every_driver(tmp_path, monkeypatch):
    ingest([str(CLEAN)], tmp_path / "ds")
    monkeypatch.setattr(registry, "ENTRIES", (*registry.ENTRIES, PROBE))
    with_probe = _probe_rules([str(CLEAN)], tmp_path / "ds")
    assert with_probe["check"] > 0
    for name in ("pycheck", "dataset"):
        assert [r["count"] for r in with_probe[name] if r["rule"] == "probe"] == [with_probe["check"]], name
    assert "probe" in [n for n, _ in trace_pass.monitor_runs()]
    monkeypatch.setattr(registry, "ENTRIES", tuple(e for e in registry.ENTRIES if e is not PROBE))
    without = _probe_rules([str(CLEAN)], tmp_path / "ds")
    assert without["check"] == 0
    assert all(r["rule"] != "probe" for name in ("pycheck", "dataset") for r in without[name])
