"""`haconform upgrade` (issue 18, a versioned contract): a version-1 trace, built here from a current one by
undoing what version 2 changed, upgrades to a trace with the original verdict; what is not mechanical exits 2
naming what is missing. Twins: the version-1 trace itself is refused by `check`; an upgrade that skips the
reordering changes the verdict; traces lacking the configuration are refused with the missing piece named."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from conformance import upgrade as U
from conformance.check import verdict
from conformance.cli import main
from model.registry import get, simulate
from traces.io import write_jsonl
from traces.schema import Event

pytestmark = pytest.mark.unit


def _after_causes(events: list[Event]) -> list[Event]:
    """Version 1's order: XQUERYDISCARD after what it caused at its instant on its shadow server."""
    out = list(events)
    i = 0
    while i < len(out):
        e = out[i]
        if e.kind == "XQUERYDISCARD":
            j = i
            while (
                j + 1 < len(out)
                and (n := out[j + 1]).ts_ms == e.ts_ms
                and n.node == e.node
                and (n.kind in U.CAUSED_BY_QUERY)
            ):
                j += 1
            out.insert(j, out.pop(i))
            i = j
        i += 1
    return out


def _copy_state_first(events: list[Event]) -> list[Event]:
    out = list(events)
    for i in range(len(out) - 1):
        a, b = out[i], out[i + 1]
        if a.kind == "MOUNTED" and b.kind == "COPY_STATE" and a.ts_ms == b.ts_ms and a.entity == b.entity:
            out[i], out[i + 1] = b, a
    return out


def downgrade(events: list[Event]) -> list[Event]:
    """A version-1 trace: configuration in TRACE_START only, SERVER_DIAL, the old orders, no context events."""
    out = []
    for e in events:
        if e.kind == "TRACE_START":
            topo = next((x.attrs["topology"] for x in events if x.kind == "SR_CONFIG" and "topology" in x.attrs), None)
            if topo is not None:
                cfg = {**json.loads(e.attrs["config"]), "sr_topology": json.loads(topo)}
                e = replace(e, attrs={**e.attrs, "config": json.dumps(cfg, sort_keys=True)})
        if e.kind in ("SR_CONFIG", "PF_CONFIG", "AM_DAG_CONFIG"):
            continue
        if e.kind == "AM_CONFIG" and "dial" in e.attrs:
            e = replace(e, kind="SERVER_DIAL")
        out.append(e)
    out = _copy_state_first(_after_causes(out))
    return [replace(e, seq=i, schema_version=1) for i, e in enumerate(out)]


def _rules(events: list[Event]) -> tuple[str, set[str]]:
    r = verdict(events)
    return r.verdict.value, {v.rule for v in r.violations}


TRACES = [
    ("sr", lambda: simulate("sr", 3)),
    ("sr", lambda: get("sr").mutants["premature-discard"](2)),
    ("am", lambda: simulate("am", 2)),
    ("am", lambda: get("am").mutants[sorted(get("am").mutants)[0]](1)),
    ("pf", lambda: simulate("pf", 1)),
]


@pytest.mark.parametrize(("mech", "make"), TRACES, ids=[f"{m}-{i}" for i, (m, _) in enumerate(TRACES)])
def test_a_version_1_trace_upgrades_to_the_original_verdict(mech: str, make) -> None:
    current = make()
    old = downgrade(current)
    assert all(e.schema_version == 1 for e in old) and old != current
    new, counts = U.upgrade(old)
    assert all(e.schema_version == 2 for e in new) and counts["traces"] == 1
    assert _rules(new) == _rules(current)


def test_the_cli_upgrades_and_check_accepts_the_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    write_jsonl(old, downgrade(simulate("am", 1)))
    assert main(["check", str(old), "--engine", "python", "--out", str(tmp_path / "o1")]) == 2  # twin: refused
    assert "schema version 1" in capsys.readouterr().err
    assert main(["upgrade", str(old), "--out", str(new)]) == 0
    assert "SERVER_DIAL renamed AM_CONFIG" in capsys.readouterr().err
    assert main(["check", str(new), "--engine", "python", "--out", str(tmp_path / "o2")]) == 0


def test_twin_without_the_reordering_the_verdict_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The reordering is what makes the upgrade right: skipping it leaves version 1's order, judged as a fault."""
    current = simulate("sr", 3)
    monkeypatch.setattr(U, "_query_first", lambda trace: trace)
    new, _ = U.upgrade(downgrade(current))
    assert _rules(new) != _rules(current)


def _refused(tmp_path: Path, events: list[Event], capsys: pytest.CaptureFixture[str]) -> str:
    old = tmp_path / "old.jsonl"
    write_jsonl(old, events)
    assert main(["upgrade", str(old), "--out", str(tmp_path / "new.jsonl")]) == 2
    assert not (tmp_path / "new.jsonl").exists()
    return capsys.readouterr().err


def test_sr_without_a_topology_is_not_mechanical(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old = downgrade(simulate("sr", 1))
    start = old[0]
    cfg = {k: v for k, v in json.loads(start.attrs["config"]).items() if k != "sr_topology"}
    err = _refused(tmp_path, [replace(start, attrs={**start.attrs, "config": json.dumps(cfg)}), *old[1:]], capsys)
    assert "not mechanical" in err and "SR_CONFIG" in err and "topology" in err


def test_pf_without_restated_configuration_is_not_mechanical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = [
        replace(e, attrs={k: v for k, v in e.attrs.items() if k != "costs"})
        if e.kind == "REPLICA_CREATE" and e.entity == "1-1" and e.node == "pf01"
        else e
        for e in downgrade(simulate("pf", 1))
    ]
    err = _refused(tmp_path, old, capsys)
    assert "PF_CONFIG" in err and "pf01" in err


def test_am_dag_databases_without_dag_events_are_not_mechanical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = [
        e
        for e in downgrade(simulate("am", 1))
        if e.kind not in ("DAG_VIEW", "PAM_ACQUIRE", "PAM_RELEASE", "SERVER_HEALTH")
    ]
    err = _refused(tmp_path, old, capsys)
    assert "AM_DAG_CONFIG" in err and "DB1" in err


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["upgrade", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema_version": 1}\n', encoding="utf-8")
    assert main(["upgrade", str(bad), "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "bad.jsonl:1" in capsys.readouterr().err
