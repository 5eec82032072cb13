"""Coverage of a run: the traces kept for it are varied, not the run's first (`core.FailureLog.keep`), and a
perturbation may change one setting of the recorded configuration (`report._reconfigured`)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from conformance.harness.core import FailureLog, features
from conformance.harness.report import _reconfigured
from traces.schema import Event


def _ev(kind: str, seq: int = 1, **attrs: Any) -> Event:
    return Event("t", seq, f"t-{seq}", 0, "n", "sr", "m1", kind, attrs)


def _trace(*kinds: str) -> list[Event]:
    return [_ev(k, i) for i, k in enumerate(kinds)]


@pytest.mark.unit
def test_a_trace_showing_something_new_replaces_one_that_adds_nothing() -> None:
    log = FailureLog(keep_traces=2)
    plain, same = _trace("RECEIVE", "ACCEPT"), _trace("RECEIVE", "ACCEPT")
    log.keep(plain)
    log.keep(same)
    rejected = _trace("RECEIVE", "REJECT")
    log.keep(rejected)
    assert rejected in log.traces and len(log.traces) == 2
    # the twin: a trace with nothing new does not displace the variety already kept
    log.keep(_trace("RECEIVE", "ACCEPT", "ACCEPT", "ACCEPT"))
    assert rejected in log.traces and any(len(t) == 2 and t[1].kind == "ACCEPT" for t in log.traces)


@pytest.mark.unit
def test_nothing_is_kept_unless_asked() -> None:
    log = FailureLog()
    log.keep(_trace("RECEIVE"))
    assert log.traces == []


@pytest.mark.unit
def test_features_read_words_booleans_and_the_recorded_settings() -> None:
    start = _ev("TRACE_START", 0, config=json.dumps({"layout": "mixed", "sr": {"enabled": False, "heartbeat_ms": 5}}))
    fs = features([start, _ev("ACCEPT", redundant=True, response="ok", msg="m17")])
    assert {("config", "enabled", False), ("config", "heartbeat_ms", 5), ("config", "layout", "mixed")} <= fs
    assert {("ACCEPT", "redundant", True), ("ACCEPT", "response", "ok"), "ACCEPT"} <= fs
    assert ("ACCEPT", "msg", "m17") not in fs  # an identifier is not a feature


@pytest.mark.unit
def test_a_reconfigured_start_changes_exactly_one_setting() -> None:
    cfg = {"layout": "mixed", "n_servers": 4, "sr": {"enabled": True, "heartbeat_ms": 120000, "preference": "x"}}
    start = _ev("TRACE_START", 0, config=json.dumps(cfg), seed=1)
    for seed in range(20):
        changed = _reconfigured(start, random.Random(seed))
        assert changed is not None and changed.attrs["seed"] == 1
        new = json.loads(changed.attrs["config"])
        flat = lambda c: {**{k: v for k, v in c.items() if k != "sr"}, **c["sr"]}  # noqa: E731
        diff = {k for k, v in flat(new).items() if flat(cfg)[k] != v}
        assert len(diff) == 1 and diff <= {"n_servers", "enabled", "heartbeat_ms"}
    assert _reconfigured(_ev("TRACE_START", 0, config="not json"), random.Random(0)) is None
