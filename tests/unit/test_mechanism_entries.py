"""A mechanism's generator and mutants load on first use (issue 32, session 14: a check runs monitors only):
`model.kernel.mechanism.Deferred` and `DeferredTable` in every registry entry stand for the functions they
load: the same function (`__wrapped__`), signature (read by `haconform simulate` for its options), mutants by
name, and a pickle that loads it again; a misspelt name fails here, as every entry is loaded. Twin: a table
naming another mechanism's mutants differs."""

from __future__ import annotations

import importlib
import inspect
import pickle

import pytest

from model.kernel.mechanism import Deferred, DeferredTable
from model.registry import get, mechanisms

pytestmark = pytest.mark.unit

SOURCES = {  # entry -> (module of its generator and mutants, the generator, the mutants' table)
    "net": ("model.kernel.workload", "model.kernel.workload", lambda m: m.MUTANTS),
    "sr": ("model.sr.sim", "model.sr.mutants", lambda m: m.simulators()),
    "am": ("model.am.sim", "model.am.mutants", lambda m: m.SIMULATORS),
    "pf": ("model.pf.sim", "model.pf.mutants", lambda m: m.MUTANTS),
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_an_entry_stands_for_the_functions_it_loads(name):
    spec = get(name)
    sim, mutants, table = SOURCES[name]
    want = importlib.import_module(sim).simulate
    assert isinstance(spec.simulate, Deferred) and isinstance(spec.mutants, DeferredTable)
    assert spec.simulate.__wrapped__ is want
    assert inspect.signature(spec.simulate) == inspect.signature(want)
    assert dict(spec.mutants) == dict(table(importlib.import_module(mutants))) and len(spec.mutants) > 0
    again = pickle.loads(pickle.dumps(spec.simulate))
    assert again == spec.simulate and again.__wrapped__ is want


def test_a_deferred_call_is_the_loaded_function_s_call():
    net, workload = get("net"), importlib.import_module("model.kernel.workload")
    assert [e.to_json() for e in net.simulate(1)] == [e.to_json() for e in workload.simulate(1)]
    mutant = next(iter(net.mutants))
    assert [e.to_json() for e in net.mutants[mutant](1)] == [e.to_json() for e in workload.MUTANTS[mutant](1)]


def test_twin_a_table_of_another_mechanism_s_mutants_differs():
    other = DeferredTable("model.pf.mutants", "MUTANTS")
    assert set(other) != set(mechanisms()["sr"].mutants)
    assert Deferred("model.pf.sim", "simulate") != mechanisms()["sr"].simulate
