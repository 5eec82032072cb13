"""The corpus-wide duplicate-ID check's kernel (`traces.dataset.repeated_hashes`, TR-002): exactly the
hashes that occur more than once, over the whole uint64 range, compared with a plain count; both of its ways
(a set for a few hashes when numpy is not loaded, numpy's sort otherwise: issue 32, session 15)."""

from __future__ import annotations

from array import array
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from traces.dataset import repeated_hashes, repeated_in_set, repeated_sorted

HASH = st.one_of(st.integers(0, 40), st.integers(0, 2**64 - 1), st.sampled_from([0, 2**63, 2**64 - 1]))


@pytest.mark.unit
@given(st.lists(HASH, max_size=300))
def test_exactly_the_repeated_hashes(values):
    want = {h for h, n in Counter(values).items() if n > 1}
    assert repeated_hashes(array("Q", values)) == want
    assert repeated_in_set(array("Q", values)) == want == repeated_sorted(array("Q", values))


@pytest.mark.unit
def test_none_repeated_and_empty():
    assert repeated_hashes(array("Q")) == set()
    assert repeated_hashes(array("Q", range(1000))) == set()
    assert repeated_hashes(array("Q", [2**64 - 1, 3, 2**64 - 1, 3, 3])) == {3, 2**64 - 1}
