"""Independent hand-built public folder traces: each hand-built trace gets exactly its expected verdict
through `conformance.check.verdict` and the registered monitors (no false alarm on the valid ones)."""

from __future__ import annotations

import pytest

from conformance.check import verdict
from model.pf.rules import RULES
from tests.handbuilt.pf.scenarios import cases

CASES = cases()


@pytest.mark.unit
@pytest.mark.parametrize(("name", "events", "expected"), CASES, ids=[c[0] for c in CASES])
def test_hand_built_trace_gets_its_verdict(name: str, events: list, expected: set[str]) -> None:
    result = verdict(events)
    found = {v.rule for v in result.violations}
    assert found == expected, f"{name}: {[str(v) for v in result.violations]} notes={result.notes[:3]}"
    if not expected:
        assert result.verdict == "valid", result.notes
    assert found <= set(RULES) | {"seq-strictly-increasing"}
