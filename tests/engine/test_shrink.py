"""`haconform shrink` (conformance/shrink.py): mutant sample traces shrink to a few events that still fail
their rule, checked by `haconform check` and drawn by `haconform report`; the twin: a reducer that drops a
needed event is caught by the re-check and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import conformance.shrink as shrink_module
from conformance.cli import main
from conformance.shrink import ddmin
from traces.corpus import SAMPLES_DIR
from traces.io import read_events

pytestmark = pytest.mark.unit

MUTANTS = SAMPLES_DIR / "mutants"
CASES = [  # (sample, rule, at most this many events after; measured 4, 8, 21, 44, 2 of 598, 649, 626, 639, 332)
    ("sr--ack-before-shadow.jsonl", "shadow-before-ack", 8),
    ("sr--early-promotion.jsonl", "promotion-timing", 12),
    ("am--ignore-blocked.jsonl", "never-blocked", 30),
    ("pf--never-backfill.jsonl", "backfill-check-late", 50),
    ("net--recv-without-send.jsonl", "recv-after-send", 4),
]


def _rules_of(report_dir: Path) -> set[str]:
    lines = (report_dir / "violations.jsonl").read_text().splitlines()
    return {json.loads(line)["rule"] for line in lines if line}


def _rules_of_input(tmp_path: Path, trace: Path) -> set[str]:
    assert main(["check", str(trace), "--engine", "python", "--out", str(tmp_path / "input"), "--quiet"]) == 1
    return _rules_of(tmp_path / "input")


@pytest.mark.parametrize(("sample", "rule", "most"), CASES)
def test_shrunk_trace_still_fails_its_rule_and_is_much_smaller(tmp_path, sample, rule, most, capsys):
    out = tmp_path / "min.jsonl"
    before = len(read_events(MUTANTS / sample).events)
    assert main(["shrink", str(MUTANTS / sample), "--rule", rule, "--out", str(out)]) == 0
    after = len(read_events(out).events)
    assert after <= most and after * 10 < before
    assert f"{before} events -> {after} events" in capsys.readouterr().err
    report = tmp_path / "check"
    assert main(["check", str(out), "--engine", "python", "--out", str(report), "--quiet"]) == 1
    assert rule in _rules_of(report) and _rules_of(report) <= _rules_of_input(tmp_path, MUTANTS / sample)
    assert main(["report", str(report), "--html", str(tmp_path / "min.html")]) == 0
    assert rule in (tmp_path / "min.html").read_text()


def test_entity_is_kept_when_given(tmp_path):
    sample = MUTANTS / "sr--ack-before-shadow.jsonl"
    out = tmp_path / "min.parquet"
    assert main(["shrink", str(sample), "--rule", "shadow-before-ack", "--entity", "msg-0003", "--out", str(out)]) == 0
    kinds = {(e.entity, e.kind) for e in read_events(out).events}
    assert ("msg-0003", "ACCEPT") in kinds and not any(ent.startswith("msg-") and ent != "msg-0003" for ent, _ in kinds)


def test_twin_a_reducer_dropping_a_needed_event_is_caught_and_nothing_written(tmp_path, monkeypatch, capsys):
    def drops_one(items, fails):
        reduced = ddmin(items, fails)
        return reduced[:-1]  # the ACCEPT the rule judges: without it nothing is violated

    monkeypatch.setattr(shrink_module, "ddmin", drops_one)
    out = tmp_path / "min.jsonl"
    sample = MUTANTS / "sr--ack-before-shadow.jsonl"
    assert main(["shrink", str(sample), "--rule", "shadow-before-ack", "--out", str(out)]) == 3
    assert "does not violate 'shadow-before-ack' when checked again" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.iterdir())


def test_imported_log_shrinks_without_a_new_failure(tmp_path):
    """Dropping the shadow's HARECEIVE would keep SR-052 but add SR-030 (an unconfirmed shadow): not taken."""
    trace = tmp_path / "t.parquet"
    assert main(["import", "msgtrk", str(SAMPLES_DIR / "audit" / "logs" / "violation"), "--out", str(trace)]) == 0
    out = tmp_path / "min.jsonl"
    argv = ["shrink", str(trace), "--rule", "msgtrk-discard-after-next-hop", "--skew", "100", "--out", str(out)]
    assert main(argv) == 0
    kinds = [e.kind for e in read_events(out).events]
    assert kinds == ["IMPORT_START", "HARECEIVE", "HAREDIRECT", "HADISCARD", "DELIVER"]
    report = tmp_path / "check"
    assert main(["check", str(out), "--engine", "python", "--skew", "100", "--out", str(report), "--quiet"]) == 1
    assert _rules_of(report) == {"msgtrk-discard-after-next-hop"}


def test_a_rule_that_does_not_fire_exits_2(tmp_path, capsys):
    out = tmp_path / "min.jsonl"
    clean = SAMPLES_DIR / "clean" / "sr-s1.jsonl"
    assert main(["shrink", str(clean), "--rule", "shadow-before-ack", "--out", str(out)]) == 2
    assert "does not fire" in capsys.readouterr().err and not out.exists()
    sample = MUTANTS / "sr--ack-before-shadow.jsonl"
    assert main(["shrink", str(sample), "--rule", "shadow-before-ack", "--entity", "nobody", "--out", str(out)]) == 2
    assert main(["shrink", str(sample), "--rule", "shadow-before-ack", "--out", str(tmp_path / "x.txt")]) == 2


def test_ddmin_finds_a_1_minimal_subset():
    calls = []

    def fails(items):
        calls.append(len(items))
        return 3 in items and 17 in items

    assert ddmin(list(range(40)), fails) == [3, 17]
    assert ddmin(list(range(40)), lambda items: True) == []
