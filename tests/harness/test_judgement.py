"""Every shadow redundancy run ends with what the monitor needs to judge it fully (one end-of-run SNAPSHOT per
received message, after the fairness tail), through the stdio adapter and for the model; a run whose records
lack them is still reported as judged only in part."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.check import verdict
from conformance.harness.core import replay_steps
from conformance.harness.search import driver, search
from conformance.harness.systems import process_factory

ROOT = Path(__file__).resolve().parents[2]
SR_NODE = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'sr_node.py'}"
SETUP = {
    "seed": 4,
    "layout": "single-site-dag",
    "reject_on_failure": True,
    "preference": "PreferRemote",
    "enabled": True,
    "heartbeat_ms": 120000,
    "hub": False,
    "n_servers": 2,
    "max_remote": 4,
    "max_local": 2,
    "retry_meaning": "attempts",
    "resubmit_ms": 10800000,
    "auto_discard_ms": 172800000,
    "safety_net_hold_ms": 172800000,
    "expiration_ms": 172800000,
    "stall_p": 0.0,
}


def _call(call: str, **args: Any) -> dict[str, Any]:
    return {"call": call, "args": args}


@pytest.mark.model
def test_a_rejected_message_and_a_fresh_deployment_are_judged_fully() -> None:
    """The two runs that used to end without SNAPSHOTs: a message rejected for want of a shadow, and messages
    of a deployment replaced by `kill -9` with a new state directory."""
    system = process_factory("sr", SR_NODE)(SETUP)
    try:
        servers = system.servers()
        steps = [
            {"op": "isolate", "calls": [_call("isolate", server=servers[1])]},
            {"op": "submit", "calls": [_call("submit", msg="m1", primary=servers[0], forks=["mbx"])]},
            {"op": "heal", "calls": [_call("heal")]},
            {"op": "submit", "calls": [_call("submit", msg="m2", primary=servers[0], forks=["mbx"])]},
            {"op": "process_restart", "calls": [_call("kill_and_restart", new_state=True)]},
            {"op": "submit", "calls": [_call("submit", msg="m3", primary=servers[1], forks=["mbx"])]},
        ]
        session, _ = replay_steps(driver("sr"), system, SETUP, steps)
        events = session.events()
    finally:
        system.close()
    kinds = {(e.trace_id, e.entity, e.kind) for e in events}
    first, second = sorted({e.trace_id for e in events})
    assert (first, "m1", "REJECT") in kinds and (first, "m1", "SNAPSHOT") in kinds
    assert (first, "m2", "SNAPSHOT") in kinds and (second, "m3", "SNAPSHOT") in kinds
    result = verdict(events, [driver("sr").monitor()])
    assert not result.violations and not result.notes, result.notes


@pytest.mark.model
@pytest.mark.parametrize("system", ["sr_node", "model"])
def test_no_sr_run_is_judged_only_in_part(system: str) -> None:
    factory = process_factory("sr", SR_NODE) if system == "sr_node" else None
    out = search("sr", factory, "quick", 8)
    assert out.failure is None and out.runs > 0
    assert out.unjudged_runs == 0, out.unjudged_notes


class _NoSnapshots:
    """The model with its SNAPSHOT records withheld: liveness cannot be judged."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def events(self) -> list[Any]:
        return [e for e in self.inner.events() if e.kind != "SNAPSHOT"]


@pytest.mark.model
def test_a_run_without_snapshots_is_still_reported_partial() -> None:
    """The twin: what the monitor cannot judge is counted as judged in part, never hidden."""
    build = driver("sr").model_factory()
    out = search("sr", lambda setup: _NoSnapshots(build(setup)), "quick", 4)
    assert out.runs > 0 and out.unjudged_runs > 0
    assert any("no end-of-run SNAPSHOT" in n for n in out.unjudged_notes)
