"""Every parameter that bounds observable behaviour has a rule, and the rule notices a
model whose behaviour and recorded configuration disagree (either way round)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from model.kernel.sim import MINUTE
from model.sr import events as ev
from model.sr.mutants import PARAMETER_MUTANTS
from model.sr.protocol import ModelSystem
from model.sr.rules import RULES
from model.sr.sim import simulate
from spec.catalogue import catalogue
from tests.sr.helpers import QUIET, report, sr, violations
from traces.schema import Event


def _recorded(events: list[Event], **changes: object) -> list[Event]:
    """The same run with a different configuration recorded in TRACE_START (behaviour unchanged)."""
    start = events[0]
    cfg = json.loads(start.attrs["config"])
    cfg["sr"] = {**cfg["sr"], **changes}
    attrs = {**start.attrs, "config": json.dumps(cfg)}
    return [dataclasses.replace(start, attrs=attrs), *events[1:]]


def _rules(events: list[Event]) -> set[str]:
    return {v.rule for v in violations(events)}


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(PARAMETER_MUTANTS))
def test_parameter_mutant_is_caught(name: str) -> None:
    m = PARAMETER_MUTANTS[name]
    for seed in range(6):
        if m.rule in _rules(m.simulate(seed)):
            return
    pytest.fail(f"{name}: {m.rule} not reported in seeds 0..5")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("run", "recorded", "rule"),
    [
        ({"safety_net_hold_ms": 40 * MINUTE}, {"safety_net_hold_ms": 20 * MINUTE}, "safetynet-hold"),
        ({"safety_net_hold_ms": 40 * MINUTE}, {"safety_net_hold_ms": 80 * MINUTE}, "safetynet-hold"),
        ({"auto_discard_ms": 60 * MINUTE, "resubmit_ms": 30 * MINUTE}, {"auto_discard_ms": 2 * 60 * MINUTE},
         "auto-discard-interval"),
        ({"send_inactivity_ms": 2 * MINUTE}, {"send_inactivity_ms": 10 * MINUTE}, "session-timeout"),
        ({"heartbeat_ms": 4 * MINUTE}, {"heartbeat_ms": 2 * MINUTE}, "heartbeat-frequency"),
        ({"expiration_ms": 20 * MINUTE}, {"expiration_ms": 40 * MINUTE}, "queue-expiry"),
        ({"expiration_ms": 20 * MINUTE}, {"expiration_ms": 10 * MINUTE}, "queue-expiry"),
        ({"resubmit_ms": 30 * MINUTE}, {"resubmit_ms": 60 * MINUTE}, "promotion-timing"),
    ],
    ids=lambda x: ",".join(f"{k}={v}" for k, v in x.items()) if isinstance(x, dict) else x,
)  # fmt: skip
def test_a_changed_setting_is_noticed(run: dict, recorded: dict, rule: str) -> None:
    """The model runs with one value; the trace records another: the rule for that parameter fires, and the
    honest trace (the value it ran with) is valid."""
    from model.sr.cluster import Timing

    timing = Timing(stall_p=0.5, hop_slow_p=0.5)
    for seed in range(6):
        events = simulate(seed, timing=timing, **run)
        if rule in _rules(_recorded(events, **recorded)):
            assert not violations(events), report(events)
            return
    pytest.fail(f"{rule} not reported for a run with {run} recorded as {recorded}")


@pytest.mark.unit
def test_unacknowledged_shadow_expires_after_hold_plus_expiration() -> None:
    """SR-066 pinned: the primary's discard events are deleted while the shadow server is down (SR-064), so
    the shadow never learns the message was delivered; it is dropped exactly SafetyNetHoldTime +
    MessageExpirationTimeout after it was made, and not promoted (the primary stays reachable)."""
    s = ModelSystem(
        3, layout="multi-site-dag", n_servers=2, timing=QUIET,
        auto_discard_ms=30 * MINUTE, safety_net_hold_ms=60 * MINUTE, expiration_ms=60 * MINUTE,
    )  # fmt: skip
    s.submit("m1", "MBX01", ["mbx"])
    s.advance(MINUTE)
    s.crash("MBX02")
    s.advance(45 * MINUTE)
    s.restart("MBX02")
    s.advance(3 * 60 * MINUTE)
    events = list(s.events())
    made = sr(events, ev.HARECEIVE, "m1")[0]
    expired = sr(events, ev.SHADOW_EXPIRE, "m1")
    assert sr(events, ev.DISCARD_EXPIRE, "m1") and not sr(events, ev.PROMOTE, "m1"), report(events)
    assert [e.ts_ms - made.ts_ms for e in expired] == [120 * MINUTE], report(events)
    assert not violations(events), report(events)


@pytest.mark.unit
def test_every_bounding_parameter_has_a_rule_or_a_reason() -> None:
    """SR parameters are in some rule's `params` or in spec/observability/sr.toml with a reason."""
    import tomllib
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "spec" / "observability" / "sr.toml"
    exempt = {row["id"]: row["reason"] for row in tomllib.loads(path.read_text())["unobservable"]}
    assert all(len(reason) > 30 for reason in exempt.values())
    params = {r.id for r in catalogue().by_mechanism("sr") if r.kind == "parameter"}
    ruled = {p for rule in RULES.values() for p in rule.params}
    assert params - ruled - set(exempt) == set()
    assert not ruled & set(exempt), "a parameter with a rule needs no exemption"
