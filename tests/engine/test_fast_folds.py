"""A trace's folds across the compiled and pure paths (issue 32, session 17): `conformance.engine.stream.TraceFolds`
and `conformance.engine.folds.GroupFolds` are `cdef class`es in the compiled build (`stream.pxd`, `folds.pxd`), the
plain slotted classes of their sources in the pure path.

Saved folds (an sr, an am and a pf mutant's trace, every registered monitor, an sr event of a kind not in sr's
vocabulary so a group counts it in `strange`) are pickled halfway through each trace by one path and loaded by the
other; fed the rest, they finish as folds fed in one pass do. A pickle of the plain slotted classes they were
(`copyreg.__newobj__`, then `(None, {slot: value})`: saved folds made before session 17; `OldStyle` writes it byte
for byte as main dc394d8 did, checked with PYTHONHASHSEED=0) loads on both paths.
`finish_copy` (what `conformance.explore.edges` copies a trace's folds with, since `object.__new__` cannot make a
`cdef class`) gives a copy that finishes as a pickled copy does, the original left byte-identical (pickled); the sr
trace is judged by sr's monitor and a toy entity-scope monitor (`Toy`: its `finish` empties what it counted) so
both the trace's group and its entity groups are copied. Each path runs in a process of its own (a pytest process
runs pure).

`unit` (no build): the pure round trip, the old pickle, the copy, and the twins, each caught: `TraceFolds.
__reduce__` dropping the entity groups, `GroupFolds.__reduce__` dropping the mechanisms seen, `AmFold.__reduce__`
(am's fold, a `cdef class` too since session 25) dropping its replay (the folds finish otherwise), `SrFold.__reduce__`
(sr's, one since session 26) dropping its world, a
`GroupFolds.finish_copy` dropping the unknown kinds counted (the copy finishes otherwise), a `TraceFolds.finish_copy`
sharing the entity groups with the original (finishing the copy changes the original).
`fast` (a build, `python3 scripts/build_fast.py`): the crossings, the copy on the compiled path, and the verdicts of
both paths equal, for the traces streamed and for the same traces held whole (two events swapped: TR-001), whose
core fold's Python `feed` overrides the compiled `cpdef` one called from C.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.test_fast_records import _env  # a process environment on one path
from traces import fastpath

ROOT = Path(__file__).resolve().parents[2]
BUILT, WHY = fastpath.read_manifest(fastpath.build_dir())
# session 25: am's fold (`model/am/monitor.pxd`) is one too; session 26: sr's (`model/sr/monitor.pxd`) and the
# context cursor every fold holds (`traces/verdict.pxd`)
MODULES = {
    m: m.replace(".", "/") + ".py"
    for m in (
        "conformance.engine.stream",
        "conformance.engine.folds",
        "model.am.monitor",
        "model.sr.monitor",
        "traces.verdict",
    )
}
FRESH = BUILT is not None and all(
    fastpath.source_hashes(ROOT / name)
    == {k: BUILT["modules"].get(module, {}).get(k, "") for k in ("source_sha256", "pxd_sha256")}
    for module, name in MODULES.items()
)
needs_build = pytest.mark.skipif(not FRESH, reason=f"no fresh compiled build of the engine's folds ({WHY})")

# `dump` pickles every trace's folds fed the first half of its events (`dump-old`: as the plain slotted classes
# pickled them; `dump-twin-*`: with a `__reduce__` that drops a field); `load` reads them, feeds the rest and says
# whether they finish as folds fed in one pass do. `copy` finishes `finish_copy` copies of folds fed every event
# (`copy-twin-*`: a `finish_copy` that drops a field or shares a group). Each prints whether the two classes run
# compiled.
_SCRIPT = """
import copyreg, dataclasses, json, pickle, sys
from pathlib import Path
from traces import fastpath
from traces.verdict import MonitorResult
from conformance.engine.folds import GroupFolds
from conformance.engine.stream import TraceFolds, split_runs, whole_trace
from model.registry import get, mechanisms

CASES = (("sr", "ack-before-shadow", 2), ("am", "ignore-blocked", 3), ("pf", "answer-non-subset", 1))


def traces():
    out = {}
    for mech, run, seed in CASES:
        events = sorted(get(mech).mutants[run](seed), key=lambda e: e.seq)
        if mech == "sr":  # one event of a kind sr's vocabulary lacks, early: its group counts it (`strange`)
            i = next(i for i, e in enumerate(events) if e.mechanism == "sr" and i > 2)
            events[i] = dataclasses.replace(events[i], kind="HAREDIRECT_V0")
        out[events[0].trace_id] = events
    return out


class ToyFold:
    __slots__ = ("n",)

    def __init__(self):
        self.n = 0

    def feed(self, e):
        self.n += 1

    def finish_copy(self):
        new = ToyFold()
        new.n = self.n
        return new

    def finish(self):
        n, self.n = self.n, 0  # what a fold's finish does: moves what it counted out
        return MonitorResult.of((), [f"{n} events"])


class Toy:
    mechanism, scope = "sr", "entity"

    def start(self, context=()):
        return ToyFold()


def runs(toy=False):
    if toy:
        return [("sr", get("sr").monitor()), ("toy", Toy())]
    return [(n, s.monitor()) for n, s in sorted(mechanisms().items()) if s.monitor is not None]


def fed(events, upto, given=None, toy=False):
    trace_runs, entity_runs = split_runs(runs(toy))
    folds = given if given is not None else TraceFolds(events[0], trace_runs, entity_runs)
    for e in events[upto[0]:upto[1]]:
        folds.feed(e)
    return folds


def outcome(all_folds):
    found = []
    for trace in sorted(all_folds):
        core, judged = all_folds[trace].finish()
        found.append([trace, [v.to_json() for v in core]])
        for name, first, r in judged:
            tally = None if r.tally is None else [sorted(r.tally.judged.items()), sorted(r.tally.unjudged.items())]
            found.append([name, first.event_id, r.verdict.name, [v.to_json() for v in r.violations], list(r.notes),
                          tally])
    return json.loads(json.dumps(found, sort_keys=True, default=str))


def one_pass(toy=False, only=None):
    return outcome({t: fed(es, (0, len(es)), toy=toy) for t, es in traces().items() if only in (None, t[:2])})


class OldStyle(pickle.Pickler):  # how the plain slotted classes pickled (protocol 2 and on): class, (None, slots)
    def reducer_override(self, obj):
        if type(obj) in (TraceFolds, GroupFolds):
            return copyreg.__newobj__, (type(obj),), (None, {n: getattr(obj, n) for n in type(obj).__fields__})
        return NotImplemented


def held():  # each trace recorded out of seq order (two events swapped): judged whole, `HeldRulesFold` its core
    trace_runs, entity_runs = split_runs(runs())
    out = {}
    for t, events in traces().items():
        recorded = list(events)
        recorded[5], recorded[9] = recorded[9], recorded[5]
        out[t] = whole_trace(recorded, trace_runs, entity_runs)
    return outcome(out)


mode, store = sys.argv[1:3]
report = {}
if mode == "dump-twin-trace":  # the entity groups not pickled: they start again
    from conformance.engine.core_fold import restored
    TraceFolds.__reduce__ = lambda self: (restored, (type(self), (*self._values()[:2], {}, *self._values()[3:])))
if mode == "dump-twin-group":  # the mechanisms seen not pickled: a trace-scope monitor's result is dropped
    from conformance.engine.core_fold import restored
    GroupFolds.__reduce__ = lambda self: (restored, (type(self), (*self._values()[:6], set(), *self._values()[7:])))
if mode == "dump-twin-am":  # am's replay not pickled: its fold goes on from an empty world
    from model.am.monitor import AmFold
    from model.am.replay import Replay
    from traces.verdict import restored
    def fresh(self):
        r = self.replay
        return restored, (type(self), tuple(Replay(r.opts, r.thresholds_recorded, r.fold_dag) if n == "replay"
                                            else getattr(self, n) for n in self.__fields__))
    AmFold.__reduce__ = fresh
if mode == "dump-twin-sr":  # sr's world not pickled: its fold goes on from a fresh world
    from model.sr.monitor import SrFold
    from model.sr.world import World as SrWorld
    from traces.verdict import restored
    def fresh_sr(self):
        return restored, (type(self), tuple(SrWorld() if n == "world" else getattr(self, n) for n in self.__fields__))
    SrFold.__reduce__ = fresh_sr
if mode == "outcome":  # what the folds judge on this path, streamed and held whole
    streamed, whole = one_pass(), held()
    report["outcome"] = [streamed, whole]
    report["tr001"] = sum(1 for row in whole if len(row) == 2 for v in row[1] if "TR-001" in json.dumps(v))
elif mode.startswith("dump"):
    half = {t: fed(es, (0, len(es) // 2)) for t, es in traces().items()}
    with Path(store).open("wb") as out:
        (OldStyle if mode == "dump-old" else pickle.Pickler)(out, pickle.HIGHEST_PROTOCOL).dump(half)
    report["types"] = sorted({type(g).__name__ for f in half.values() for g in (f, f.trace, *f.entities.values())
                              if g is not None})
elif mode == "load":
    half = pickle.loads(Path(store).read_bytes())
    events = traces()
    report["same"] = outcome({t: fed(es, (len(es) // 2, len(es)), half[t]) for t, es in events.items()}) == one_pass()
else:  # the copies `conformance.explore.edges` finishes
    if mode == "copy-twin-drop":  # the unknown kinds counted not copied
        real = GroupFolds.finish_copy
        def dropping(self):
            new = real(self)
            if new is not None:
                new.strange = {}
            return new
        GroupFolds.finish_copy = dropping
    if mode == "copy-twin-share":  # the entity groups shared, not copied
        real_trace = TraceFolds.finish_copy
        def sharing(self):
            new = real_trace(self)
            if new is not None:
                new.entities = self.entities
            return new
        TraceFolds.finish_copy = sharing
    events = traces()
    sr = {t: fed(es, (0, len(es)), toy=True) for t, es in events.items() if t.startswith("sr")}
    before = pickle.dumps(sr, pickle.HIGHEST_PROTOCOL)
    copies = {t: f.finish_copy() for t, f in sr.items()}
    report["copied"] = all(c is not None and type(c) is TraceFolds for c in copies.values())
    report["entities"] = sum(len(c.entities) for c in copies.values())
    got = outcome(copies)
    report["same"] = got == one_pass(toy=True, only="sr")
    report["strange"] = any("HAREDIRECT_V0" in note for row in got[1:] for note in row[4])
    report["left"] = pickle.dumps(sr, pickle.HIGHEST_PROTOCOL) == before
    pf = {t: fed(es, (0, len(es))) for t, es in events.items() if t.startswith("pf")}
    report["pf_declines"] = all(f.finish_copy() is None for f in pf.values())  # pf's fold has no finish_copy
compiled = fastpath.status()["compiled"]  # (at the end: am's monitor is imported when the folds start)
report["compiled"] = sorted(m for m in ("conformance.engine.stream", "conformance.engine.folds", "model.am.monitor",
                                      "model.sr.monitor", "traces.verdict") if m in compiled)
print(json.dumps(report))
"""


def _run(mode: str, store: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode, str(store)], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.unit
def test_folds_round_trip_pure_and_a_dropped_field_is_caught(tmp_path: Path) -> None:
    pure = _env(HACONFORM_PURE="1")
    dumped = _run("dump", tmp_path / "p", pure)
    assert dumped["compiled"] == [] and dumped["types"] == ["GroupFolds", "TraceFolds"]
    assert _run("load", tmp_path / "p", pure)["same"]
    _run("dump-old", tmp_path / "old", pure)
    assert _run("load", tmp_path / "old", pure)["same"]
    for twin in ("dump-twin-trace", "dump-twin-group", "dump-twin-am", "dump-twin-sr"):
        _run(twin, tmp_path / twin, pure)
        assert not _run("load", tmp_path / twin, pure)["same"], twin


@pytest.mark.unit
def test_finish_copy_pure_and_a_dropped_or_shared_field_is_caught(tmp_path: Path) -> None:
    pure = _env(HACONFORM_PURE="1")
    copied = _run("copy", tmp_path / "c", pure)
    assert copied["copied"] and copied["entities"] > 0 and copied["strange"] and copied["pf_declines"]
    assert copied["same"] and copied["left"]
    dropped = _run("copy-twin-drop", tmp_path / "c", pure)
    assert dropped["copied"] and not dropped["strange"] and not dropped["same"] and dropped["left"]
    shared = _run("copy-twin-share", tmp_path / "c", pure)
    assert shared["copied"] and not shared["left"]


@pytest.mark.fast
@needs_build
def test_folds_cross_between_compiled_and_pure(tmp_path: Path) -> None:
    compiled, pure = _env(), _env(HACONFORM_PURE="1")
    both = sorted(MODULES)
    for saver, loader, name in ((compiled, pure, "c2p"), (pure, compiled, "p2c"), (compiled, compiled, "c2c")):
        for mode in ("dump", "dump-old"):
            dumped = _run(mode, tmp_path / name, saver)
            loaded = _run("load", tmp_path / name, loader)
            assert dumped["compiled"] == (both if saver is compiled else []), (name, mode)
            assert loaded["compiled"] == (both if loader is compiled else []), (name, mode)
            assert loaded["same"], (name, mode)


@pytest.mark.fast
@needs_build
def test_the_compiled_folds_judge_as_the_pure_ones(tmp_path: Path) -> None:
    """The same violations, notes and tallies on both paths, for traces streamed and held whole (a held trace's
    core fold is a `HeldRulesFold`, whose `feed` overrides the compiled `TraceRulesFold.feed` called from C)."""
    compiled = _run("outcome", tmp_path / "o", _env())
    pure = _run("outcome", tmp_path / "o", _env(HACONFORM_PURE="1"))
    assert compiled["compiled"] == sorted(MODULES) and pure["compiled"] == []
    assert compiled["tr001"] == pure["tr001"] == 6  # two per held trace (9 before 6, 8 before 5)
    assert compiled["outcome"] == pure["outcome"]


@pytest.mark.fast
@needs_build
def test_finish_copy_compiled(tmp_path: Path) -> None:
    copied = _run("copy", tmp_path / "c", _env())
    assert copied["compiled"] == sorted(MODULES)
    assert copied["copied"] and copied["entities"] > 0 and copied["strange"] and copied["pf_declines"]
    assert copied["same"] and copied["left"]
