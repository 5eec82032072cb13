"""CNSet: compact range sets per originator behave exactly like Python sets of change numbers (PF-012)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.pf.cnset import CN, EMPTY, CNSet

cns = st.builds(CN, st.sampled_from(["a#0", "a#1", "b#0"]), st.integers(1, 40))
sets = st.frozensets(cns, max_size=30)


@pytest.mark.unit
@given(sets, sets)
def test_operations_match_python_sets(a: frozenset[CN], b: frozenset[CN]) -> None:
    x, y = CNSet.of(a), CNSet.of(b)
    assert set(x | y) == a | b
    assert set(x - y) == a - b
    assert set(x & y) == a & b
    assert len(x) == len(a)
    assert (x <= y) == (a <= b)
    assert (x < y) == (a < b)  # strict subset, the status request rule (PF-021)
    assert all((c in x) == (c in a) for c in a | b)
    # canonical results (equal sets compare equal, whatever the operation that built them)
    assert (x | y, x - y, x & y) == (CNSet.of(a | b), CNSet.of(a - b), CNSet.of(a & b))
    assert all(x.add(c) == CNSet.of(a | {c}) for c in b)


@pytest.mark.unit
@given(sets)
def test_text_form_round_trips(a: frozenset[CN]) -> None:
    x = CNSet.of(a)
    assert CNSet.decode(x.encode()) == x
    assert x == CNSet.of(list(a))  # canonical: equal sets compare equal


@pytest.mark.unit
def test_ranges_are_merged_and_printed_compactly() -> None:
    x = CNSet.of(CN("s#0", n) for n in (1, 2, 3, 5, 7, 8))
    assert x.encode() == ["s#0:1-3,5,7-8"]
    assert len(x.parts[0][1]) == 3
    assert not EMPTY and x > EMPTY and not x < x
    assert CN.parse("srv01#2:17") == CN("srv01#2", 17)
