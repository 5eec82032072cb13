"""Hand-built two-sided traces (`tests/handbuilt/files/<mechanism>/*.jsonl`): each valid trace passes, each planted
violation fails by exactly its rules, each trace whose events no monitor can judge is unknown with a note
naming why. The files are read by `haconform check`'s reader and must equal what the builders give."""

from __future__ import annotations

import pytest

from conformance.check import verdict
from tests.handbuilt.files.build import cases, jsonl, path_of
from traces.io import read_events
from traces.verdict import Verdict

pytestmark = pytest.mark.unit
CASES = cases()


@pytest.mark.parametrize(("mech", "name", "build", "expected"), CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_hand_built_trace_gets_its_verdict(mech: str, name: str, build, expected) -> None:
    path = path_of(mech, name)
    assert path.read_text(encoding="utf-8") == jsonl(build()), "run `python -m tests.handbuilt.files.build`"
    read = read_events(path)
    assert not read.errors
    result = verdict(read.events)
    found = {v.rule for v in result.violations}
    detail = "\n".join(map(str, result.violations)) or "\n".join(map(str, result.notes))
    if expected == "unknown":
        assert result.verdict is Verdict.UNKNOWN and not found, detail
        assert result.notes, "an unjudged trace says why"
    else:
        assert found == expected, detail
        assert result.verdict is (Verdict.INVALID if expected else Verdict.VALID), detail


def test_every_family_has_a_valid_trace_and_a_failing_twin() -> None:
    families: dict[tuple[str, str], set[bool]] = {}
    for mech, name, _, expected in CASES:
        families.setdefault((mech, name.split("_")[0]), set()).add(expected == set())
    assert all(kinds == {True, False} for kinds in families.values()), families
