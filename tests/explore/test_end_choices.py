"""The fairness end's choices within a budget (issue 33; session 13, `conformance/explore/ends.py`).

- the end is judged under its first `end_choices` resolutions, in the odometer's lexicographic order, each its own
  run of the end (other events); twin: `end_choices = 1` judges the first only;
- a violation under any of them is the state's violation, carrying that resolution (`Found.end`), which the
  replay file records as `"end"` and `haconform replay` re-imposes: the replayed end is the explored one; twins:
  the same steps replayed without `"end"` give the seed's end (other events); a malformed `"end"` fails naming
  the field (a resolution is followed where it applies: a mutant's file replays on the model, whose end may make
  fewer choices).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import conformance.explore.ends as ends
from conformance.cli import main
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.explore.result import Found, Result
from conformance.explore.state import Node
from conformance.harness.choosing import construction_of
from conformance.harness.core import StepError, replay_steps

NAME = "sr-2s-1m-choices"


def _moments(events: list[Any]) -> list[tuple[Any, ...]]:
    """What an end did, independent of the numbering: each event's time, node, entity and kind."""
    return [(e.ts_ms, e.node, e.entity, e.kind) for e in events]


def _judged(ex: Explorer, node: Node, monkeypatch: pytest.MonkeyPatch) -> tuple[Found | None, list[Any]]:
    """`end_of(node)` and, per resolution judged, (the choice indices made, what the end did)."""
    seen: list[Any] = []
    real = ends.scripted

    @contextmanager
    def noting(system: Any, script: Any, ranges: str = "ends", extend: bool = False) -> Iterator[Any]:
        before = len(system.sim.events)
        with real(system, script, ranges, extend) as chooser:
            yield chooser
        seen.append(([k for _, k, _ in chooser.made], _moments(system.sim.events[before:])))

    monkeypatch.setattr(ends, "scripted", noting)
    return ex.end_of(node), seen


def _choosing_state(ex: Explorer, monkeypatch: pytest.MonkeyPatch) -> Node:
    """A depth-1 state of the bound whose fairness end makes at least two choices."""
    for _, _, child, _ in ex.successors(ex.root()):
        if child is not None:
            child.live = None
            _, seen = _judged(ex, child, monkeypatch)
            if len(seen[0][0]) >= 2:
                return child
    raise AssertionError(f"{NAME}: no depth-1 state whose end makes two choices")


@pytest.mark.model
def test_the_first_resolutions_are_judged_in_odometer_order(monkeypatch: pytest.MonkeyPatch) -> None:
    bound = find(NAME).bound
    assert bound.end_choices == 2  # the default
    ex = Explorer(bound.with_(end_choices=4))
    node = _choosing_state(ex, monkeypatch)
    found, seen = _judged(ex, node, monkeypatch)
    assert found is None and len(seen) == 4
    made = [m for m, _ in seen]
    assert made == sorted(made) and len({tuple(m) for m in made}) == 4
    assert all(k == 0 for k in made[0])  # the first resolution: every choice at its first outcome
    assert made[1][:-1] == made[0][:-1] and made[1][-1] == 1  # then the last choice moves on
    assert len({tuple(d) for _, d in seen}) > 1  # the resolutions are different ends
    _, once = _judged(Explorer(bound.with_(end_choices=1)), node, monkeypatch)
    assert [m for m, _ in once] == [made[0]]  # twin: a budget of one judges the first only


@pytest.mark.model
def test_a_violation_under_a_later_resolution_replays(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A judge that flags the second resolution's end (a stand-in for a rule only that end breaks): the state's
    end is a violation carrying that resolution, and its replay file reproduces that end, not the seed's."""
    ex = Explorer(find(NAME).bound)
    node = _choosing_state(ex, monkeypatch)
    _, seen = _judged(ex, node, monkeypatch)
    second = seen[1]
    real_judge = Explorer.judge
    calls = {"n": 0}

    def flag_second(self: Explorer, s: Any, steps: Any, end: bool, consume: bool = False) -> Found | None:
        got = real_judge(self, s, steps, end, consume)
        if end:
            calls["n"] += 1
            if calls["n"] == 2:
                return Found("end", "test-rule", "SR-000", "the second end", list(steps), s.start, self.ranges)
        return got

    monkeypatch.setattr(Explorer, "judge", flag_second)
    found = ex.end_of(node)
    assert found is not None and found.end == tuple(second[0])
    res = Result("sr", NAME, ex.setup, found=found)
    data = res.replay_file()
    assert data["end"] == {"choices": second[0], "ranges": "ends"}
    monkeypatch.undo()

    def end_events(end: Any) -> list[Any]:
        system = construction_of(
            partial(ex.factory, dict(ex.setup)), data.get("construction"), ex.setup.get("branching")
        )
        _, per_step = replay_steps(ex.driver, system, ex.setup, data["steps"], end=end)
        return _moments(per_step[-1][1])

    assert end_events(data["end"]) == second[1]
    assert end_events(None) != second[1]  # twin: the seed's end is another
    with pytest.raises(StepError, match=r"end\.choices"):
        end_events({"choices": [-1]})
    f = tmp_path / "r.json"
    f.write_text(json.dumps({**data, "end": {"choices": "x"}}))
    assert main(["replay", str(f)]) == 2
