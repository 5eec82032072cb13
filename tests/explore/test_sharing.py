"""What the states of an exploration share instead of copying (issue 33, session 15, `conformance.explore.sharing`):
the records declaring `__frozen__` (pf's) are fixed-table entries and are shared by the edge verdict's copy of the
folds; the table's build leaves out an object holding a mutable object the rest of the state holds too.

Twins: a mutable class wrongly declared frozen is an internal error naming it (at the table's build and in the edge
copy); a table that keeps a configuration whose dict a server also holds gives copies in which the two are two
objects (the build's guard keeps them one); the end-of-search check names a table object a step changed."""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass
from typing import Any

import pytest

from conformance.explore import fixed, sharing, state
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from model.pf.cnset import CNSet
from model.pf.state import Replica, Row

AM = "am-3s-1db-crash-partition"
PF = "pf-2s-1f-replicas"


@dataclass(frozen=True)
class Config:
    limits: dict[str, int]


@dataclass(frozen=True)
class Outer:
    inner: Config


class Holder:
    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


def _patchable(cls: type) -> None:
    """Skip a twin that patches or mutates one of pf's records where the record is compiled (an extension type,
    `scripts/build_fast.py`, whose class and fields cannot be set); the default run, pure, runs it."""
    if not cls.__flags__ & (1 << 9):  # Py_TPFLAGS_HEAPTYPE: a class defined in Python
        pytest.skip(f"{cls.__qualname__} is compiled in this run: the twin patches it, which the pure run does")


def _copy(table: fixed.FixedTable, obj: Any) -> Any:
    """`obj` pickled against `table` (its objects by reference, as `state.freeze` does) and loaded."""
    buf = io.BytesIO()
    pickler = pickle.Pickler(buf, fixed.PROTOCOL)
    pickler.dispatch_table = table.dispatch(state._dispatch(), state._scanned)
    pickler.dump(obj)
    return pickle.loads(buf.getvalue())


@pytest.fixture
def clean_caches(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's own view of the classes it marks frozen (the guards remember a class's verdict)."""
    monkeypatch.setattr(sharing, "_ASSIGNABLE", {})
    monkeypatch.setattr(state, "_RECORDS", set(state._RECORDS))
    monkeypatch.setattr(state, "_COPY_TABLE", [0, {}])
    monkeypatch.setattr(state, "_scanned", 0)


def _table(name: str) -> fixed.FixedTable:
    """The fixed table of the bound `name`'s exploration (built by its first root's freeze)."""
    ex = Explorer(find(name).bound)
    ex.root()
    assert ex.fixed is not None
    return ex.fixed


@pytest.mark.model
def test_pf_records_declared_frozen_are_table_entries() -> None:
    table = _table(PF)
    assert {"CNSet", "Msg"} <= {type(o).__name__ for o in table.objects}
    assert table.left_out == []


@pytest.mark.unit
def test_the_edge_copy_shares_frozen_records_and_copies_mutable_ones() -> None:
    one = CNSet((("a", ((1, 2),)),))
    row = Row(one, False, 0, 0, 0)
    holding = CNSet((("a", [(1, 2)]),))  # twin: a list inside (not hashable), which a finish could change
    copy = state.copy_folds({"t": [one, row, holding]})
    assert copy["t"][0] is one
    assert copy["t"][1] is not row and copy["t"][1] == row
    assert copy["t"][2] is not holding and copy["t"][2] == holding


@pytest.mark.unit
def test_twin_a_mutable_class_declared_frozen_is_refused_by_the_edge_copy(
    monkeypatch: pytest.MonkeyPatch, clean_caches: None
) -> None:
    _patchable(Row)
    monkeypatch.setattr(Row, "__frozen__", True, raising=False)
    monkeypatch.setattr(Row, "__hash__", lambda self: 0)  # hashable too: only the guard refuses it
    row = Row(CNSet(), False, 0, 0, 0)
    with pytest.raises(RuntimeError, match=r"model\.pf\.state\.Row declares itself frozen .* lets its field 'cnset'"):
        state.copy_folds({"t": [row]})


@pytest.mark.model
def test_twin_a_mutable_class_declared_frozen_is_refused_by_the_table(
    monkeypatch: pytest.MonkeyPatch, clean_caches: None
) -> None:
    """pf's `Replica` (its fields assigned by the steps) declared frozen: the table's build names it."""
    _patchable(Replica)
    monkeypatch.setattr(Replica, "__frozen__", True, raising=False)
    with pytest.raises(RuntimeError, match=r"model\.pf\.state\.Replica declares itself frozen .* field 'fid'"):
        Explorer(find(PF).bound).root()


@pytest.mark.unit
def test_the_table_leaves_out_what_holds_a_mutable_object_of_the_state() -> None:
    limits = {"a": 1}
    cfg, alone = Config(limits), Config({"b": 2})
    outer = Outer(cfg)
    parts = [Holder(cfg=cfg, outer=outer, alone=alone, limits=limits)]
    table = fixed.FixedTable.of(parts, state._dispatch(), "test-apart")
    assert table.objects == [alone] and table.left_out == [cfg, outer]  # `outer` holds `cfg`, left out in turn
    (copy,) = _copy(table, parts)
    assert copy.cfg.limits is copy.limits and copy.outer.inner is copy.cfg and copy.alone is alone


@pytest.mark.unit
def test_twin_a_table_without_the_guard_splits_one_object_in_two(monkeypatch: pytest.MonkeyPatch) -> None:
    limits = {"a": 1}
    parts = [Holder(cfg=Config(limits), limits=limits)]
    monkeypatch.setattr(fixed, "apart", lambda objects, roots: (list(objects), []))
    table = fixed.FixedTable.of(parts, state._dispatch(), "test-no-guard")
    (copy,) = _copy(table, parts)
    assert copy.cfg.limits is not copy.limits  # a change through one no longer shows through the other
    copy.limits["a"] = 2
    assert copy.cfg.limits["a"] == 1


@pytest.mark.model
def test_am_boot_events_holding_the_models_lists_are_left_out() -> None:
    """Found by the guard (session 15): am's first events' attribute lists are lists `ModelSystem` keeps."""
    assert sorted(e.kind for e in _table(AM).left_out) == ["AM_DAG_CONFIG", "DAG_VIEW", "DB_CREATE"]


@pytest.mark.model
def test_the_end_of_search_check_names_a_changed_table_object() -> None:
    """`end_of_search` (what a Spark worker calls after its tasks, as `run` does): nothing without a table; a table
    object changed (a frozen configuration's dict) named."""
    _patchable(CNSet)
    fixed.end_of_search(None, "no table")
    table = _table(PF)
    fixed.end_of_search(table, "unchanged")
    cnset = next(o for o in table.objects if type(o) is CNSet)  # may be one the module shares (`EMPTY`)
    was = cnset.parts
    object.__setattr__(cnset, "parts", (("changed", ((1, 1),)),))
    try:
        with pytest.raises(RuntimeError, match=r"changed: the fixed table's object \d+ \(a model\.pf\.cnset\.CNSet"):
            fixed.end_of_search(table, "changed")
    finally:
        object.__setattr__(cnset, "parts", was)
