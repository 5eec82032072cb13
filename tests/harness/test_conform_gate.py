"""`haconform conform` as a gate: a system that answers every request and records nothing does not pass (its
runs exercise fewer rules than the floor: half of what the reference model exercises on the same inputs,
`conformance.harness.floor`); an empty `servers` reply is a protocol error naming the request, not a crash;
a reply's events before the request's `now_ms` break the protocol (PROTOCOL.md). Each with its twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.harness.core import SutFailure
from conformance.harness.floor import Floor
from conformance.harness.process import ProcessClient
from tests.harness.test_adapter import SETUP, fake_sut

SILENT_SR = """\
SERVERS = []
def reply(req):
    if req["op"] == "setup":
        topo = req["args"]["topology"]
        SERVERS[:] = sorted(n for n in topo if topo[n]["version"] != "2010")
        return ok(req, result={"resumed": False})
    if req["op"] == "servers":
        return ok(req, result=SERVERS)
    return ok(req)
"""

NO_SERVERS_SR = """\
def reply(req):
    if req["op"] == "setup":
        return ok(req, result={"resumed": False})
    if req["op"] == "servers":
        return ok(req, result=[])
    return ok(req)
"""

PAST_EVENT = """\
def reply(req):
    if req["op"] == "setup":
        return ok(req, result={"resumed": False})
    ts = req["now_ms"] + int(req["args"].get("msg", "m0")[1:]) - 1  # m0: one ms before now_ms; m1: at now_ms
    return ok(req, [{"ts_ms": ts, "node": "MBX01", "entity": req["args"]["msg"], "kind": "RECEIVE", "attrs": {}}])
"""


def conform(sut: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict]:
    code = main(["conform", "sr", "--sut", sut, "--budget", "5", "--json", "--replay-out", str(tmp_path / "r")])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.unit
def test_floor_is_half_the_model_rounded_up() -> None:
    assert Floor([], ["a", "b", "c"], runs=1).below and Floor([], ["a", "b", "c"], runs=1).required == 2
    assert not Floor(["x", "y"], ["a", "b", "c"], runs=1).below  # twin: two of three reaches the floor
    assert not Floor([], [], runs=0).below  # nothing to compare with: no floor


@pytest.mark.model
def test_a_system_that_records_nothing_does_not_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = conform(fake_sut(tmp_path, SILENT_SR), tmp_path, capsys)
    assert code == 1 and out["verdict"] == "fail", out
    floor = out["coverage_floor"]
    assert floor["below"] and floor["exercised"] == 0 and floor["reference_exercised"] > 0
    assert floor["reference_runs"] > 0 and floor["not_replayed"] == 0 and floor["missing"]


@pytest.mark.model
def test_an_empty_servers_reply_is_a_protocol_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = conform(fake_sut(tmp_path, NO_SERVERS_SR), tmp_path, capsys)
    assert code == 1 and out["verdict"] == "fail", out
    problem = out["failure"]["problem"]
    assert "reply to 'servers' (request 2) lists no servers" in problem and "MBX" in problem


@pytest.mark.unit
def test_an_event_before_now_ms_is_a_protocol_error(tmp_path: Path) -> None:
    client = ProcessClient(fake_sut(tmp_path, PAST_EVENT), "sr", timeout_s=20)
    submit = {"primary": "MBX01", "forks": ["mbx"], "origin": "outside"}
    try:
        client.call("setup", SETUP, 1000)
        assert client.call("submit", {"msg": "m1", **submit}, 1000)["events"][0]["ts_ms"] == 1000  # twin: at now
        with pytest.raises(SutFailure) as info:
            client.call("submit", {"msg": "m0", **submit}, 1000)
    finally:
        client.close()
    assert info.value.field == "events/0/ts_ms"
    text = str(info.value)
    assert "reply to 'submit' (request 3)" in text and "RECEIVE of 'm0'" in text and "ts_ms 999" in text


@pytest.mark.model
def test_the_pytest_plugin_applies_the_same_floor(tmp_path: Path) -> None:
    from conformance.harness.plugin import _run

    text = _run("sr", fake_sut(tmp_path, SILENT_SR), "quick", 5, 20, tmp_path)
    assert text.startswith("FAIL sr: ") and "exercised 0 rule(s), fewer than the required" in text
    assert _run("sr", None, "quick", 5, 20, tmp_path) == ""  # twin: the model itself passes
