"""The kernel's generator keeps its state words while nothing drew (issue 33, session 14, `model.kernel.sim.
KernelRandom`): a copied generator is rebuilt from them without setting them, and pickled and fingerprinted from
them. It draws as `random.Random` with the same seed, a copy draws as its original, and a draw changes its
fingerprint. Twin: a generator that keeps its words after a draw hashes a drawn state as the undrawn one."""

from __future__ import annotations

import random
from array import array

import pytest

from conformance.explore.fingerprint import fingerprint
from conformance.explore.state import _dispatch
from model.kernel.sim import KernelRandom


def _copy(rng: random.Random) -> random.Random:
    """The rng as a blob copies it (the state's reducer)."""
    make, args = _dispatch()[type(rng)](rng)
    return make(*args)


def _draws(rng: random.Random) -> list[object]:
    return [rng.random(), rng.randint(1, 10**12), rng.choice("abcdefgh"), rng.gauss(0, 1), rng.getrandbits(70)]


@pytest.mark.unit
def test_the_kernel_generator_draws_as_random_random() -> None:
    assert _draws(KernelRandom(7)) == _draws(random.Random(7))
    rng = KernelRandom(7)
    rng.seed(9)
    assert _draws(rng) == _draws(random.Random(9))


@pytest.mark.unit
def test_a_copy_draws_as_its_original_and_a_draw_changes_its_fingerprint() -> None:
    rng = KernelRandom(3)
    _draws(rng)
    copy = _copy(rng)
    assert isinstance(copy, KernelRandom) and copy.pending and copy.words is not None
    assert fingerprint([copy]) == fingerprint([rng])
    again = _copy(copy)  # a copy of a copy that never drew: from the same words, still not set
    assert again.pending and fingerprint([again]) == fingerprint([rng])
    assert copy.getstate() == rng.getstate()
    assert _draws(copy) == _draws(rng)
    assert not copy.pending and copy.words is None
    assert fingerprint([copy]) == fingerprint([rng])
    rng.gauss()
    assert rng.gauss_next is not None  # a pending gauss value, part of the state: read first by `gauss`
    pending = _copy(rng)
    assert [pending.gauss(), pending.random(), pending.gauss()] == [rng.gauss(), rng.random(), rng.gauss()]
    undrawn = _copy(rng)
    before = fingerprint([undrawn])
    undrawn.random()
    assert fingerprint([undrawn]) != before


class _Stale(KernelRandom):
    """The twin: sets its words at its first draw but keeps them as its state."""

    def random(self) -> float:
        if self.pending:
            version, words, gauss = self.words  # type: ignore[misc]
            random.Random.setstate(self, (version, tuple(array("I", words)), gauss))
            self.pending = False
        return random.Random.random(self)


@pytest.mark.unit
def test_twin_a_generator_keeping_its_words_after_a_draw_hashes_as_undrawn() -> None:
    version, words, gauss = _Stale(3).getstate()
    stale = _Stale.thawed(version, array("I", words).tobytes(), gauss)
    before = fingerprint([stale])
    stale.random()
    assert fingerprint([stale]) == before  # the drawn state hashes as the undrawn one: what the guard prevents
