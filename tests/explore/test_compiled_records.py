"""A compiled module's function is a timer record as its source's is (session 13: the generators' modules whose
methods are timers, `model.sr.cluster`, `model.pf.node`, ..., are in the optional compiled build, where a function
is Cython's `cython_function_or_method`, not a `types.FunctionType`). `closure_in` judges it as a Python function
(a named one is a record; a lambda, a nested function or one holding closure cells is not), and the fingerprint
encodes it as its source's function. Without a build the type is stood in for by a class of that name with the
attributes Cython's functions have. Twins: a compiled nested function and one with closure cells are refused."""

from __future__ import annotations

import types
from typing import Any

import pytest

from conformance.explore.fingerprint import fingerprint
from model.kernel.sim import COMPILED_FUNCTION, closure_in

pytestmark = pytest.mark.unit


def _named() -> None:
    """The source of the stand-in compiled function."""


def _compiled(qualname: str, closure: Any = None) -> Any:
    """A stand-in for a compiled function: Cython's type name, and a function's code, closure and names."""
    cls = type(COMPILED_FUNCTION, (), {"__call__": lambda self, *args: None})
    fn = cls()
    fn.__code__, fn.__closure__, fn.__defaults__ = _named.__code__, closure, None
    fn.__qualname__, fn.__module__ = qualname, __name__
    return fn


def test_a_compiled_named_function_is_a_record_and_hashes_as_its_source() -> None:
    fn = _compiled("_named")
    assert closure_in(fn) == ""
    assert closure_in(types.MethodType(fn, object())) == ""
    assert fingerprint([fn]) == fingerprint([_named])


@pytest.mark.parametrize("qualname,closure", [("outer.<locals>.inner", None), ("<lambda>", None), ("_named", (1,))])
def test_twin_a_compiled_closure_is_refused(qualname: str, closure: Any) -> None:
    assert "is a closure" in closure_in(_compiled(qualname, closure))
