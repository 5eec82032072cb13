"""Several roots (issue 33, "every allowed choice explored"; session 13): the construction's choices branched on.

`conformance.explore.roots`: with choice points on, a bound's system is built once per resolution of the choices its
construction makes, and every distinct state so built is a root (level 0). Checked here:

- a root choice point yields every allowed outcome: the outcomes the model is offered at construction (recorded
  through a chooser that notes each call) are each taken by some root, and the roots are every combination of
  them (am: each member holds the first PAM in one root; sr: each server's first heartbeat at each end of its
  range). Twin: an enumeration that drops each choice's last outcome leaves an outcome uncovered, and is caught;
- a violation's replay file records its root's choices (`construction`), which `haconform replay` re-imposes;
  a file with one construction choice too few or too many fails naming the field;
- `choices = false` and `construction = false` keep the seeded construction: one root.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

import conformance.explore.roots as roots
from conformance.cli import main
from conformance.explore.bfs import Explorer, explore
from conformance.explore.manifest import find
from conformance.harness.choosing import construction_of
from conformance.harness.core import StepError
from model.kernel.choice import ScriptedChooser, constructing, next_resolution, range_outcomes


class _Noting(ScriptedChooser):
    """A construction chooser that notes the outcomes each choice offers (the seeds allow), taking the first."""

    offered: list[tuple[str, list[Any]]]

    def _take(self, label: str, outcomes: Sequence[Any]) -> Any:
        self.offered.append((label, list(outcomes)))
        return outcomes[0]


def offered(ex: Explorer) -> list[tuple[str, list[Any]]]:
    """The choices the bound's construction makes and the outcomes each allows (ranges at the bound's points)."""
    chooser = _Noting([], ex.ranges)
    chooser.offered = []
    only = ex.bound.choices if isinstance(ex.bound.choices, tuple) else None
    if only is not None:
        chooser.only = frozenset(only)
    with constructing(chooser):
        ex.factory(dict(ex.setup))
    return chooser.offered


def uncovered(ex: Explorer) -> list[str]:
    """What the roots miss: per construction choice, each allowed outcome index not taken by any root, and the
    combinations of outcomes (the choices here are independent of each other) that no root was built under."""
    counts = [len(outs) for _, outs in offered(ex)]
    starts = set()
    script: list[int] | None = []
    while script is not None:
        s, made = roots.construct(ex, script)
        starts.add(s.start)
        script = roots.next_resolution(made)
    missing = [
        f"choice {k}: outcome {i}"
        for k, n in enumerate(counts)
        for i in range(n)
        if not any(len(st) > k and st[k] == i for st in starts)
    ]
    every = set(itertools.product(*map(range, counts)))
    return missing + [f"combination {c}" for c in sorted(every - starts)]


def _dropping_last(made: Sequence[tuple[str, int, int]]) -> list[int] | None:
    """The twin: an odometer that never takes a choice's last outcome."""
    for k in range(len(made) - 1, -1, -1):
        if made[k][1] + 2 < made[k][2]:
            return [i for _, i, _ in made[:k]] + [made[k][1] + 1]
    return None


@pytest.mark.model
def test_am_roots_each_member_holds_the_first_pam() -> None:
    ex = Explorer(find("am-3s-1db-crash-partition").bound)
    assert [label for label, _ in offered(ex)] == ["am.pam-holder"]
    assert uncovered(ex) == []
    level, found = roots.level_zero(ex, ends=True)
    assert found is None
    holders = {h for _, node in level for h in ex.restore(node).system.world.claims}
    assert holders == set(ex.setup["members"]), holders
    assert sorted(node.start for _, node in level) == [(0,), (1,), (2,)]


@pytest.mark.model
def test_sr_roots_take_each_end_of_each_first_heartbeat() -> None:
    ex = Explorer(find("sr-2s-1m-choices").bound)
    got = offered(ex)
    assert [label for label, _ in got] == ["sr.heartbeat-phase"] * 2
    assert all(outs == range_outcomes(outs[0], outs[-1]) and len(outs) == 2 for _, outs in got)
    assert uncovered(ex) == []
    level, _ = roots.level_zero(ex, ends=False)
    assert len(level) == 4 and len({fp for fp, _ in level}) == 4


@pytest.mark.model
def test_pf_roots_are_every_timer_phase_and_start_latency() -> None:
    ex = Explorer(find("pf-2s-1f-roots").bound)
    assert {label for label, _ in offered(ex)} == {
        "pf.phase.hierarchy",
        "pf.phase.content",
        "pf.phase.backfill",
        "net.latency",
    }
    assert uncovered(ex) == []


@pytest.mark.model
@pytest.mark.parametrize("name", ["am-3s-1db-crash-partition", "sr-2s-1m-choices"])
def test_twin_an_enumeration_that_drops_an_outcome_is_caught(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ex = Explorer(find(name).bound)
    monkeypatch.setattr(roots, "next_resolution", _dropping_last)
    missing = uncovered(ex)
    assert missing and any("outcome" in m for m in missing), missing


@pytest.mark.model
def test_seeded_construction_is_one_root() -> None:
    bound = find("am-3s-1db-crash-partition").bound
    for b in (bound.with_(choices=False), bound.with_(construction=False)):
        level, _ = roots.level_zero(Explorer(b), ends=False)
        assert [node.start for _, node in level] == [()]
    assert next_resolution([]) is None


@pytest.mark.model
def test_a_violation_replays_under_its_roots_choices(tmp_path: Path) -> None:
    """am's `second-pam-after-partition` is found from the first root; its file names the root's choices, and
    replays against the mutant (1) and the model (0). Twins: one construction choice too few or too many."""
    res = explore(find("am-3s-1db-crash-partition").bound, "second-pam-after-partition")
    assert res.found is not None and res.found.start == (0,)
    data = res.replay_file("second-pam-after-partition")
    assert data["construction"] == {"choices": [0], "ranges": "ends"}
    f = tmp_path / "r.json"
    f.write_text(json.dumps(data))
    assert main(["replay", str(f), "--mutant", "second-pam-after-partition"]) == 1
    assert main(["replay", str(f)]) == 0
    for bad in ([], [0, 1]):
        f.write_text(json.dumps({**data, "construction": {"choices": bad}}))
        assert main(["replay", str(f)]) == 2


@pytest.mark.model
def test_construction_of_names_the_field() -> None:
    ex = Explorer(find("am-3s-1db-crash-partition").bound)

    def build() -> Any:
        return ex.factory(dict(ex.setup))

    assert construction_of(build, {"choices": [2]}).world.claims == {sorted(ex.setup["members"])[2]}
    for bad, why in (([], "more choices"), ([1, 0], "2 recorded, the model made 1"), ("x", "must be")):
        with pytest.raises(StepError, match=r"construction") as err:
            construction_of(build, {"choices": bad})
        assert why in str(err.value)
    assert len(construction_of(build, None).world.claims) == 1
