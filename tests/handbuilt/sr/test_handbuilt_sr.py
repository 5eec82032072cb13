"""An independent shadow redundancy corpus: every hand-written trace gets exactly its expected rules
from the registered monitors (`conformance.check.verdict`), and the valid ones no false alarm."""

from __future__ import annotations

import pytest

from conformance.check import verdict
from model.sr.rules import RULES
from tests.handbuilt.sr.cases import CASES
from traces.verdict import Verdict


@pytest.mark.unit
@pytest.mark.parametrize(("name", "build", "expected"), CASES, ids=[c[0] for c in CASES])
def test_hand_written_trace_gets_its_verdict(name, build, expected) -> None:
    result = verdict(build())
    found = {v.rule for v in result.violations}
    assert found == expected, "\n".join(map(str, result.violations)) or str(result.notes)
    if not expected:
        assert result.verdict is not Verdict.INVALID


@pytest.mark.unit
def test_every_family_has_valid_and_invalid_traces() -> None:
    for family in ("f1", "f2", "f3", "f4"):
        mine = [c for c in CASES if c[0].startswith(family)]
        assert any(not c[2] for c in mine) or family == "f3", family
        assert any(c[2] for c in mine), family
    assert set().union(*(c[2] for c in CASES)) <= set(RULES)
