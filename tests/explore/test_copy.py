"""The explorer expands by copying (issue 33): a copied state is the replayed state (same fingerprint, same
successors), the copy shares nothing with its source (twins: a shallow copy, a closure timer), each edge is
judged from the source's saved fold, and a choice point yields every allowed outcome as its own successor."""

from __future__ import annotations

import copy
import itertools
import json
import pickle
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.explore.bfs import Explorer, explore
from conformance.explore.manifest import find
from conformance.explore.state import Node, NotCopyable, freeze, thaw
from conformance.harness.core import Session, StepError, replay_steps
from model.sr.protocol import ModelSystem as SrSystem

AM = "am-3s-1db-crash-partition"
SR = "sr-2s-1m-crash"
PF = "pf-2s-1f-replicas"


def _path(ex: Explorer, depth: int) -> Node:
    """The explored node reached by always taking the middle one of the new successors."""
    node = ex.root()
    for _ in range(depth):
        new = [e[2] for e in ex.successors(node) if e[2] is not None]
        node = new[len(new) // 2]
    node.live = None
    return node


def _view(ex: Explorer, s: Session, at: Node) -> tuple[str, list[tuple[str, str]]]:
    """The state's fingerprint and its successors (fingerprint, step), expanded from a node holding `s`."""
    fp = ex.fingerprint(s, at.book)
    node = Node(at.key, at.steps, at.book, ex.freeze(s), s)
    return fp, [(e[0], json.dumps(e[1], sort_keys=True)) for e in ex.successors(node)]


def _copy_then_move_source(ex: Explorer, at: Node, copier: Callable[[Session], Session]) -> Session:
    """A copy of the state at `at`, taken before its source goes on (a fault and the fairness end)."""
    source = ex.replay(at.steps)
    source.judge(final=True)
    clone = copier(source)
    for call in [{"call": "crash", "args": {"server": ex.setup["members"][0]}}, *ex.driver.finish(source)]:
        source.apply(call)
    source.judge(final=True)
    return clone


def _pickled(ex: Explorer) -> Callable[[Session], Session]:
    return lambda s: thaw(freeze(s), ex.driver, ex.setup)


def _shallow(s: Session) -> Session:
    """The twin: a copy that shares the model's world (its objects) with the source."""
    c = copy.copy(s)
    c.system = copy.copy(s.system)
    c.state = dict(s.state)
    return c


@pytest.mark.model
@pytest.mark.parametrize("depth", [1, 2, 3])
def test_a_copied_state_is_the_replayed_state(depth: int) -> None:
    ex = Explorer(find(AM).bound)
    at = _path(ex, depth)
    copied = _copy_then_move_source(ex, at, _pickled(ex))
    assert _view(ex, copied, at) == _view(ex, ex.replay(at.steps), at)


@pytest.mark.model
def test_twin_a_shallow_copy_shares_the_state_with_its_source() -> None:
    """A shallow copy shares the model's world and the monitor's fold with its source: its state differs from the
    replayed one, and (states keeping the fold, not the events fed to it) the fold it shares was fed the source's
    later events, so judging its own refuses it rather than judge a trace without its prefix."""
    ex = Explorer(find(AM).bound)
    ex.trim = False
    at = _path(ex, 2)
    shared = _copy_then_move_source(ex, at, _shallow)
    assert _view(ex, shared, at) != _view(ex, ex.replay(at.steps), at)
    trimming = Explorer(find(AM).bound)
    shared = _copy_then_move_source(trimming, at, _shallow)
    with pytest.raises(RuntimeError, match="out of seq order"):
        _view(trimming, shared, at)


@pytest.mark.unit
def test_a_closure_timer_is_refused_not_copied() -> None:
    """The twin of a timer record: a closure smuggled into the kernel's queue (strict timers off) is shared by
    `deepcopy` (the copy's timer runs on the original), and `freeze` refuses the state, naming the timer."""
    ex = Explorer(find(SR).bound)
    s = ex.fresh()
    sim = s.system.sim
    sim.strict_timers = False  # the kernel refuses closures by default: this twin smuggles one in
    fired: list[int] = []
    sim.after(5, lambda: fired.append(sim.now_ms))
    clone = copy.deepcopy(s.system)
    clone.advance(10)
    assert len(fired) == 1  # the clone's timer appended to the original's list
    with pytest.raises(NotCopyable, match=r"kernel queue holds a closure \(timer due at .*test_copy"):
        freeze(s)


@pytest.mark.unit
def test_the_fingerprint_sees_shared_mutable_objects_not_shared_values() -> None:
    """A value (tuple, frozen dataclass) shared or copied is one state (a pickled copy shares differently from a
    replay); the twin: two lists that are one object are not two equal lists (a change to one shows in both)."""
    from conformance.explore.fingerprint import fingerprint
    from model.pf.cnset import CNSet

    one = CNSet((("a", ((1, 2),)),))
    assert fingerprint([[one, one]]) == fingerprint([[one, CNSet((("a", ((1, 2),)),))]])
    assert fingerprint([[(1, 2), (1, 2)]]) == fingerprint([[tuple([1, 2]), tuple([1, 2])]])
    shared: list[int] = []
    assert fingerprint([[shared, shared]]) != fingerprint([[[], []]])


@pytest.mark.model
def test_each_edge_is_judged_from_the_source_fold() -> None:
    """A child's fold is its source's fed only the step's events (am's new states are fed, frozen, then their edge
    judged with the folds finished in place, session 11); a copy keeps the fold, not the events fed to it
    (`state.forget_fed`); its verdict is that of the whole path judged afresh."""
    ex = Explorer(find(AM).bound)
    node = ex.root()
    (_, _, child, _), *_ = [e for e in ex.successors(node) if e[2] is not None]
    parent = ex.restore(node)
    s = ex.restore(child)
    assert s.incremental is not None and parent.incremental is not None
    assert s.fed == parent.fed == (0, None) and s.events() == parent.events() == []
    (trace,) = parent.incremental.last
    assert s.incremental.last[trace] > parent.incremental.last[trace]
    replayed = ex.replay(list(child.steps))
    assert [v.rule for v in s.judge(final=True)[0]] == [v.rule for v in replayed.judge(final=True)[0]]


@pytest.mark.model
def test_a_node_is_picklable_and_expands_alike() -> None:
    """The Spark explorer ships nodes between processes: a node's pickle has no live session and expands to the
    same edges."""
    ex = Explorer(find(AM).bound)
    (_, _, child, _), *_ = [e for e in ex.successors(ex.root()) if e[2] is not None]
    child.live = None
    again = pickle.loads(pickle.dumps(child))
    assert again.live is None and again.key == child.key and len(again.key) == 1
    strip = lambda edges: [(fp, json.dumps(st, sort_keys=True), c is None) for fp, st, c, _ in edges]  # noqa: E731
    assert strip(ex.successors(again)) == strip(ex.successors(child))


@pytest.mark.model
@pytest.mark.parametrize(("name", "depth"), [(SR, 3), (AM, 4), (PF, 2)])
def test_copy_and_replay_explore_alike(name: str, depth: int) -> None:
    """A default bound (shallower where it is slow) explored by copying and by replaying (the fallback for a
    model with closure timers): the same figures, choice points included."""
    bound = find(name).bound.with_(depth=depth)
    by_copy = Explorer(bound).run()
    replaying = Explorer(bound)
    replaying.result.restore = "replay"
    by_replay = replaying.run()
    assert by_copy.restore == "copy" and by_copy.replays == 0 and by_copy.copies > 0
    assert by_replay.copies == 0
    figures = lambda r: (r.states, r.transitions, r.depth, r.per_level, r.result)  # noqa: E731
    assert figures(by_copy) == figures(by_replay)
    assert by_copy.bytes_per_state > 0 and by_copy.seen_bytes > 0


# --- choice points -------------------------------------------------------------------------------------------
@pytest.mark.model
@pytest.mark.parametrize(("ranges", "per_range"), [("ends", 2), ("ends+mid", 3)])
def test_a_restarted_store_branches_on_every_timer_phase(ranges: str, per_range: int) -> None:
    """pf: a store restarting schedules its three replication timers at phases the seed leaves open (`pf.phase.*`):
    every combination of each range's explored values is its own successor, and a replay of its step is it."""
    ex = Explorer(find(PF).bound)
    ex.ranges = ranges
    crashed = next(e[2] for e in ex.successors(ex.root()) if e[1]["op"] == "crash")
    restarts = [e for e in ex.successors(crashed) if e[1]["op"] == "restart"]
    combos = [list(c) for c in itertools.product(range(per_range), repeat=3)]
    # the phases are the step's first three choices; the mail the restarted store sends then branches on the
    # network's choices (`net.*`) after them
    phases = [e[1]["choices"][:3] for e in restarts]
    assert [c for i, c in enumerate(phases) if c not in phases[:i]] == combos  # BFS order: the path keys' order
    assert [e[1]["choices"] for e in restarts] == sorted(e[1]["choices"] for e in restarts)
    assert len({e[0] for e in restarts}) == len(restarts)  # distinct states
    assert [list(e[2].key[-1][1:]) for e in restarts] == [e[1]["choices"] for e in restarts]
    for fp, step, child, _ in restarts[:: len(combos) - 1]:  # the first and the last: replayed, the same state
        assert ex.fingerprint(ex.replay([*crashed.steps, step]), child.book) == fp


def _choosing_submit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model step with a random choice: sr's `submit` picks a value in [1, 9] (recorded on the system, so each
    outcome is its own state). Stands in for the model's own choice points until they are converted."""
    original = SrSystem.submit

    def submit(self: Any, msg: str, primary: str, forks: Any, origin: str = "outside") -> None:
        self.picked = self.sim.choices.randint("test-pick", 1, 9)
        original(self, msg, primary, forks, origin)

    monkeypatch.setattr(SrSystem, "submit", submit)


def _submits(ex: Explorer) -> list[Any]:
    return [e for e in ex.successors(ex.root()) if e[1]["op"] == "submit"]


@pytest.mark.model
@pytest.mark.parametrize(("ranges", "values"), [("ends", [1, 9]), ("ends+mid", [1, 5, 9])])
def test_a_choice_point_yields_every_allowed_outcome(
    monkeypatch: pytest.MonkeyPatch, ranges: str, values: list[int]
) -> None:
    """The test's choice is the first the step makes (sr's own choice points follow it): per primary, every
    allowed value is taken, each resolution a distinct state, in index order."""
    _choosing_submit(monkeypatch)
    ex = Explorer(find(SR).bound.with_(depth=1, choices=True, ranges=ranges))
    edges = _submits(ex)
    for primary in ("MBX01", "MBX02"):
        mine = [e for e in edges if e[1]["calls"][0]["args"]["primary"] == primary]
        firsts = [e[1]["choices"][0] for e in mine]
        assert firsts == sorted(firsts) and set(firsts) == set(range(len(values)))
        states = [{e[0] for e in mine if e[1]["choices"][0] == k} for k in range(len(values))]
        assert sum(map(len, states)) == len(set().union(*states))  # each value its own states (sr's may merge)
        assert sorted({ex.restore(e[2]).system.picked for e in mine if e[2] is not None}) == values
    for fp, step, _, _ in [edges[0], edges[-1]]:  # a path's replay re-imposes the choices
        assert ex.fingerprint(ex.replay([step]), (1, 0, frozenset(), frozenset())) == fp


@pytest.mark.model
def test_choice_points_off_take_the_seeded_outcome(monkeypatch: pytest.MonkeyPatch) -> None:
    _choosing_submit(monkeypatch)
    edges = _submits(Explorer(find(SR).bound.with_(depth=1, choices=False)))
    assert len(edges) == 2 and all("choices" not in e[1] for e in edges)


@pytest.mark.model
def test_a_replay_file_reimposes_the_choices(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    _choosing_submit(monkeypatch)
    ex = Explorer(find(SR).bound.with_(depth=1, choices=True))
    step = next(e[1] for e in _submits(ex) if e[1]["choices"][0] == 1)
    n = len(step["choices"])
    s, _ = replay_steps(ex.driver, ex.factory(dict(ex.setup)), dict(ex.setup), [step])
    assert s.system.picked == 9
    with pytest.raises(StepError, match=rf"steps\[0\]: field 'choices': {n + 1} recorded, the model made {n}"):
        replay_steps(
            ex.driver, ex.factory(dict(ex.setup)), dict(ex.setup), [{**step, "choices": [*step["choices"], 0]}]
        )
    with pytest.raises(StepError, match=r"steps\[0\]: field 'choices': the model made more choices"):
        replay_steps(ex.driver, ex.factory(dict(ex.setup)), dict(ex.setup), [{**step, "choices": []}])


@pytest.mark.model
def test_the_cli_replays_a_file_with_choices(tmp_path: Path) -> None:
    """A twin mutant's shortest path, written with its steps' (empty) choices, replays through the CLI."""
    res = explore(find(SR).bound.with_(depth=1, choices=True), "ack-before-shadow")
    assert res.found is not None and all("choices" in step for step in res.found.steps)
    f = tmp_path / "r.json"
    f.write_text(json.dumps(res.replay_file("ack-before-shadow")))
    assert main(["replay", str(f), "--mutant", "ack-before-shadow"]) == 1


# --- symmetry ------------------------------------------------------------------------------------------------
@pytest.mark.model
def test_symmetry_groups_and_merges_are_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The renamings are every permutation within each group (the identity first); a mechanism's stated symmetry
    (`model.<m>.symmetry.interchangeable`) is used and the states it merges are counted. For the count only, a
    state is taken to be its book alone (which servers are down): crashing MBX01 or MBX02 is then one state
    under the renaming, and the twin without the reduction keeps them apart."""
    import sys
    import types

    from conformance.explore.spaces import Space

    ex = Explorer(find(SR).bound)
    ex.symmetric([["A", "B"], ["x", "y", "z"]])
    assert len(ex.renames) == 2 * 6 and all(k == v for k, v in ex.renames[0].items())
    fake = types.ModuleType("model.sr.symmetry")
    fake.interchangeable = lambda setup: [f"MBX{i + 1:02d}" for i in range(setup["n_servers"])]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "model.sr.symmetry", fake)
    monkeypatch.setattr(Space, "roots", lambda self, s, book: [book])
    bound = find(SR).bound.with_(depth=1, kinds=("crash",))
    plain, reduced = explore(bound), explore(bound.with_(symmetry=True))
    assert plain.merges == 0 and reduced.merges == 1
    assert reduced.states == plain.states - 1


@pytest.mark.model
def test_a_compressed_blob_is_the_same_state() -> None:
    ex = Explorer(find(AM).bound)
    at = _path(ex, 2)
    s = ex.restore(at)
    plain, packed = freeze(s), freeze(s, compress=True)
    assert len(packed) < len(plain)
    fp = lambda blob: ex.fingerprint(thaw(blob, ex.driver, ex.setup), at.book)  # noqa: E731
    assert fp(packed) == fp(plain) == ex.fingerprint(ex.replay(at.steps), at.book)


@pytest.mark.model
def test_a_compressed_source_is_decompressed_once_and_gives_the_same_edges(monkeypatch) -> None:
    """Session 20: `successors` decompresses a compressed source once for all its edges' copies; its edges are those
    of the same source uncompressed. Twin: the count of decompressions is what would catch one per edge."""
    from conformance.explore import state

    ex = Explorer(find(AM).bound)
    at = _path(ex, 1)
    raw = ex.freeze(ex.restore(at))
    calls = []
    real = state.lz4.block.decompress
    monkeypatch.setattr(state.lz4.block, "decompress", lambda b: calls.append(1) or real(b))
    packed = replace(at, blob=b"L" + state.lz4.block.compress(raw), live=None)
    edges = ex.successors(packed)
    assert len(edges) > 1 and calls == [1] and packed.blob == raw  # once, for every edge
    again = ex.successors(replace(at, blob=raw, live=None))
    assert [(fp, step) for fp, step, _, _ in edges] == [(fp, step) for fp, step, _, _ in again]
    assert state.plain(raw) is raw  # an uncompressed blob is itself


@pytest.mark.model
def test_a_last_level_am_child_is_never_frozen(monkeypatch) -> None:
    """Session 21: am's new states are judged in place (`quiet_end`); one of the bound's last level (`frozen`
    False: never expanded) is not frozen first, as one that will be is. Its edges, verdicts and fairness ends are
    those of the frozen expansion. Twin: the same source expanded with `frozen` True freezes each new child."""
    ex = Explorer(find(AM).bound)
    at = _path(ex, 1)
    frozen: list[int] = []
    real = Explorer.freeze
    monkeypatch.setattr(Explorer, "freeze", lambda self, s: frozen.append(1) or real(self, s))
    blob = ex.freeze(ex.restore(at))
    frozen.clear()
    last = ex.successors(replace(at, blob=blob, live=None), frozen=False)
    assert frozen == [] and any(child is not None for _, _, child, _ in last)
    assert all(child.blob is None for _, _, child, _ in last if child is not None)
    ends_last = [ex.end_of(child) for _, _, child, _ in last if child is not None]
    kept = ex.successors(replace(at, blob=blob, live=None), frozen=True)
    new = [child for _, _, child, _ in kept if child is not None]
    assert len(frozen) == len(new) > 0  # the twin: each child to expand is frozen
    assert [(fp, step, found) for fp, step, _, found in last] == [(fp, step, found) for fp, step, _, found in kept]
    assert ends_last == [ex.end_of(child) for child in new]


# --- states without the events already judged (session 11) ----------------------------------------------------
@pytest.mark.unit
def test_a_recorder_numbers_on_after_forgetting() -> None:
    from model.kernel.recorder import Recorder

    r = Recorder("t")
    for i in range(3):
        r.emit(i, "n", "core", "e", "K", {})
    r.forget(2)
    again = r.emit(9, "n", "core", "e", "K", {})
    assert [e.seq for e in r.events] == [2, 3] and again.event_id == "t:3" and r.base == 2
    with pytest.raises(ValueError, match="cannot forget 3 of 2"):
        r.forget(3)


@pytest.mark.model
@pytest.mark.parametrize("name", [SR, AM, PF])
def test_a_state_keeps_the_fold_not_the_events_fed_to_it(name: str) -> None:
    """A frozen state holds no event its fold was fed (am and pf are smaller for it; sr's events at this depth are
    the context ones its fold keeps anyway); the twin: a fold that is not exact (it would judge the whole prefix,
    which must then be there) keeps every event."""
    from conformance.explore.state import forget_fed

    ex = Explorer(find(name).bound)
    at = _path(ex, 2)
    s = ex.replay(at.steps)
    s.judge(final=True)
    n = len(s.events())
    kept = freeze(s)
    assert n > 0 and forget_fed(s) == n and s.events() == []
    assert thaw(freeze(s), ex.driver, ex.setup).events() == []
    assert name == SR or len(freeze(s)) < len(kept)
    inexact = ex.replay(at.steps)
    inexact.judge(final=True)
    assert inexact.incremental is not None
    inexact.incremental.broken = True
    assert forget_fed(inexact) == 0 and len(inexact.events()) == n


@pytest.mark.unit
def test_a_copy_rebuilds_frozen_slotted_dataclasses_and_keeps_rules_by_reference() -> None:
    """A state's frozen slotted dataclasses are pickled as their fields' values (session 11) and come back equal; a
    class with a `__reduce__` of its own is left to it: a rule stays the one object (twin: the field reducer
    forced on `Rule` copies it, and a copy is not the rule)."""
    import io

    from conformance.engine.core_rules import EVENT_ID_UNIQUE
    from conformance.explore import state
    from model.am.bcss import Options
    from traces.verdict import Rule

    def copy_of(obj: Any, table: dict[Any, Any]) -> Any:
        buf = io.BytesIO()
        pickler = pickle.Pickler(buf, pickle.HIGHEST_PROTOCOL)
        pickler.dispatch_table = table
        pickler.dump(obj)
        return pickle.loads(buf.getvalue())

    table = state._dispatch()
    opts = Options()
    assert Options in table and Rule not in table
    again, rule = copy_of([opts, EVENT_ID_UNIQUE], table)
    assert again == opts and again is not opts and rule is EVENT_ID_UNIQUE
    forced = {**table, Rule: state._reducer(Rule)}
    assert copy_of(EVENT_ID_UNIQUE, forced) is not EVENT_ID_UNIQUE


@pytest.mark.model
def test_a_state_whose_folds_were_finished_in_place_is_copied_for_its_fairness_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """sr's fairness end runs the model on: with every new state's folds finished in place at its edge (as am's
    are, whose end does nothing), each end judges a copy from the blob, whose folds hold the history, and the
    exploration is the same. Why a copy: the live session keeps at most the events since its source (no TRACE_START),
    so folds made afresh for it would judge a trace without its history. Session 21: a state of the last level is
    not frozen (never expanded; in am, whose end does nothing, never restored either): its end judges a replay."""
    bound = find(SR).bound.with_(depth=3)
    plain = Explorer(bound).run()
    monkeypatch.setattr(Explorer, "quiet_end", lambda self, s: True)
    forced = Explorer(bound)
    ends: list[bool] = []
    judge, end_of = Session.judge, Explorer.end_of
    depth = [0]

    def spy(self: Session, final: bool = False, consume: bool = False) -> Any:
        if depth[0] < bound.depth:  # a state expanded after its end: it has a blob
            ends.append(self.incremental is not None)
        return judge(self, final, consume)

    def end_spy(self: Explorer, node: Any) -> Any:
        depth[0] = node.depth
        try:
            return end_of(self, node)
        finally:
            depth[0] = 0

    at = _path(forced, 2)
    live = forced.restore(at)
    live.judge(final=True, consume=True)
    assert live.incremental is None and all(e.kind != "TRACE_START" for e in live.events())
    monkeypatch.setattr(Session, "judge", spy)
    monkeypatch.setattr(Explorer, "end_of", end_spy)
    res = forced.run()
    figures = lambda r: (r.states, r.transitions, r.per_level, r.result)  # noqa: E731
    assert figures(res) == figures(plain) and res.copies > plain.copies
    assert ends and all(ends[1:])  # every verdict but the root's first from a fold
