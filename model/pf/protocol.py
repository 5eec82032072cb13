"""The interface an implementation of public folder replication offers to the conformance tests.

`model.pf.sim.Cluster` implements it; an external implementation can implement the same methods and be
driven by the conformance suite's state machine, `conformance.harness.machine("pf", factory)` (driver:
`conformance/harness/pf.py`), which checks its trace with the monitor and its state for convergence
(PF-035); an implementation in another language speaks the stdio protocol of `conformance/PROTOCOL.md`
(`haconform conform pf --sut "COMMAND"`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from model.pf.cnset import CNSet
from traces.schema import Event


@runtime_checkable
class PublicFolderSystem(Protocol):
    """Stores of one top level hierarchy, their administration, their clients and the faults."""

    def create_folder(self, via: str, name: str, *, tree: str = "IPM", replicating: bool = True) -> str:
        """Create a folder on store `via`; returns its FID."""
        ...

    def modify_folder(self, via: str, fid: str, what: str = "description") -> bool:
        """A hierarchy modification made on store `via` (rename, permissions, description, ...)."""
        ...

    def post(self, store: str, fid: str, size_kb: int) -> bool:
        """A client posts an item to the store's replica; False if the store cannot take it."""
        ...

    def delete_folder(self, via: str, fid: str) -> bool:
        """Delete a folder on store `via` (a hierarchy change, PF-025; its replicas go with it); False if the
        store is down or does not know the folder. Deletes made in one instant are packed together, at most
        ReplicationDeletedFolderCountLimit per hierarchy message (PF-011)."""
        ...

    def add_replica(self, fid: str, server: str, via: str) -> bool: ...

    def remove_replica(self, fid: str, server: str, via: str) -> bool: ...

    def client_access(self, store: str, fid: str) -> str:
        """Where a client of `store` asking for the folder gets its content ('' if nowhere)."""
        ...

    def crash(self, store: str) -> None: ...

    def restart(self, store: str) -> None: ...

    def backup(self, store: str) -> str: ...

    def restore(self, store: str) -> bool: ...

    def set_loss(self, loss: float) -> None: ...

    def advance(self, ms: int) -> None:
        """Let model time pass."""
        ...

    def quiesce(self) -> int:
        """Stop all faults (the fairness assumption of PF-035); returns the time it did so."""
        ...

    def replicas(self, fid: str) -> dict[str, str]:
        """Store -> replica state (active, delete_pending, delete_now) of the stores holding the folder."""
        ...

    def cnset(self, store: str, fid: str) -> CNSet: ...

    @property
    def events(self) -> list[Event]: ...
