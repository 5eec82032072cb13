"""The pf fold's state as a record (issue 32, session 16, "half the cost per event"): `model.pf.foldstate.FoldState`
holds every field of `PfFold` in `FIELDS` (its `__slots__` in the pure path; C fields of a `cdef class` in the
compiled build, `foldstate.pxd`, which the parts' methods typed `@cython.locals(self=FoldState)` read directly).

- `unit`: every attribute a fold sets while judging a trace (the model's and every mutant's) is one of `FIELDS`,
  so none lands in the instance's `__dict__` (where the compiled methods would look it up by name); twin: a part
  that sets an unlisted attribute is found. A stopped fold holds nothing but its result. A pickled fold continues
  exactly (`traces.verdict.save_fold`); twin: a `__reduce__` that drops a field's value gives another verdict.
- `fast` (needs a fresh build): a fold pickled by one path (compiled, pure) at a cut loads in the other and
  continues to the verdict and tally of one pure pass; the explorer's fingerprint of the fold at the cut is the
  same on both paths.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.check import trace_contexts
from conformance.explore.fingerprint import fingerprint
from model.pf import foldstate
from model.pf.foldstate import FIELDS, FoldState
from model.pf.monitor import PfFold, PFMonitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate
from tests.engine.test_fast_records import _env
from traces import fastpath
from traces.schema import Event
from traces.verdict import in_seq_order, restore_fold, save_fold

ROOT = Path(__file__).resolve().parents[2]
BUILT, WHY = fastpath.read_manifest(fastpath.build_dir())
MODULES = ("model.pf.foldstate", "model.pf.monitor", "model.pf.deadlines", "model.pf.handlers")
FRESH = BUILT is not None and all(
    fastpath.source_hashes(ROOT / (m.replace(".", "/") + ".py"))
    == {k: BUILT["modules"].get(m, {}).get(k, "") for k in ("source_sha256", "pxd_sha256")}
    for m in MODULES
)
needs_build = pytest.mark.skipif(not FRESH, reason=f"no fresh compiled build of {', '.join(MODULES)} ({WHY})")


def _trace(run: Any = simulate, seed: int = 1) -> tuple[list[Event], list[Event]]:
    events = list(in_seq_order(run(seed)))
    return events, trace_contexts(events).get(events[0].trace_id, [])


def unlisted(fold: Any) -> list[str]:
    """The attributes a fold holds outside `FIELDS` (in its `__dict__`)."""
    return sorted(getattr(fold, "__dict__", {}))


def _verdict(result: Any) -> tuple:
    assert result.tally is not None
    return (result.verdict, [repr(v) for v in result.violations], result.notes, result.tally.judged,
            result.tally.unjudged)  # fmt: skip


# --- every field listed ---------------------------------------------------------------------------------------
@pytest.mark.unit
@pytest.mark.parametrize("name", ["model", *sorted(MUTANTS)])
def test_every_attribute_a_fold_sets_is_a_listed_field(name: str) -> None:
    events, context = _trace(MUTANTS.get(name, simulate))
    fold = PFMonitor().start(context)
    for e in events:
        fold.feed(e)
        if fold.stopped is not None:
            break
    assert unlisted(fold) == [], name
    assert len(set(FIELDS)) == len(FIELDS) and FoldState.__slots__ == FIELDS


@pytest.mark.unit
def test_twin_a_part_setting_an_unlisted_attribute_is_found() -> None:
    class Careless(PfFold):
        def init_schedule(self) -> None:
            super().init_schedule()
            self.forgotten: dict[str, int] = {}

    events, context = _trace()
    fold = Careless(context)
    fold.feed(events[0])
    assert unlisted(fold) == ["forgotten"]


@pytest.mark.unit
def test_a_stopped_fold_holds_only_its_result() -> None:
    events, context = _trace()
    fold = PFMonitor().start(context)
    for e in events:
        fold.feed(e)
    result = fold.finish()
    assert fold.stopped is result
    assert [n for n in FIELDS if n != "stopped" and getattr(fold, n) is not None] == []
    assert unlisted(fold) == []


# --- pickled -------------------------------------------------------------------------------------------------
@pytest.mark.unit
def test_a_pickled_fold_continues_exactly_and_a_dropped_field_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    events, context = _trace()
    whole = _verdict(PFMonitor().check(events, context))
    cut = len(events) // 2

    def continued() -> tuple:
        fold = PFMonitor().start(context)
        for e in events[:cut]:
            fold.feed(e)
        blob = save_fold(fold)
        again = restore_fold(blob)
        assert type(again) is PfFold
        same = fingerprint([again]) == fingerprint([fold])
        for e in events[cut:]:
            again.feed(e)
        return same, _verdict(again.finish())

    assert continued() == (True, whole)
    # twin: a `__reduce__` that loses what one field holds (the folders the hierarchy names) gives another verdict
    keep = FoldState.__reduce__

    def dropping(self: Any) -> tuple:
        fn, (cls, values, extra) = keep(self)
        return fn, (cls, tuple(set() if n == "hier_targets" else v for n, v in zip(FIELDS, values, strict=True)), extra)

    monkeypatch.setattr(FoldState, "__reduce__", dropping)
    same, verdict = continued()
    assert not same and verdict != whole


# --- across the paths ------------------------------------------------------------------------------------------
# `dump` folds the model's trace (seed 1) to its middle and pickles the fold; `load` continues a pickled fold to the
# end; both print the compiled modules, the fold's fingerprint at the cut and the verdict (or `whole`: one pass).
_SCRIPT = """
import json, pickle, sys
from pathlib import Path
from conformance.check import trace_contexts
from conformance.explore.fingerprint import fingerprint
from model.pf.monitor import PFMonitor
from model.pf.sim import simulate
from traces import fastpath
from traces.verdict import in_seq_order

mode, store = sys.argv[1:3]
events = list(in_seq_order(simulate(1)))
context = trace_contexts(events).get(events[0].trace_id, [])
cut = len(events) // 2
def verdict(r):
    return [r.verdict.name, [repr(v) for v in r.violations], r.notes, r.tally.judged, r.tally.unjudged]
if mode == "dump":
    fold = PFMonitor().start(context)
    for e in events[:cut]:
        fold.feed(e)
    Path(store).write_bytes(pickle.dumps(fold, protocol=pickle.HIGHEST_PROTOCOL))
    out = {"fingerprint": fingerprint([fold]), "verdict": verdict(PFMonitor().check(events, context))}
else:
    fold = pickle.loads(Path(store).read_bytes())
    out = {"fingerprint": fingerprint([fold])}
    for e in events[cut:]:
        fold.feed(e)
    out["verdict"] = verdict(fold.finish())
print(json.dumps({"compiled": fastpath.status()["compiled"], "type": type(fold).__name__, **out}))
"""


def _run(mode: str, store: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode, str(store)], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.fast
@needs_build
def test_a_fold_pickled_by_one_path_continues_in_the_other(tmp_path: Path) -> None:
    # (one hash seed in every process: the fingerprint walks sets in their order)
    compiled, pure = _env(PYTHONHASHSEED="0"), _env(PYTHONHASHSEED="0", HACONFORM_PURE="1")
    whole = _run("dump", tmp_path / "whole", pure)
    for saver, loader, name in ((compiled, pure, "c2p"), (pure, compiled, "p2c"), (compiled, compiled, "c2c")):
        dumped = _run("dump", tmp_path / name, saver)
        loaded = _run("load", tmp_path / name, loader)
        assert set(MODULES) <= set(dumped["compiled"]) if saver is compiled else not dumped["compiled"], name
        assert set(MODULES) <= set(loaded["compiled"]) if loader is compiled else not loaded["compiled"], name
        assert dumped["type"] == loaded["type"] == "PfFold", name
        assert loaded["fingerprint"] == dumped["fingerprint"] == whole["fingerprint"], name
        assert loaded["verdict"] == dumped["verdict"] == whole["verdict"], name


@pytest.mark.unit
def test_restore_is_the_pickles_function() -> None:
    """(What `FoldState.__reduce__` names exists in both paths: a module-level function of `foldstate`.)"""
    fn, args = PfFold().__reduce__()
    assert fn is foldstate.restore and args[0] is PfFold and len(args[1]) == len(FIELDS)
