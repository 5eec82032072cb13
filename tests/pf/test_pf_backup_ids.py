"""A store backed up several times: every backup has its own ID (BF-023, BF-024; found by issue 34's generator).

The model numbered backups by the stores that had one, so a store's third backup reused its second's ID, and the
monitor, which keys a backup by store and ID, restored the older snapshot's hierarchy: replica-list-derived
failed the model (`tests/pf/test_pf_stateful.py`, seed 2628). The minimal sequence: three backups and restores of
C with a filed backfill entry (`restore_with_entries`), two replicas removed at once between them.
"""

from __future__ import annotations

from typing import Any

import pytest

from conformance.check import verdict
from conformance.harness.core import replay_steps
from conformance.harness.pf import DRIVER, LINKS
from conformance.harness.pf_scenarios import LAYOUTS, call, remove_two_at_once, restore_with_entries
from model.pf.sim import Cluster

pytestmark = pytest.mark.model

SETUP = {
    "seed": 2628,
    "faults": True,
    "layout": "cost-vs-version",
    "stores": [list(s) for s in LAYOUTS["cost-vs-version"]],
    "links": [list(link) for link in LINKS],
    "latency_max_ms": 120_000,
    "deleted_folder_limit": 500,
}
F0, F1 = {"$folder": 0}, {"$folder": 1}
CALLS = [
    call("create_folder", via="A", name="f0"),
    call("create_folder", via="B", name="f1"),
    *restore_with_entries(F1, "B", "C", 0.0),
    *restore_with_entries(F1, "A", "C", 0.0),
    *remove_two_at_once(F0, "A", "C"),
    *restore_with_entries(F1, "A", "C", 0.0),
]


def _rules() -> tuple[set[str], list[Any]]:
    system = DRIVER.model_factory()(SETUP)
    session, _ = replay_steps(DRIVER, system, SETUP, [{"op": "scenario", "calls": CALLS}])
    events = session.events()
    return {v.rule for v in verdict(events, [DRIVER.monitor()]).violations}, events


def test_each_backup_of_a_store_has_its_own_id_and_the_model_passes() -> None:
    rules, events = _rules()
    assert rules == set()
    ids = [e.attrs["backup"] for e in events if e.kind == "BACKUP" and e.node == "C"]
    assert len(set(ids)) == 3, ids


def test_twin_a_reused_backup_id_fails_replica_list_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    def old_backup(self: Cluster, store: str) -> str:  # the numbering before the fix: stores with a backup
        s = self.stores[store]
        if not self.sim.is_up(store):
            return ""
        backup_id = f"{store}-b{len(self.backups) + 1}"
        self.backups[store] = (backup_id, s.snapshot())
        for fid in sorted(s.replicas):
            s.emit(fid, "BACKUP", backup=backup_id)
        return backup_id

    monkeypatch.setattr(Cluster, "backup", old_backup)
    rules, _ = _rules()
    assert "replica-list-derived" in rules
