"""The replica lists one store derives from the hierarchy changes it holds (seed 001, "Hierarchy
Replication", "Adding a Replica", "Deleting a Replica"; PF-025, PF-I14): the one fold shared by the
generator (`node.Store`) and the monitor (`monitor.PfFold`, one per store).

Each change is folded in once (`decide.view_step`, in place); the state per folder is the latest replica
change per server (bounded by the servers, not by the history), so holding a change and reading a list
cost the same at any point of a run. `copy` is what a backup keeps (BF-023): a restore continues from it.
"""

from __future__ import annotations

from collections.abc import Iterable

from model.pf import decide as D
from model.pf.state import HIERARCHY, Change
from spec.catalogue import require

require("PF-025")


class HeldHierarchy:
    """Per target folder, the fold of the hierarchy changes about it that one store holds."""

    __slots__ = ("acc",)

    def __init__(self, acc: dict[str, D.ViewAcc] | None = None) -> None:
        self.acc: dict[str, D.ViewAcc] = {} if acc is None else acc

    def hold(self, changes: Iterable[Change]) -> list[str]:
        """Fold `changes` in; the folders (never 1-1 itself) whose changes they were, in name order."""
        acc = self.acc
        targets = set()
        for c in changes:
            t = c.target
            acc[t] = D.view_step(acc.get(t, {}), c)
            targets.add(t)
        targets.discard(HIERARCHY)
        return sorted(targets)

    def view(self, target: str) -> dict[str, str]:
        """The replica list of `target` (empty when no change about it is held, or it was deleted)."""
        return D.view_of(self.acc.get(target, {}))

    def targets(self) -> list[str]:
        return list(self.acc)

    def copy(self) -> HeldHierarchy:
        return HeldHierarchy({t: None if a is None else dict(a) for t, a in self.acc.items()})
