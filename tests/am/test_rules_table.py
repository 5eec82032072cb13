"""The rules table and the transition tables of the Active Manager model (seed 002; `model/am/rules.py`,
`model/am/step.py`): every parameter has a rule or a recorded reason, every transition outside a table
is named, and the generator keeps inside the tables."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from model.am import events as ev
from model.am import step
from model.am.rules import RULES
from model.am.state import CopyState, DbState, World, empty_world
from spec.catalogue import catalogue
from traces.verdict import Rule

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]


def test_rules_table_shape() -> None:
    cat = catalogue()
    for name, r in RULES.items():
        assert isinstance(r, Rule) and r.name == name and r.kind in ("always", "eventually", "sometimes")
        assert cat.has(r.requirement) and r.statement
        assert all(cat.has(p) and p.startswith("AM-P") for p in r.params)


def test_every_am_parameter_has_a_rule_or_a_reason() -> None:
    """Family 2: a parameter bounding observable behaviour is in some Rule.params, or listed with a reason."""
    doc = tomllib.loads((ROOT / "spec/observability/am.toml").read_text(encoding="utf-8"))
    exempt = {e["id"]: e["reason"] for e in doc.get("unobservable", [])}
    assert all(reason.strip() for reason in exempt.values())
    ruled = {p for r in RULES.values() for p in r.params}
    params = {rid for rid in catalogue().requirements if rid.startswith("AM-P")}
    assert params, "no AM parameters in the catalogue"
    assert params - ruled - set(exempt) == set()
    assert not (ruled & set(exempt)), "a parameter both ruled and exempt"


def _world(**db: object) -> World:
    d = DbState("DB1", "DAG1", {s: CopyState(s) for s in ("A", "B", "C")}, **db)  # type: ignore[arg-type]
    return World(
        "DAG1",
        ("A", "B", "C"),
        frozenset({"A", "B", "C"}),
        (frozenset({"A", "B", "C"}),),
        claims=frozenset({"C"}),
        dbs={"DB1": d},
    )


@pytest.mark.parametrize(
    "db,kind,server,allowed",
    [
        ({}, ev.MOUNT_START, "A", True),
        ({}, ev.MOUNTED, "A", False),  # mounted without a mount request
        ({}, ev.DISMOUNTED, "A", False),  # dismount of a copy that is not mounted
        ({}, ev.MOUNT_FAIL, "A", False),
        ({"mounting": "A"}, ev.MOUNTED, "A", True),
        ({"mounting": "A"}, ev.MOUNT_FAIL, "A", True),
        ({"mounting": "A"}, ev.MOUNT_START, "A", False),
        ({"on": frozenset({"A"}), "active": "A"}, ev.DISMOUNTED, "A", True),
        ({"on": frozenset({"A"}), "active": "A"}, ev.MOUNT_START, "A", False),
    ],
)
def test_mount_table(db: dict, kind: str, server: str, allowed: bool) -> None:
    assert (step.mount_fault(_world(**db).dbs["DB1"], kind, server) is None) is allowed


def test_pam_table() -> None:
    w = _world()
    assert step.pam_fault(w, ev.PAM_RELEASE, "C", "move") is None
    assert step.pam_fault(w, ev.PAM_RELEASE, "C", "lost_quorum") is not None  # C is in the quorum
    assert step.pam_fault(w, ev.PAM_RELEASE, "B", "move") is not None  # B is no PAM
    assert step.pam_fault(w, ev.PAM_ACQUIRE, "C", None) is not None  # already PAM
    assert step.pam_fault(w, ev.PAM_ACQUIRE, "B", None) is None  # single-pam is its own rule
    cut = World("DAG1", w.members, w.up, (frozenset({"A", "B"}), frozenset({"C"})), claims=w.claims, dbs=w.dbs)
    assert step.pam_fault(cut, ev.PAM_RELEASE, "C", "lost_quorum") is None


def test_status_table() -> None:
    w = _world(on=frozenset({"A"}), active="A")
    d = w.dbs["DB1"]
    d = DbState("DB1", "DAG1", {**d.copies, "A": CopyState("A", status="Mounted")}, active="A", on=d.on)
    assert step.status_fault(w, d, "A", "Mounted") is None
    assert step.status_fault(w, d, "B", "Mounted") is not None  # B is not mounted
    assert step.status_fault(w, d, "A", "Failed") is not None  # still mounted: dismount first
    assert step.status_fault(w, d, "A", "Healthy") is not None
    assert step.status_fault(w, d, "B", "Failed") is None
    assert step.status_fault(w, d, "B", "ServiceDown") is not None  # B's server runs
    down = World("DAG1", w.members, frozenset({"A", "C"}), w.groups, claims=w.claims, dbs=w.dbs)
    assert step.status_fault(down, d, "B", "ServiceDown") is None
    assert step.status_fault(down, d, "B", "Failed") is not None  # a down server reports nothing


def test_every_tracked_kind_has_one_transition() -> None:
    """The fold changes state only for the kinds of STEPS; every other kind leaves the world as it is."""
    w, before = _world(), _world()
    for kind in (
        "FAILURE",
        "FAILOVER_REQUEST",
        "SWITCHOVER",
        "BCSS_START",
        "ACLL_START",
        "ACLL_END",
        "LOCATION_QUERY",
        "MAINTENANCE",
    ):
        assert step.apply(w, "DB1", kind, {}) is w and w == before  # in place (issue 19), and unchanged
    view = {"members": ["A"], "up": ["A"], "groups": ["A"]}
    assert step.apply(empty_world(), "DAG1", ev.DAG_VIEW, view).dag == "DAG1"
