"""The end-of-run checks of the harness carry their rule (issue 29): `Driver.end_checks` returns `EndProblem`s
holding the rule object of the mechanism's table, `--watch`-style filtering (`core.watched`, used by the search
and the minimiser) keeps a finding by that rule, never by searching rule names inside the text, and a failure
names the rule and requirement from it. Twins: a text that mentions another rule is not taken for it; a
finding of a watched rule is kept."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from conformance.harness.am import DRIVER as AM
from conformance.harness.core import EndProblem, Failure, watched
from model.am.rules import RULES as AM_RULES

pytestmark = pytest.mark.unit


class _TwoPams:
    """What an am system exposes at the end of a run: two PAMs, DB1 mounted on two servers."""

    def pams(self) -> list[str]:
        return ["MBX01", "MBX02"]

    def mounted(self, db: str) -> list[str]:
        return ["MBX01", "MBX03"] if db == "DB1" else []


def test_am_end_checks_carry_the_rule_objects_of_the_table() -> None:
    session = SimpleNamespace(system=_TwoPams(), setup={"copies": ["DB1", "DB2"]})
    found = AM.end_checks(session)  # type: ignore[arg-type]
    assert [p.rule for p in found] == [AM_RULES["single-pam"], AM_RULES["one-active-copy"]]
    assert str(found[0]) == "[AM-005 single-pam] the system reports PAMs ['MBX01', 'MBX02']"
    assert watched(found, frozenset({"one-active-copy"})) == [found[1]]
    assert watched(found, None) == found


def test_a_finding_is_filtered_by_its_rule_not_by_its_text() -> None:
    misleading = EndProblem(AM_RULES["single-pam"], "the system reports PAMs [AM-009 one-active-copy] x")
    assert watched([misleading], frozenset({"one-active-copy"})) == []  # the text names it; the rule is not it
    assert watched([misleading], frozenset({"single-pam"})) == [misleading]  # twin: its own rule is kept


def test_a_failure_names_the_rule_its_end_problem_carries() -> None:
    p = EndProblem(AM_RULES["one-active-copy"], "[PF-035 convergence] in the text")
    f = Failure("am", {"seed": 1}, [], [], str(p), end_problems=[p])
    assert (f.rule, f.requirement) == ("one-active-copy", "AM-009")
    bare = Failure("am", {"seed": 1}, [], [], "[AM-005 single-pam] a protocol problem that only reads like one")
    assert (bare.rule, bare.requirement) == ("adapter-protocol", "")  # twin: a text is never parsed for a rule
