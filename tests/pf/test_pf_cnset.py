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
    assert (x >= y, x > y, x.intersects(y)) == (a >= b, a > b, bool(a & b))
    assert x <= x | y and (x < x | y) == (not b <= a)  # a subset sharing most of its ranges
    assert CNSet.of(sorted(a)) == x  # runs of counters built in order, as from a message's changes
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


@pytest.mark.unit
def test_a_subset_holds_each_range_whole() -> None:
    """`<=` and `<` walk the ranges (nothing built): a range is covered only by one range holding it whole."""

    def of(*ns: int) -> CNSet:
        return CNSet.of(CN("a#0", n) for n in ns)

    gappy = of(1, 2, 3, 5, 6)
    assert of(5, 6) <= gappy and of(1, 2) < gappy and of(2, 3, 5) < gappy
    assert not of(1, 2, 3, 4) <= gappy and not of(3, 4, 5) <= gappy and not of(6, 7) <= gappy
    assert not of(1, 2, 3, 4, 5, 6) <= gappy and gappy < of(1, 2, 3, 4, 5, 6) and not gappy < gappy
    assert not of(1) <= CNSet.of([CN("b#0", 1)]) and not of(1).intersects(CNSet.of([CN("b#0", 1)]))


@pytest.mark.unit
def test_texts_are_the_change_numbers_as_text() -> None:
    """`CNSet.texts` (issue 32, session 16) gives what `str` gives of each CN the set holds, in order; twin: a
    set with one more change number gives one more text."""
    s = CNSet.decode(["srv01#0:1-3,7", "srv02#1:5"])
    assert s.texts() == [str(cn) for cn in s] == ["srv01#0:1", "srv01#0:2", "srv01#0:3", "srv01#0:7", "srv02#1:5"]
    assert CNSet().texts() == []
    more = s | CNSet.decode(["srv02#1:9"])
    assert more.texts() != s.texts() and more.texts()[-1] == "srv02#1:9"
