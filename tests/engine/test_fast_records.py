"""The folds' records across the compiled and pure paths (issue 32). Session 14: `model/pf/state.py`'s
`Change`, `Msg`, `Row`, `Entry`, `Replica` and `model/pf/cnset.py`'s `CNSet`; session 15: `model/am/state.py`'s
`CopyState`, `Health`, `Snapshot` and `model/am/bcss.py`'s `Choice`, `Selection`, on the bases moved to
`model/kernel/records.py`. All are `cdef class`es in the compiled build, declared in their `.pxd`.

A pickle of the records made by one path loads in the other as equal records, with the same `repr`, and the
explorer's fingerprint (`conformance.explore.fingerprint`) of the same records is the same on both paths and
equal to the one the dataclasses gave (pinned below). Each path runs in a process of its own (a pytest process
runs pure). The pure round trip and its twin (`unit`, no build): a record class whose `__reduce__` drops a field
gives a pickle that loads as a different record, and the comparison catches it. The crossings between the paths
are `fast` (they need a build, `python3 scripts/build_fast.py`). am's records are pickled and fingerprinted the
same way, beside pf's, against their own pin (the dataclasses' fingerprint, main e0f662d); their twin: a
`CopyState.__reduce__` that drops a field. Also `unit`: every record lists its fields in one order (`__init__`,
`__fields__`, `__slots__`, `_values`); twin: a `_values` that swaps two fields.

Session 26: am's `World` and `DbState` (dataclasses before) are records too, pickled through `traces.verdict.restored`
(no `__init__`: the world's caches travel with it, as the dataclass's did). Their fingerprint is pinned to the one the
dataclasses gave (main 459882f, pure), the same on both paths; a loaded world equals the one dumped and keeps its
cached quorum; twin: a `World.__reduce__` that drops the databases loads as another world, with another fingerprint.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from model.am import state as am_state
from model.am.bcss import Choice, Selection
from model.am.state import CopyState, DbState, Health, Snapshot, World
from model.pf import state
from model.pf.cnset import CNSet
from model.pf.state import Change, Entry, Msg, Replica, Row
from traces import fastpath

ROOT = Path(__file__).resolve().parents[2]
BUILT, WHY = fastpath.read_manifest(fastpath.build_dir())
RECORDS = ("model.pf.state", "model.pf.cnset", "model.am.state", "model.am.bcss", "model.kernel.records")
FRESH = BUILT is not None and all(
    fastpath.source_hashes(ROOT / (m.replace(".", "/") + ".py"))
    == {k: BUILT["modules"].get(m, {}).get(k, "") for k in ("source_sha256", "pxd_sha256")}
    for m in RECORDS
)
needs_build = pytest.mark.skipif(not FRESH, reason=f"no fresh compiled build of {', '.join(RECORDS)} ({WHY})")
# The fingerprint of `records()` (below) when these classes were dataclasses (main fac1839, pure): unchanged.
BEFORE = "fcf6b92b191e848e81feaa0d077c924f"
# The fingerprint of `am_records()` when those classes were dataclasses (main e0f662d, pure): unchanged.
BEFORE_AM = "8077aa3fad95657fe23136686967bd63"
# The fingerprint of `world_records()` when `World` and `DbState` were dataclasses (main 459882f, pure): unchanged.
BEFORE_WORLD = "e87fdc00d7da3d001c4192f69e1ef8ea"

# `dump` pickles `records()` to a file; `load` reads one and says whether it equals `records()`; both print the
# path run, the fingerprint and the repr. `dump-twin` (pure only) pickles with `Entry.__reduce__` dropping a field.
_SCRIPT = """
import json, pickle, sys
from pathlib import Path
from conformance.explore.fingerprint import fingerprint
from model.pf.cnset import EMPTY, CN, CNSet
from model.pf import state
from model.pf.state import Change, Entry, Msg, Replica, Row
from model.am import rules as AR
from model.am.bcss import Choice, Selection
from model.am.state import CopyState, DbState, Health, Snapshot, World
from model.am.bcss import Options
from traces import fastpath
from traces.verdict import restored

def records():
    a = CNSet.decode(["srv01#0:1-5,7", "srv02#1:3"])
    b = CNSet.of([CN("srv02#1", 4), CN("srv03#0", 1)])
    change = Change(CN("srv01#0", 7), "post", "m1", 3, "t", "d", 1500)
    msg = Msg("srv01/1", 2, "1-2", "srv01", ("srv02", "srv03"), a, (change,), b, True, "srv02/9", "why")
    entry = Entry(b, 9000, 2, False, ("srv02",), 8000, 7000, "new_replica")
    row = Row(b, True, 100, 200, 30)
    rep = Replica("1-2", "srv01", "srv01#0", a, b, "delete_pending", 5000, {"srv02": row}, (entry,),
                  {"srv03": b}, True, {"srv02": "active"})
    return [a, b, EMPTY, change, msg, entry, row, rep, [entry, entry, row, row]]

def am_records():
    c1 = CopyState("MBX01", "Healthy", 40, 2, "Healthy", 1, False, True, True)
    c2 = CopyState("MBX02", "Failed", 38, 0, "Crawling", 2, True, False, False)
    h = Health({"OutlookWeb": ("High", "Healthy"), "Search": ("Low", "Degraded")})
    snap = Snapshot("DB1", "MBX01", 42, (c1, c2), {"MBX01": "Lossless"}, {"MBX01": h})
    ch = Choice("MBX02", 3, 2, 4, 0, 2, (2, 3, 4, 0, 2))
    sel = Selection((ch,), (("MBX01", "source"),), "CopyQueue", AR.SORT_COPY_QUEUE)
    return [c1, c2, ch, sel, h, snap, Health(), [c1, c1, h, h, snap, c2.with_(lli=39)]]

def world_records():
    c1 = CopyState("MBX01", "Mounted", 40, 2, "Healthy", 1, False, False, True)
    c2 = CopyState("MBX02", "Healthy", 38, 0, "Crawling", 2, True, False, True)
    h = Health({"OutlookWeb": ("High", "Healthy"), "Search": ("Low", "Degraded")})
    d = DbState("DB1", "DAG1", {"MBX01": c1, "MBX02": c2}, "MBX01", frozenset({"MBX01"}), None, 42, "MBX01", False)
    alone = DbState("DB2", None, {"MBX03": c2.with_(server="MBX03")})
    w = World("DAG1", ("MBX01", "MBX02", "MBX03"), frozenset({"MBX01", "MBX02"}),
              (frozenset({"MBX01", "MBX02"}), frozenset({"MBX03"})), frozenset({"MBX01"}), {"MBX01": "Lossless"},
              {"MBX01": h}, {"DB1": d, "DB2": alone}, Options())
    w.quorum(), w.view_key()  # the caches set: pickled, not fingerprinted
    return [w, d, alone, [w, d, w]]

mode, store = sys.argv[1:3]
if mode == "dump-twin-world":
    World.__reduce__ = lambda self: (restored, (World, (*self._values()[:7], {}, *self._values()[8:])))
if mode == "dump-twin":
    Entry.__reduce__ = lambda self: (Entry, self._values()[:-1])  # drops `cause`
if mode == "dump-twin-am":
    CopyState.__reduce__ = lambda self: (CopyState, self._values()[:-1])  # drops `reachable`
if mode.startswith("dump"):
    Path(store).write_bytes(pickle.dumps([records(), am_records(), world_records()]))
    got, am, world, same = records(), am_records(), world_records(), True
else:
    got, am, world = pickle.loads(Path(store).read_bytes())
    same = got == records() and not got != records() and [hash(r) for r in got[:6]] == [hash(r) for r in records()[:6]]
    same = same and am == am_records() and not am != am_records()
    same = same and [hash(r) for r in am[:4]] == [hash(r) for r in am_records()[:4]]
    same_world = world == world_records() and not world != world_records() and world[3][0] is world[3][2] is world[0]
print(json.dumps({"compiled": fastpath.status()["compiled"], "same": same, "fingerprint": fingerprint([got]),
                  "repr": repr(got), "fingerprint_am": fingerprint([am]), "repr_am": repr(am),
                  "same_world": mode.startswith("dump") or same_world, "fingerprint_world": fingerprint([world]),
                  "repr_world": repr(world), "quorum_world": sorted(world[0].cached_quorum),
                  "world_dbs": sorted(world[0].dbs)}))
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (fastpath.PURE_ENV, fastpath.DIR_ENV, fastpath.TESTS_ENV)}
    env["PYTHONPATH"] = str(ROOT)
    env["PYTHONHASHSEED"] = "0"  # the reprs compared across processes hold sets
    env.update(extra)
    return env


def _run(mode: str, store: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode, str(store)], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.unit
def test_records_round_trip_pure_and_a_dropped_field_is_caught(tmp_path: Path) -> None:
    pure = _env(HACONFORM_PURE="1")
    dumped = _run("dump", tmp_path / "p", pure)
    loaded = _run("load", tmp_path / "p", pure)
    assert not dumped["compiled"] and loaded["same"]
    assert loaded["fingerprint"] == dumped["fingerprint"] == BEFORE
    assert loaded["repr"] == dumped["repr"]
    assert "Entry(cns=CNSet(parts=" in dumped["repr"] and "cause='new_replica')" in dumped["repr"]
    # twin: a `__reduce__` that drops a field loads as another record, with another fingerprint
    _run("dump-twin", tmp_path / "twin", pure)
    twin = _run("load", tmp_path / "twin", pure)
    assert not twin["same"] and twin["fingerprint"] != BEFORE
    assert loaded["fingerprint_am"] == dumped["fingerprint_am"] == BEFORE_AM
    assert loaded["repr_am"] == dumped["repr_am"]
    assert "CopyState(server='MBX01', status='Healthy', lli=40," in dumped["repr_am"]
    assert (
        "Choice(server='MBX02', criteria_set=3," in dumped["repr_am"] and "Health(components={})" in dumped["repr_am"]
    )
    # twin: am's `CopyState.__reduce__` dropping a field is caught the same way
    _run("dump-twin-am", tmp_path / "twin-am", pure)
    twin = _run("load", tmp_path / "twin-am", pure)
    assert not twin["same"] and twin["fingerprint_am"] != BEFORE_AM and twin["fingerprint"] == BEFORE
    # am's world and databases: equal after the round trip, the cached quorum kept, the dataclasses' fingerprint
    assert loaded["same_world"] and loaded["fingerprint_world"] == dumped["fingerprint_world"] == BEFORE_WORLD
    assert loaded["repr_world"] == dumped["repr_world"] and loaded["quorum_world"] == ["MBX01", "MBX02"]
    assert "World(dag='DAG1', members=(" in dumped["repr_world"] and "cached_quorum" not in dumped["repr_world"]
    assert "DbState(name='DB2', dag=None, copies={'MBX03': CopyState(" in dumped["repr_world"]
    # twin: a `World.__reduce__` that drops the databases loads as another world, with another fingerprint
    _run("dump-twin-world", tmp_path / "twin-world", pure)
    twin = _run("load", tmp_path / "twin-world", pure)
    assert not twin["same_world"] and twin["world_dbs"] == [] and twin["fingerprint_world"] != BEFORE_WORLD


@pytest.mark.fast
@needs_build
def test_records_cross_between_compiled_and_pure(tmp_path: Path) -> None:
    compiled, pure = _env(), _env(HACONFORM_PURE="1")
    for saver, loader, name in ((compiled, pure, "c2p"), (pure, compiled, "p2c"), (compiled, compiled, "c2c")):
        dumped = _run("dump", tmp_path / name, saver)
        loaded = _run("load", tmp_path / name, loader)
        assert set(RECORDS) <= set(dumped["compiled"]) if saver is compiled else not dumped["compiled"], name
        assert set(RECORDS) <= set(loaded["compiled"]) if loader is compiled else not loaded["compiled"], name
        assert loaded["same"], name
        assert loaded["fingerprint"] == dumped["fingerprint"] == BEFORE, name
        assert loaded["repr"] == dumped["repr"], name
        assert loaded["fingerprint_am"] == dumped["fingerprint_am"] == BEFORE_AM, name
        assert loaded["repr_am"] == dumped["repr_am"], name
        assert loaded["same_world"] and loaded["fingerprint_world"] == dumped["fingerprint_world"] == BEFORE_WORLD, name
        assert loaded["repr_world"] == dumped["repr_world"] and loaded["quorum_world"] == ["MBX01", "MBX02"], name


def _misordered(cls: type) -> list[str]:
    """What is out of step in a record class: `__init__`'s parameters, `__fields__`, `__slots__` (pure) and
    `_values()` (a record built from distinct values gives them back in `__fields__`'s order)."""
    params = list(inspect.signature(cls.__init__).parameters)[1:]
    wrong = [] if params == list(cls.__fields__) else [f"__init__ {params}"]
    if tuple(cls.__slots__) != cls.__fields__:
        wrong.append(f"__slots__ {cls.__slots__}")
    args: list[Any] = [f"v{i}" for i in range(len(params))]
    record = cls(*args)
    if list(record._values()) != args or [getattr(record, n) for n in cls.__fields__] != args:
        wrong.append(f"_values {record._values()}")
    return wrong


@pytest.mark.unit
@pytest.mark.skipif(
    state._COMPILED or am_state._COMPILED,
    reason="reads the pure classes (a compiled one is final and has no signature)",
)
def test_every_record_lists_its_fields_in_one_order() -> None:
    """`__reduce__` and the compiled `__init__` rely on one field order; twin: a `_values` that swaps two fields."""
    for cls in (Change, Msg, Row, Entry, Replica, CopyState, Health, Snapshot, Choice, Selection):
        assert _misordered(cls) == [], cls
    # `DbState` copies its `copies` (a dict): its order checked with a dict there
    params = list(inspect.signature(DbState.__init__).parameters)[1:]
    assert DbState.__fields__ == DbState.__slots__ and params == list(DbState.__fields__)
    args = ["v0", "v1", {"k": 2}, *[f"v{i}" for i in range(3, 9)]]
    assert list(DbState(*args)._values()) == args
    # `World` takes its nine fields of state; its three caches follow them (set by `__init__`, not given)
    params = list(inspect.signature(World.__init__).parameters)[1:]
    assert World.__fields__ == World.__slots__ and params == list(World.__fields__[:9])
    w = World(*[f"v{i}" for i in range(4)], "v4", {"k": 5}, {"k": 6}, {"k": 7}, "v8")
    assert w._values() == ("v0", "v1", "v2", "v3", "v4", {"k": 5}, {"k": 6}, {"k": 7}, "v8", ..., ..., None)
    assert CNSet.__fields__ == CNSet.__slots__ == ("parts",)

    class Swapped(Entry):
        __slots__ = ()

        def _values(self) -> tuple:
            v = super()._values()
            return (v[1], v[0], *v[2:])

    assert any(w.startswith("_values") for w in _misordered(Swapped))
