"""The kernel generator's state words in the fixed table (issue 33, session 24, `conformance.explore.fixed`): a
generator that has not drawn is pickled as a reference to the root's words (2.5 KB a blob no longer copies) and
thawed as a new generator holding them; one that drew is pickled whole. The same draws after a thaw either way.
Twin: a reducer that refers to the table whatever the generator's state gives a thawed generator that draws
otherwise than its original, and the test sees it."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.explore import fixed
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.explore.state import thaw
from model.kernel.sim import KernelRandom

BOUNDS = ["sr-2s-1m-crash", "am-3s-1db-crash-partition", "pf-2s-1f-replicas"]


def _rng(s: Any) -> KernelRandom:
    """The session's kernel generator (sr's and pf's simulator's, am's environment's)."""
    holder = s.system.env if hasattr(s.system, "env") else s.system.sim
    assert type(holder.rng) is KernelRandom
    return holder.rng


def _draws(rng: KernelRandom) -> list[float]:
    return [rng.random() for _ in range(5)]


@pytest.mark.model
@pytest.mark.parametrize("name", BOUNDS)
def test_a_blob_refers_to_the_roots_words_and_thaws_a_generator_of_its_own(name: str) -> None:
    """The table holds the root's words; a state's blob does not hold them (a blob made without the table does),
    and is that much smaller; thawed, its generator holds the table's very bytes, is a new object each time, and
    draws as the original would."""
    ex = Explorer(find(name).bound)
    node = ex.root()
    assert ex.fixed is not None and len(ex.fixed.words) == 1
    raw = ex.fixed.words[0][1]
    assert len(raw) == 2500 and raw not in node.blob
    alone = Explorer(find(name).bound)
    alone.share_fixed = False
    theirs = alone.root().blob
    assert raw in theirs and len(theirs) - len(node.blob) >= 2500
    one, two = ex.restore(node), ex.restore(node)
    assert _rng(one) is not _rng(two) and _rng(one).words[1] is raw and _rng(one).pending
    original = alone.restore(alone.root())
    assert _draws(_rng(one)) == _draws(_rng(original))
    child = next(c for _, _, c, _ in ex.successors(node) if c is not None)  # a state frozen from a thawed one
    assert child.blob is not None and raw not in child.blob


@pytest.mark.model
def test_a_generator_that_drew_is_pickled_whole_and_draws_on_alike() -> None:
    """A generator that drew holds no words: its state is pickled whole (the blob grows back by about 2.5 KB) and
    the thawed one draws what the original draws next."""
    ex = Explorer(find(BOUNDS[0]).bound)
    node = ex.root()
    s = ex.restore(node)
    _rng(s).random()
    assert _rng(s).words is None
    blob = ex.freeze(s)
    assert blob is not None and len(blob) > len(node.blob) + 2000
    copy = thaw(blob, ex.driver, ex.setup)
    assert _draws(_rng(copy)) == _draws(_rng(s))


def _always_the_table(self: fixed.FixedTable, reduce: Any) -> Any:
    """The twin's reducer: every generator as the table's words, whatever it holds."""
    tag = self.tag
    return lambda rng: (fixed._fixed_random, (tag, 0))


@pytest.mark.model
def test_twin_a_reducer_that_ignores_the_generators_state_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fixed.FixedTable, "_random_reducer", _always_the_table)
    ex = Explorer(find(BOUNDS[0]).bound)
    node = ex.root()
    s = ex.restore(node)
    _rng(s).random()
    copy = thaw(ex.freeze(s), ex.driver, ex.setup)
    assert _draws(_rng(copy)) != _draws(_rng(s))  # the check that the test above relies on, failing as planted
