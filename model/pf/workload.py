"""The seeded activity of a public folder simulation (`model.pf.sim.simulate`): folders created, posts, edits,
replica adds and removals, store outages, restores from backup and batches of folder deletes, one every few minutes
of model time, each drawn from the simulator's one generator (`Cluster.sim.rng`); and the opening of a run whose
folder loses its two replicas at once (BF-I14).
Seeds: 001 "Replication Overview", "Hierarchy Replication", "Content Replication" (PF-005, PF-011, PF-025);
003 "Example Replication Cycles".
"""

from __future__ import annotations

import random
from typing import Protocol

from model.kernel.sim import HOUR, MINUTE, Simulator
from model.pf.protocol import PublicFolderSystem


class Cluster(PublicFolderSystem, Protocol):
    """What the activity drives: the protocol's operations on `model.pf.sim.Cluster`, its simulator (time and
    the one generator), its stores, its replicating folders and the scratch folders awaiting their delete."""

    sim: Simulator
    stores: dict
    folders: list[str]
    scratch: list[str]

    def delete_folders(self, via: str, fids: list[str]) -> int: ...


def workload(c: Cluster, duration_ms: int) -> None:
    """Random operations and faults, one every few minutes of model time, for `duration_ms`."""
    rng, names, end = c.sim.rng, sorted(c.stores), c.sim.now_ms + duration_ms
    for i in range(rng.randint(2, 4)):
        c.create_folder(rng.choice(names), f"folder{i}")
    local_store = rng.choice(names)
    local = c.create_folder(local_store, "Restrictions", tree="NON_IPM", replicating=False)
    while c.sim.now_ms < end:
        c.advance(rng.randint(1, 40) * MINUTE)
        roll, store, fid = rng.random(), rng.choice(names), rng.choice(c.folders)
        if roll < 0.04:
            c.post(local_store, local, 1)
        elif roll < 0.45:
            for _ in range(rng.randint(1, 12)):
                c.post(store, fid, rng.choice((1, 4, 16, 64, 400)))
        elif roll < 0.55:
            c.add_replica(fid, store, rng.choice((store, rng.choice(names))))
        elif roll < 0.62:
            c.remove_replica(fid, store, rng.choice((store, rng.choice(names))))
        elif roll < 0.68:
            c.crash(store)
        elif roll < 0.76:
            c.restart(store)
        elif roll < 0.8:
            c.backup(store)
        elif roll < 0.82:
            c.restore(store)
        elif roll < 0.9:
            c.client_access(store, fid)
        elif roll < 0.92:
            c.modify_folder(store, fid, rng.choice(("rename", "permissions", "description", "schedule")))
        elif roll < 0.95:
            scratch(c, store, rng)
        elif len(c.folders) < 6:
            tree = rng.choice(("IPM", "NON_IPM"))  # site folders replicate like ordinary ones (PF-005)
            c.create_folder(store, f"f{c.sim.now_ms % 997}", tree=tree)
        else:
            c.client_access(store, fid)


def scratch(c: Cluster, store: str, rng: random.Random) -> None:
    """Folder deletes (PF-011's deleted-folder limit, PF-025): a batch of scratch folders is created, and
    at a later step all of them are deleted in one go (one hierarchy broadcast packs the deletes)."""
    if c.scratch:
        c.delete_folders(store, c.scratch)
        c.scratch = []
        return
    for i in range(rng.randint(2, 8)):
        fid = c.create_folder(store, f"scratch{c.sim.now_ms % 9973}-{i}")
        if fid:
            c.folders.remove(fid)
            c.scratch.append(fid)


def remove_two_at_once(c: Cluster) -> str:
    """A folder on two stores, each removed on its own store before the other hears of it (BF-I14)."""
    a, b = sorted(c.stores)[:2]
    fid = c.create_folder(a, "pair")
    c.add_replica(fid, b, via=a)
    c.advance(HOUR)
    for _ in range(3):
        c.post(a, fid, 5)
    c.advance(HOUR)
    c.remove_replica(fid, a, via=a)
    c.remove_replica(fid, b, via=b)
    return fid
