"""Both engines judge an imported log alike: same violations, rule sets decided by the first event (TR-008)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs
from conformance.audit.smtplog import parse_protocol
from conformance.pycheck import check_paths
from model.kernel.workload import simulate
from spark_trace_check.job import check
from tests.audit import logs
from traces.io import write_events

pytestmark = pytest.mark.spark


def test_imported_log_and_simulated_trace_same_verdicts_in_both_engines(spark, tmp_path):
    p, _ = logs.flow("2016", send_at=5000, discard_at=1000)
    _, s = logs.flow("2016", send_at=5000, discard_at=1000)
    logs.write(tmp_path / "logs" / "mbx1" / "MSGTRK1.LOG", "2016", p)
    logs.write(tmp_path / "logs" / "mbx2" / "MSGTRKMS1.LOG", "2016", s)
    events, _ = build_trace(parse_logs([str(tmp_path / "logs")]), ImportConfig(), ["logs"])
    (tmp_path / "corpus").mkdir()
    write_events(tmp_path / "corpus" / "imported.parquet", events)
    write_events(tmp_path / "corpus" / "no-start.jsonl", simulate(1)[1:])  # simulated rules still apply here
    sample = parse_logs([str(Path(__file__).parent / "data" / "pair-early-ack")])  # tracking + protocol logs
    pair, _ = build_trace(sample, ImportConfig(), ["pair"], parse_protocol(sample.inputs.protocol))
    write_events(tmp_path / "corpus" / "pair.parquet", pair)
    paths = [str(tmp_path / "corpus")]
    sp, py = check(spark, paths, skew_ms=100), check_paths(paths, skew_ms=100)
    key = lambda o: sorted((v["rule"], v["trace_id"], tuple(v["event_ids"])) for v in o.violations)  # noqa: E731
    assert key(sp) == key(py)
    rules = {(v["rule"], v["trace_id"] == events[0].trace_id) for v in py.violations}
    assert ("msgtrk-discard-after-next-hop", True) in rules and ("trace-start", False) in rules
    assert "smtp-ack-after-shadow" in {v["rule"] for v in sp.violations if v["trace_id"] == pair[0].trace_id}
    assert not any(r in ("trace-start", "recv-after-send") and imported for r, imported in rules)
