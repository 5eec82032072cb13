"""Active Manager symmetry (issue 33, `model.am.symmetry`): which DAG members the explorer may rename, and a
check that the model's transitions commute with such a renaming (every choice point resolved every way)."""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from model.am.protocol import Layout, ModelSystem, RngEnv
from model.am.symmetry import interchangeable
from model.kernel.choice import ScriptedChooser
from tests.am.helpers import resolutions

pytestmark = pytest.mark.unit

MEMBERS = ["MBX1", "MBX2", "MBX3"]


def _setup(copies: dict[str, list[str]], **kw: Any) -> dict[str, Any]:
    return {"members": MEMBERS, "standalone": [], "copies": copies, "default_dial": "GoodAvailability", **kw}


def test_members_with_a_copy_of_every_database_are_one_group() -> None:
    assert interchangeable(_setup({"DB1": MEMBERS, "DB2": ["MBX3", "MBX1", "MBX2"]})) == [MEMBERS]


def test_members_told_apart_by_the_configuration_are_not_grouped() -> None:
    """The twin: a member without a copy the others hold, or with another dial, is in no group."""
    assert interchangeable(_setup({"DB1": MEMBERS, "DB2": ["MBX1", "MBX2"]})) == [["MBX1", "MBX2"]]
    assert interchangeable(_setup({"DB1": MEMBERS}, dials={"MBX2": "Lossless"})) == [["MBX1", "MBX3"]]
    assert interchangeable(_setup({"DB1": ["MBX1"], "DB2": ["MBX2"], "DB3": ["MBX3"]})) == []
    alone = {"members": ["MBX1"], "standalone": ["MBXS1", "MBXS2"], "copies": {"SDB1": ["MBXS1"], "SDB2": ["MBXS2"]}}
    assert interchangeable(alone) == []


SWAP = {"MBX1": "MBX2", "MBX2": "MBX1"}


def _renamed(value: Any, ordered: bool = False) -> Any:
    """Names swapped wherever they occur (also inside encoded values: "MBX1+MBX2", "MBX1:1:3"); a list of names
    is a set (sorted again after renaming) unless `ordered` (BCSS_START `order`)."""
    if isinstance(value, str):
        value = re.sub(r"MBX\d+", lambda m: SWAP.get(m.group(), m.group()), value)
        return "+".join(sorted(value.split("+")))
    if isinstance(value, (list, tuple)):
        items = [_renamed(v) for v in value]
        return items if ordered or not all(isinstance(v, str) for v in items) else sorted(items)
    if isinstance(value, dict):
        return {k: _renamed(v, k == "order") for k, v in value.items()}
    return value


def _canon(outs: list, rename: bool) -> str:
    """A step's events as a set, renamed (`rename`) or only normalised (renamed twice is the identity)."""
    rows = [[e, k, _renamed(a) if rename else _renamed(_renamed(a))] for e, k, a in outs]
    return json.dumps(sorted(rows, key=json.dumps), sort_keys=True)


def _system(members: tuple[str, ...]) -> ModelSystem:
    """Three members, DB1 on each in the members' order; the first member is the PAM (`am.pam-holder` at boot
    scripted to it), the first copy DB1's active."""
    pam = sorted(members).index(members[0])
    env = RngEnv(random.Random(1), mount_fail=0.3, choices=ScriptedChooser([pam]))
    s = ModelSystem(Layout("DAG1", members, (), {"DB1": members}), env)
    s.generate_logs("DB1", 30, dict(zip(members, (0, 25, 10), strict=True)))
    return s


@pytest.mark.parametrize("step", ["crash", "fail_database", "partition"])
def test_the_model_commutes_with_renaming_a_group(step: str) -> None:
    """Renaming MBX1 and MBX2 (a group: both hold DB1) in the state and the step gives the renamed successors,
    over every resolution of the choice points (PAM holder, ACLL, mounts)."""
    here, there = _system(("MBX1", "MBX2", "MBX3")), _system(("MBX2", "MBX1", "MBX3"))  # `there` is `here` renamed
    (pam,) = here.pams()
    acts = {
        "crash": (lambda s: s.crash(pam), lambda s: s.crash(SWAP.get(pam, pam))),
        "fail_database": (lambda s: s.fail_database("DB1"), lambda s: s.fail_database("DB1")),
        "partition": (lambda s: s.partition([["MBX1"]]), lambda s: s.partition([["MBX2"]])),
    }[step]
    mine = {_canon(outs, rename=True) for _, _, outs in resolutions(here, acts[0])}
    image = {_canon(outs, rename=False) for _, _, outs in resolutions(there, acts[1])}
    assert mine == image


def test_a_name_dependent_choice_breaks_the_commutation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin: with the PAM holder taken from the name-sorted quorum at a fixed index (choice points not
    explored), the successor of the renamed state is not the renamed successor (`interchangeable`'s caveat)."""
    monkeypatch.setitem(globals(), "SWAP", {"MBX1": "MBX3", "MBX3": "MBX1"})
    here, there = _system(("MBX1", "MBX2", "MBX3")), _system(("MBX3", "MBX2", "MBX1"))
    outs = []
    for s, down in ((here, "MBX1"), (there, "MBX3")):
        assert s.pams() == {down}
        s.env.choices = ScriptedChooser([0] * 8)  # always the first of the name-sorted options
        outs.append(s.crash(down))
    assert _canon(outs[0], rename=True) != _canon(outs[1], rename=False)
