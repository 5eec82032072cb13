"""Active Manager: hand-built traces with known verdicts through the registered monitors.

Each case of `cases.py` runs through `conformance.check.verdict` (the core rules and every registered
monitor, as the CLI does); the exact set of rules reported must be the expected one, and the valid traces
(among them choices the model itself would not make) must raise no alarm. Seed 002.
"""

from __future__ import annotations

import pytest

from conformance.check import verdict
from model.am.rules import RULES
from tests.handbuilt.am.cases import CASES
from traces.verdict import Verdict

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("name", sorted(CASES))
def test_hand_built_trace_has_its_verdict(name: str) -> None:
    _family, build, expected = CASES[name]
    result = verdict(build().events)
    got = {v.rule for v in result.violations}
    if expected == "unknown":
        assert result.verdict is Verdict.UNKNOWN and not got, (result.violations, result.notes)
    else:
        assert got == set(expected), "\n".join(map(str, result.violations)) or "no violation"
        assert result.verdict is (Verdict.INVALID if expected else Verdict.VALID), result.notes
    assert all(v.requirement == RULES[v.rule].requirement for v in result.violations if v.mechanism == "am")


def test_each_family_has_valid_and_invalid_traces() -> None:
    for family in ("trust", "parameters", "transitions", "choices"):
        verdicts = [exp for fam, _, exp in CASES.values() if fam == family]
        assert frozenset() in verdicts and any(isinstance(e, frozenset) and e for e in verdicts), family


def test_a_whole_trace_without_dag_facts_is_judged_by_folding_the_dag_events() -> None:
    """The database groups of `no_dag_facts` cannot be judged alone; the whole trace can, and is valid."""
    from model.am.monitor import AmMonitor

    assert AmMonitor().check(CASES["no_dag_facts"][1]().events).verdict is Verdict.VALID


NEW_RULES = {
    "dag-record",
    "pam-transition",
    "role-record",
    "mount-transition",
    "mount-not-active",
    "minority-mount",
    "copy-status-transition",
    "active-record",
    "copy-config-record",
    "acll-record",
    "bcss-record",
}


def test_every_new_rule_has_a_hand_built_twin() -> None:
    """Each rule of `NEW_RULES` (twins written by hand, not mutants) is the expected verdict of a violating trace."""
    shown = {r for _, _, exp in CASES.values() if isinstance(exp, frozenset) for r in exp}
    assert shown >= NEW_RULES, NEW_RULES - shown
    assert set(RULES) >= NEW_RULES


def test_quorum_is_a_strict_majority_and_the_pin_can_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    """AM-I13: exactly half of the members is no quorum. Twin: with 'half is enough' the trace where a PAM is
    taken in one half of a 2+2 split passes, so the case above would fail."""
    from model.am.state import World

    half = CASES["half_is_no_quorum"][1]().events
    assert {v.rule for v in verdict(half).violations} == {"pam-owns-quorum"}

    def half_is_enough(self: World) -> frozenset[str] | None:
        for g in self.groups:
            live = g & self.up & set(self.members)
            if 2 * len(live) >= len(self.members):
                return live
        return None

    monkeypatch.setattr(World, "quorum", half_is_enough)
    assert verdict(half).violations == ()


def test_the_model_takes_no_pam_in_a_half_split() -> None:
    """The generator agrees: a 2+2 partition of a four-member DAG leaves it without a PAM, and a 3+1
    partition keeps one on the majority side."""
    from model.am.protocol import Layout, ModelSystem
    from tests.am.helpers import ScriptEnv

    layout = Layout("DAG1", ("MBX1", "MBX2", "MBX3", "MBX4"), (), {"DB1": ("MBX1", "MBX2", "MBX3")})
    system = ModelSystem(layout, ScriptEnv())
    system.partition([["MBX1", "MBX2"]])
    assert system.world.quorum() is None and system.world.pam is None and system.pams() == frozenset()
    system.heal()
    system.partition([["MBX4"]])
    assert system.world.quorum() == {"MBX1", "MBX2", "MBX3"} and system.world.pam in {"MBX1", "MBX2", "MBX3"}
