"""Mechanism-independent rules: clean traces pass, each planted recording bug is caught by its rule."""

from __future__ import annotations

import pytest

from conformance.check import CORE_RULES, check_events, core_violations
from model.kernel.workload import MUTANTS, simulate
from spec.catalogue import catalogue

pytestmark = pytest.mark.unit

EXPECTED = {
    "recv-without-send": "recv-after-send",
    "clock-backwards": "node-clock-monotonic",
    "seq-repeat": "seq-strictly-increasing",
    "event-id-repeat": "event-id-unique",
    "no-trace-start": "trace-start",
}


def test_every_core_rule_cites_a_catalogued_requirement_and_has_a_mutant():
    for req in CORE_RULES.values():
        assert catalogue().has(req), req
    assert set(EXPECTED.values()) == set(CORE_RULES)
    assert set(EXPECTED) == set(MUTANTS)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_clean_traces_have_no_core_violation(seed):
    assert core_violations(simulate(seed)) == []


@pytest.mark.parametrize("mutant", sorted(EXPECTED))
def test_each_mutant_is_caught_by_its_rule_only(mutant):
    violations = check_events(MUTANTS[mutant](1), [])
    assert violations, mutant
    assert {v.rule for v in violations} == {EXPECTED[mutant]}
    for v in violations:
        assert v.requirement == CORE_RULES[v.rule] and v.event_ids and v.explanation


def test_sender_mismatch_is_a_violation():
    import dataclasses

    events = simulate(1)
    i = next(i for i, e in enumerate(events) if e.kind == "NET_RECV")
    forged = dataclasses.replace(events[i], attrs={**events[i].attrs, "src": "someone-else"})
    violations = core_violations([*events[:i], forged, *events[i + 1 :]])
    assert [v.rule for v in violations] == ["recv-after-send"]
    assert "claims sender someone-else" in violations[0].explanation
