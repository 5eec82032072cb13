"""What the clock-skew monitor judged (issue 29; `haconform check --skew MS`, `model.skew`).

Each required ordering is a rule (`model.skew.rules`, defined in `spec.claims.skew_rules`): an instance the
bound decides (consistent, violated, jointly inconsistent) is judged; an ambiguous one is skipped, explainable
either way within the bound. On a true trace under a tight bound every ordering the trace has is judged; under
a loose bound (the twin) the same instances are all skipped with the reason and none judged. Per rule,
violations (an inconsistent one under its ordering's rule) <= judged.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from conformance.check import run_monitor
from model.kernel.sim import HOUR
from model.kernel.workload import simulate
from model.registry import get
from model.skew import rules as R
from model.skew.monitor import SkewMonitor
from spec.claims import skew_rules
from spec.claims.skew import Ordering, check_skew
from traces.verdict import MonitorResult, Tally

pytestmark = pytest.mark.unit


def _one(events, skew) -> MonitorResult:
    (result,) = run_monitor(SkewMonitor(skew), events)
    return result


def _bounded(result: MonitorResult) -> None:
    assert result.tally is not None and set(result.tally.judged) | set(result.tally.unjudged) <= set(R.RULES)
    for rule, n in Counter(v.rule.removesuffix(".skew_inconsistent") for v in result.violations).items():
        assert n <= result.tally.judged.get(rule, 0), (rule, n, result.tally.judged)


def test_the_table_is_the_orderings_rules():
    assert R.RULES is skew_rules.RULES
    assert [(r.name, r.requirement) for r in R.RULES.values()] == [
        ("net_send_before_recv", "TR-003"),
        ("shadow_received_before_accept", "SR-031"),
        ("shadow_stored_before_ack", "SR-030"),
    ]
    assert {o.check for o in SkewMonitor(0).orderings} == set(R.RULES.values())


def test_a_tight_bound_judges_every_ordering_the_trace_has():
    net = _one(simulate(1), 0)
    assert net.tally.judged == {R.NET_SEND_BEFORE_RECV.name: 52} and not net.tally.unjudged
    sr = _one(get("sr").simulate(1), 0)
    assert sr.tally.judged == {R.SHADOW_RECEIVED_BEFORE_ACCEPT.name: 13, R.SHADOW_STORED_BEFORE_ACK.name: 13}
    _bounded(net)
    _bounded(sr)


def test_twin_a_loose_bound_leaves_every_instance_not_judged_with_the_reason():
    loose = _one(simulate(1), HOUR)
    assert not loose.tally.judged
    assert loose.tally.unjudged == {R.NET_SEND_BEFORE_RECV.name: [52, R.AMBIGUOUS]}
    assert loose.verdict.value == "unknown"


def test_violations_never_exceed_what_was_judged():
    shifted = [dataclasses.replace(e, ts_ms=e.ts_ms - HOUR) if e.node == "srv01" else e for e in simulate(1)]
    result = _one(shifted, 50)
    assert result.violations
    _bounded(result)
    for mutant in ("ack-before-shadow", "ack-before-store"):
        _bounded(_one(get("sr").mutants[mutant](1), 0))


def test_an_ordering_built_by_name_alone_is_not_counted():
    """A custom ordering (`Ordering(name, ...)`, as the claims tests build) has no rule object to count under."""
    report = check_skew(simulate(1), 0, (Ordering("x", "TR-003", "NET_SEND", "NET_RECV"),))
    tally = Tally()
    for inst in report.instances:
        inst.tally(tally)
    assert report.instances and not tally
