"""Public folder symmetry (issue 33, `model.pf.symmetry`): the stores alike under the configuration, and why
no renaming of them is sound in the model as it stands (its name tie-breaks tell them apart)."""

from __future__ import annotations

import pytest

from model.kernel.sim import HOUR
from model.pf.sim import build_fixed
from model.pf.symmetry import configuration_classes, interchangeable

pytestmark = pytest.mark.unit

ONE_VERSION = [["A", "rg0", "2003"], ["B", "rg0", "2003"], ["C", "rg1", "2003"]]
LINKS = [("rg0", "rg1", 7)]


def test_stores_alike_under_the_configuration() -> None:
    assert configuration_classes({"stores": ONE_VERSION}) == [["A", "B"]]


def test_stores_told_apart_by_the_configuration_are_not_alike() -> None:
    """The twin: another version, another routing group or a preferred backfill server is in no class."""
    assert configuration_classes({"stores": [["A", "rg0", "2003"], ["B", "rg0", "5.5"], ["C", "rg1", "2000"]]}) == []
    assert configuration_classes({"stores": ONE_VERSION, "preferred": ["B"]}) == []


def _redirect(holders: tuple[str, str]) -> str:
    """Where C (no replica) sends a client for a folder created on holders[0] and replicated to holders[1]."""
    c = build_fixed(1, [tuple(s) for s in ONE_VERSION], LINKS)  # type: ignore[misc]
    fid = c.create_folder(holders[0], "Sales")
    c.add_replica(fid, holders[1], via=holders[0])
    c.advance(2 * HOUR)
    return c.client_access("C", fid)


def test_alike_stores_are_told_apart_by_name_so_none_is_interchangeable() -> None:
    """PF-026: C redirects to the first by name of its cheapest active replicas. Renaming A and B (alike) in the
    state does not rename the successor: with the folder made on B and copied to A, C still names A, where the
    renamed behaviour would name B. So `interchangeable` gives no group, even where `configuration_classes`
    does (a too-strong claim of symmetry would merge these two states)."""
    assert _redirect(("A", "B")) == "A"
    assert _redirect(("B", "A")) == "A"  # the image of the first run would say "B"
    assert configuration_classes({"stores": ONE_VERSION}) == [["A", "B"]]
    assert interchangeable({"stores": ONE_VERSION}) == []
