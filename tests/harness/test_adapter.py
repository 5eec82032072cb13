"""The stdio adapter: schema errors name the field, time-outs are crashes, kill -9 and restart with the same
or a new state directory (`conformance/harness/process.py`)."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from conformance.harness.core import SutFailure
from conformance.harness.process import ProcessClient, validate_reply
from conformance.harness.systems import SrProcess

ROOT = Path(__file__).resolve().parents[2]
SR_NODE = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'sr_node.py'}"
SETUP = {
    "seed": 1,
    "layout": "multi-site-dag",
    "reject_on_failure": False,
    "preference": "PreferRemote",
    "enabled": True,
    "heartbeat_ms": 120000,
    "hub": False,
    "n_servers": 3,
    "max_remote": 4,
    "max_local": 2,
    "retry_meaning": "attempts",
    "resubmit_ms": 10800000,
    "safety_net_hold_ms": 172800000,
    "expiration_ms": 172800000,
}


def fake_sut(tmp_path: Path, body: str) -> str:
    """A tiny system under test: `reply(req)` returns the reply object for each request."""
    prog = tmp_path / "fake_sut.py"
    prog.write_text(
        textwrap.dedent("""\
        import json, sys, time
        STATE = sys.argv[sys.argv.index("--state-dir") + 1]
        def ok(req, events=(), result=None):
            return {"id": req["id"], "events": list(events), "result": result}
        """)
        + textwrap.dedent(body)
        + textwrap.dedent("""\
        for line in sys.stdin:
            req = json.loads(line)
            out = reply(req)
            sys.stdout.write((out if isinstance(out, str) else json.dumps(out)) + "\\n")
            sys.stdout.flush()
        """)
    )
    return f"{sys.executable} {prog}"


def test_a_reply_breaking_the_schema_names_the_field(tmp_path: Path) -> None:
    cmd = fake_sut(
        tmp_path,
        """\
        def reply(req):
            if req["op"] == "setup":
                return ok(req, result={"resumed": False})
            ev = {"ts_ms": "soon", "node": "MBX01", "entity": "m1", "kind": "RECEIVE", "attrs": {}}
            return ok(req, [ev])
        """,
    )
    client = ProcessClient(cmd, "sr", timeout_s=20)
    try:
        client.call("setup", SETUP, 0)
        with pytest.raises(SutFailure) as info:
            client.call("submit", {"msg": "m1", "primary": "MBX01", "forks": ["mbx"], "origin": "outside"}, 0)
    finally:
        client.close()
    assert info.value.field == "events/0/ts_ms"
    assert "events/0/ts_ms" in str(info.value) and "'soon' is not of type 'integer'" in str(info.value)


def test_schema_checks_results_and_attribute_types() -> None:
    with pytest.raises(SutFailure, match="field result/1"):
        validate_reply("sr", "servers", {"id": 1, "events": [], "result": ["MBX01", 7]})
    bad_attr = {"ts_ms": 1, "node": "n", "entity": "m", "kind": "X", "attrs": {"forks": [{"a": 1}]}}
    with pytest.raises(SutFailure, match="events/0/attrs/forks"):
        validate_reply("sr", "advance", {"id": 1, "events": [bad_attr]})
    with pytest.raises(SutFailure, match=r"missing|required"):
        validate_reply("am", "crash", {"id": 1})
    validate_reply("pf", "create_folder", {"id": 1, "events": [], "result": "1-2A41"})  # a good reply passes


def test_a_line_that_is_not_json_is_a_failure_not_a_crash(tmp_path: Path) -> None:
    cmd = fake_sut(
        tmp_path,
        """\
        def reply(req):
            return "hello" if req["op"] != "setup" else ok(req, result={"resumed": False})
        """,
    )
    client = ProcessClient(cmd, "sr", timeout_s=20)
    try:
        client.call("setup", SETUP, 0)
        with pytest.raises(SutFailure, match="not one JSON object"):
            client.call("heal", {}, 0)
    finally:
        client.close()


def test_a_reply_time_out_is_treated_as_a_crash(tmp_path: Path) -> None:
    """The first `heal` hangs: the adapter kills the process, restarts it on the same state directory,
    sends `setup` again (the program resumes) and the run goes on."""
    cmd = fake_sut(
        tmp_path,
        """\
        import os
        def reply(req):
            marker = os.path.join(STATE, "hung")
            if req["op"] == "setup":
                return ok(req, result={"resumed": os.path.exists(marker)})
            if req["op"] == "heal" and not os.path.exists(marker):
                open(marker, "w").close()
                time.sleep(60)
            return ok(req, result=["MBX01"] if req["op"] == "servers" else None)
        """,
    )
    system = SrProcess(ProcessClient(cmd, "sr", timeout_s=1.5), SETUP)
    try:
        first_pid, state_dir = system.client.proc.pid, system.client.state_dir
        system.heal()  # hangs -> crash -> restart
        assert system.client.crashes == 1
        assert system.client.proc.pid != first_pid and system.client.state_dir == state_dir
        assert "treated as a crash" in system.notes[0]
        assert system.servers() == ["MBX01"]  # the restarted program answers
    finally:
        system.close()


def test_kill_and_restart_on_the_same_state_directory_resumes() -> None:
    system = SrProcess(ProcessClient(SR_NODE, "sr", timeout_s=30), SETUP)
    try:
        system.submit("m1", "MBX01", ["mbx"])
        trace = system.trace_id
        assert system.kill_and_restart(new_state=False) is False
        assert system.trace_id == trace  # the same deployment, the same trace
        system.submit("m2", "MBX02", ["mbx"])
        system.finish()
        snaps = sorted(e.entity for e in system.events() if e.kind == "SNAPSHOT")
        assert snaps == ["m1", "m2"]  # m1 survived the kill -9
    finally:
        system.close()


def test_kill_and_restart_with_a_new_state_directory_starts_a_new_trace() -> None:
    system = SrProcess(ProcessClient(SR_NODE, "sr", timeout_s=30), SETUP)
    try:
        system.submit("m1", "MBX01", ["mbx"])
        old_dir, old_trace = system.client.state_dir, system.trace_id
        assert system.kill_and_restart(new_state=True) is True
        assert system.client.state_dir != old_dir and system.trace_id != old_trace
        system.submit("m2", "MBX02", ["mbx"])
        system.finish()
        new = [e for e in system.events() if e.trace_id == system.trace_id]
        assert new[0].kind == "TRACE_START"
        assert sorted(e.entity for e in new if e.kind == "SNAPSHOT") == ["m2"]  # m1 went with the old state
    finally:
        system.close()


def test_a_program_that_cannot_start_is_a_clear_failure(tmp_path: Path) -> None:
    client = ProcessClient(str(tmp_path / "no-such-program"), "sr")
    try:
        with pytest.raises(SutFailure, match="cannot start"):
            client.call("setup", SETUP, 0)
    finally:
        client.close()
