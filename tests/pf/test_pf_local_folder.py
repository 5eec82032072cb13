"""Clients of a local (non-replicating) folder (PF-004, BF-028, interpretation PF-I16): the store holding the one
copy of a Restrictions or Views folder may serve its clients from it; the twins, which `served-by-active-replica`
must still flag: a local folder served by another store or from elsewhere, a folder the hierarchy names served
without a replica, a replicating folder served from an absent replica."""

from __future__ import annotations

import pytest

from conformance.check import verdict
from tests.handbuilt.pf.builder import Step, build, change, mount

L = "L-A-2A41"  # a local folder created on A
F = "1-2A42"  # a replicated folder created on A


def _local(*after: Step, name: str = "local") -> list:
    steps: list[Step] = [
        *mount(0, "A", "B", "C"),
        (1, "A", L, "FOLDER_CREATE", {"name": "Views", "tree": "NON_IPM", "replicating": False}),
        change(2, "A", L, "A#0:1", "post"),
        *after,
    ]
    return build(name, steps)


def _rules(events: list) -> set[str]:
    return {v.rule for v in verdict(events).violations}


@pytest.mark.unit
def test_the_store_holding_a_local_folder_serves_its_clients() -> None:
    for target in ("A", ""):
        result = verdict(_local((3, "A", L, "CLIENT_ACCESS", {"outcome": "served", "target": target})))
        assert result.verdict == "valid", ([str(v) for v in result.violations], result.notes)
    # the model's answer (nowhere: the folder has no replica list) is as conformant
    assert verdict(_local((3, "B", L, "CLIENT_ACCESS", {"outcome": "unavailable", "target": ""}))).verdict == "valid"


@pytest.mark.unit
def test_a_local_folder_served_by_another_store_is_a_violation() -> None:
    events = _local((3, "B", L, "CLIENT_ACCESS", {"outcome": "served", "target": "B"}))
    violations = verdict(events).violations
    assert {v.rule for v in violations} == {"served-by-active-replica"}
    assert "one copy is on A" in str(violations[0])


@pytest.mark.unit
def test_a_local_folder_served_from_elsewhere_is_a_violation() -> None:
    assert _rules(_local((3, "A", L, "CLIENT_ACCESS", {"outcome": "served", "target": "C"}))) == {
        "served-by-active-replica"
    }


@pytest.mark.unit
def test_a_folder_the_hierarchy_names_is_not_local_whatever_its_creation_said() -> None:
    """A FOLDER_CREATE saying replicating=false does not make a folder local once a hierarchy change names it:
    it is then judged by its replicas (and A has none)."""
    events = _local(
        change(3, "A", "1-1", "A#0:2", "modify", L, "description"),
        (4, "A", L, "CLIENT_ACCESS", {"outcome": "served", "target": "A"}),
    )
    assert "served-by-active-replica" in _rules(events)


@pytest.mark.unit
def test_a_replicating_folder_served_from_an_absent_replica_is_a_violation() -> None:
    steps: list[Step] = [
        *mount(0, "A", "B", "C"),
        (1, "A", F, "FOLDER_CREATE", {"name": "Sales", "tree": "IPM", "replicating": True}),
        change(1, "A", "1-1", "A#0:1", "create", F, "Sales"),
        change(1, "A", "1-1", "A#0:2", "replica", F, "A:active"),
        (1, "A", F, "REPLICA_CREATE", {"origin": "A#0", "new": True}),
        (1, "A", F, "REPLICA_VIEW", {"replicas": ["A=active"]}),
    ]
    served_on_a = build("ok", [*steps, (2, "A", F, "CLIENT_ACCESS", {"outcome": "served", "target": "A"})])
    assert verdict(served_on_a).verdict == "valid"
    served_on_b = build("absent", [*steps, (2, "B", F, "CLIENT_ACCESS", {"outcome": "served", "target": "B"})])
    violations = verdict(served_on_b).violations
    assert {v.rule for v in violations} == {"served-by-active-replica"}
    assert "state absent" in str(violations[0])
