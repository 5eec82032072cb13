"""The fixed table (issue 33, session 14, `conformance.explore.fixed`): what every state of an exploration shares
(configurations, the topology, the trace's first events) is pickled as a reference, not copied, and its values'
fingerprint tokens are remembered. The same states, edges, verdicts and fingerprints as without it; smaller blobs.
Twins: a class wrongly declared fixed (a step changes it) is caught, a frozen value's inner dict changed by a step
is caught, and a blob thawed in a process without its table fails naming it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from conformance.explore import fixed
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.explore.state import thaw
from model.kernel.topology import Topology

AM = "am-3s-1db-crash-partition"
SR = "sr-2s-1m-crash"
PF = "pf-2s-1f-replicas"


def _figures(ex: Explorer) -> tuple[Any, ...]:
    r = ex.run()
    return r.states, r.transitions, r.depth, r.per_level, r.result, r.found


def _edges(ex: Explorer, levels: int) -> list[tuple[str, str, bool]]:
    """Every edge (fingerprint, step, new) of the first `levels` levels, expanded in BFS order."""
    out, frontier = [], [ex.root()]
    for _ in range(levels):
        nxt = []
        for node in frontier:
            for fp, step, child, _ in ex.successors(node):
                out.append((fp, repr(step), child is not None))
                if child is not None:
                    child.live = None
                    nxt.append(child)
        frontier = nxt
    return out


@pytest.mark.model
@pytest.mark.parametrize(("name", "depth"), [(SR, 3), (AM, 3), (PF, 2)])
def test_sharing_the_fixed_table_explores_alike(name: str, depth: int) -> None:
    """With and without the table: the same figures, and every edge the same fingerprint (the tokens remembered
    are the walk's own), with smaller blobs."""
    bound = find(name).bound.with_(depth=depth)
    shared, copied = Explorer(bound), Explorer(bound)
    copied.share_fixed = False
    assert _edges(shared, 2) == _edges(copied, 2)
    assert shared.fixed is not None and copied.fixed is None
    shared, copied = Explorer(bound), Explorer(bound)
    copied.share_fixed = False
    mine, theirs = shared.root().blob, copied.root().blob  # the first root: its objects are the table's
    assert mine is not None and theirs is not None and len(mine) < len(theirs)
    assert _figures(shared) == _figures(copied)


@pytest.mark.model
def test_the_table_holds_the_configuration_and_the_first_events() -> None:
    ex = Explorer(find(SR).bound)
    ex.root()
    assert ex.fixed is not None
    kinds = {type(o).__name__ for o in ex.fixed.objects}
    assert {"SrConfig", "Timing", "NetConfig", "Topology", "Event"} <= kinds
    s = ex.fresh()  # a fresh root holds its own, equal objects: pickled by value, thawed alike
    blob = ex.freeze(s)
    assert blob is not None
    again = thaw(blob, ex.driver, ex.setup)
    assert ex.fingerprint(again, ex.root().book) == ex.fingerprint(s, ex.root().book)


def _root_after_its_edges(ex: Explorer) -> tuple[str, str]:
    """The root's fingerprint thawed from its blob after its successors were expanded, and replayed."""
    node = ex.root()
    ex.successors(node)
    return ex.fingerprint(ex.restore(node), node.book), ex.fingerprint(ex.replay(()), node.book)


@pytest.mark.model
def test_twin_a_class_wrongly_declared_fixed_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """sr's `World` (which every step changes) declared fixed: every copy shares the first root's world, so the
    steps of the root's successors change the root itself (its copy is no longer the replayed root), and the
    table's check names it. The control: the same without the declaration."""
    from model.sr.world import World

    ex = Explorer(find(SR).bound.with_(depth=2))
    copied, replayed = _root_after_its_edges(ex)
    assert copied == replayed
    assert ex.fixed is not None
    ex.fixed.verify("control")
    monkeypatch.setattr(World, "__fixed__", True, raising=False)
    ex = Explorer(find(SR).bound.with_(depth=2))
    copied, replayed = _root_after_its_edges(ex)
    assert copied != replayed
    assert ex.fixed is not None
    with pytest.raises(RuntimeError, match=r"fixed table's object \d+ \(a model\.sr\.world\.World\) was changed"):
        ex.fixed.verify(SR)


@pytest.mark.model
def test_twin_a_frozen_value_changed_inside_is_caught() -> None:
    """A frozen dataclass is trusted not to have what it holds changed (sr's `SrConfig` holds a dict): a step that
    changes it is caught."""
    ex = Explorer(find(SR).bound.with_(depth=1))
    s = ex.fresh()
    ex.judge(s, (), False)
    ex.freeze(s)
    assert ex.fixed is not None
    cfg = next(o for o in ex.fixed.objects if type(o).__name__ == "SrConfig")
    holder = next(v for f in dataclasses.fields(cfg) if isinstance(v := getattr(cfg, f.name), dict))
    ex.fixed.verify("unchanged")
    holder["changed by a step"] = 1
    try:
        with pytest.raises(RuntimeError, match=r"unchanged: the fixed table's object \d+ \(a model\.sr\.state\.SrCo"):
            ex.fixed.verify("unchanged")
    finally:
        del holder["changed by a step"]


@pytest.mark.unit
def test_the_kernel_topology_is_declared_fixed() -> None:
    assert Topology.__fixed__ is True


@pytest.mark.model
def test_twin_a_blob_thawed_without_its_table_fails_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process (a Spark task) holds no table until it builds one from the same first root (`prime`): a blob
    thawed before fails naming the table; the primed explorer's table has the same tag, and the thawed state the
    same fingerprint. An explorer whose table was dropped registers it again."""
    ex = Explorer(find(PF).bound)
    node = ex.root()
    assert ex.fixed is not None and node.blob is not None
    tag = ex.fixed.tag
    monkeypatch.setattr(fixed, "_TABLES", {})
    with pytest.raises(RuntimeError, match=f"fixed table {tag}, which this process has not built"):
        thaw(node.blob, ex.driver, ex.setup)
    ex.restore(node)  # the explorer registers its table again (dropped: more than `_KEEP` tables met since)
    monkeypatch.setattr(fixed, "_TABLES", {})
    other = Explorer(find(PF).bound)
    other.prime()
    assert other.fixed is not None and other.fixed.tag == tag
    s = other.restore(node)
    assert other.fingerprint(s, node.book) == ex.fingerprint(ex.restore(node), node.book)


@pytest.mark.model
def test_a_mutant_s_table_is_its_own() -> None:
    """pf's mutants differ from the model by a lambda in the frozen `Decisions` (two lambdas of one module may
    encode alike): a mutant's table has its own tag, so its blobs thaw with its own decisions in a process that
    explored the model as well. Its states are copied, not replayed: the lambda is shared by reference."""
    model, mutant = Explorer(find(PF).bound), Explorer(find(PF).bound, "delete-without-status")
    node = mutant.root()
    model.root()
    assert model.fixed is not None and mutant.fixed is not None and model.fixed.tag != mutant.fixed.tag
    s = mutant.restore(node)
    assert mutant.result.restore == "copy"
    assert any(o is s.system.rules for o in mutant.fixed.objects)


@pytest.mark.model
def test_twin_the_level_plan_checks_the_fixed_table_after_each_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The level plan (Spark's, here in one process) runs the end-of-search check after each task's expansion, as
    `Explorer.run` does at its end (session 15): a step that changes a table object (planted: the first expansion
    adds a key to sr's shared `SrConfig`'s dict) is named. Controls: the plan unplanted gives the single process's
    count, and the planted plan with the check switched off completes (the check is what catches it)."""
    from conformance.explore import levels

    bound = find(SR).bound.with_(depth=2)
    monkeypatch.setattr(levels, "_EXPANDERS", {})
    assert levels.run_levels(levels.Job(bound), partitions=2).states == Explorer(bound).run().states
    real = levels.Expanding.successors

    def changing(self: levels.Expanding, *args: object, **kw: object) -> object:
        assert self.ex.fixed is not None
        cfg = next(o for o in self.ex.fixed.objects if type(o).__name__ == "SrConfig")
        holder = next(v for f in dataclasses.fields(cfg) if isinstance(v := getattr(cfg, f.name), dict))
        holder.setdefault("changed by a step", cfg.preference)
        planted.append(holder)
        return real(self, *args, **kw)

    planted: list[dict] = []
    monkeypatch.setattr(levels.Expanding, "successors", changing)
    try:
        monkeypatch.setattr(levels, "_EXPANDERS", {})
        with pytest.raises(RuntimeError, match=r"fixed table's object \d+ \(a model\.sr\.state\.SrConfig\)"):
            levels.run_levels(levels.Job(bound), partitions=2)
        monkeypatch.setattr(levels, "_EXPANDERS", {})
        monkeypatch.setattr(levels.Expanding, "check_fixed", lambda self: None)
        levels.run_levels(levels.Job(bound), partitions=2)
    finally:
        for holder in planted:
            holder.pop("changed by a step", None)
