"""What exploration still leaves to the seed (issue 33): the choices drawn while a system is built and in its
fairness end, pinned per mechanism.

With choice points on, a step's choices are branched on (`ExtendingChooser`), and since session 13 the
construction's too (one root per resolution, `conformance/explore/roots.py`; a bound with `construction = false`
keeps the seeded one), and the fairness end's first `end_choices` resolutions (`conformance/explore/ends.py`; 0:
seeded). Three places may still draw from the seeded generator (`conformance/explore/README.md`,
"Choice points"): the root's construction where a bound says so (`Explorer.fresh`),
the fairness end (`Explorer.end_of`: the driver's `finish()` calls) and the throwaway probe that finds how far a
`tick` goes (`spaces.time_steps`; the tick itself is then applied scripted). This test lists the labels each
draws on the default bounds and pins them, so that a new seeded choice cannot slip in unnoticed: it fails naming
the label and where it was drawn. Twin: a model that draws one more choice at construction is caught.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

import conformance.explore.spaces as spaces
from conformance.explore.bfs import Explorer
from conformance.explore.manifest import find
from conformance.harness.choosing import chooser_host
from model.kernel.choice import SeededChooser

PHASES = ("pf.phase.backfill", "pf.phase.content", "pf.phase.hierarchy")
NET = ("net.duplicate", "net.latency", "net.lost")
# bound -> phase -> the labels the seed decides there (README "Choice points": why each is not branched on)
PINNED: dict[str, dict[str, set[str]]] = {
    "sr-2s-1m-choices": {
        "build": set(),  # session 13: one root per resolution of the construction's choices (`explore/roots.py`)
        "end": set(),  # session 13: the end's first resolutions, scripted (`explore/ends.py`, `end_choices`)
        "probe": set(),
    },
    "am-3s-1db-crash-partition": {"build": set(), "end": set(), "probe": set()},
    "pf-2s-1f-roots": {"build": set(), "end": set(), "probe": set()},
    # `construction = false` (cost, spec/explore.toml): the seed builds it, as every bound did before session 13
    "pf-2s-1f-replicas": {"build": {*PHASES, *NET}, "end": set(), "probe": set()},
    # `end_choices = 0`: the end drawn by the seed, as before session 13
    "pf-2s-1f-replicas/seeded-end": {"build": {*PHASES, *NET}, "end": {*PHASES, *NET}, "probe": set()},
}


@contextmanager
def _watched(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[list[str], dict[str, set[str]]]]:
    """Every seeded draw, by the phase it happens in (`phase[-1]`)."""
    phase, drawn = ["steps"], {"build": set(), "end": set(), "probe": set(), "steps": set()}

    def wrap(name: str) -> None:
        inner = getattr(SeededChooser, name)

        def seeded(self: SeededChooser, label: str, *args: Any) -> Any:
            drawn[phase[-1]].add(label)
            return inner(self, label, *args)

        monkeypatch.setattr(SeededChooser, name, seeded)

    for name in ("randint", "chance", "pick"):
        wrap(name)

    def during(where: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any, **kw: Any) -> Any:
            phase.append(where)
            try:
                return fn(*args, **kw)
            finally:
                phase.pop()

        return run

    monkeypatch.setattr(Explorer, "fresh", during("build", Explorer.fresh))
    monkeypatch.setattr(Explorer, "end_of", during("end", Explorer.end_of))
    monkeypatch.setattr(spaces, "time_steps", during("probe", spaces.time_steps))
    yield phase, drawn


def _inventory(name: str, monkeypatch: pytest.MonkeyPatch, extra: Callable[[Any], None] | None = None) -> dict:
    """The labels the seed decides on bound `name`: the root built, its successors (depth 1) and their ends."""
    base, _, variant = name.partition("/")
    bound = find(base).bound
    ex = Explorer(bound.with_(end_choices=0) if variant == "seeded-end" else bound)
    if extra is not None:
        factory = ex.factory

        def built(setup: dict[str, Any]) -> Any:
            system = factory(setup)
            extra(system)
            return system

        ex.factory = built
    with _watched(monkeypatch) as (_, drawn):
        root = ex.root()
        ex.end_of(ex.root())
        for _, _, child, _ in ex.successors(root):
            if child is not None:
                ex.end_of(child)
    assert not drawn["steps"], f"a step drew from the seed with choice points on: {sorted(drawn['steps'])}"
    return {k: v for k, v in drawn.items() if k != "steps"}


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(PINNED))
def test_what_the_seed_still_decides_is_pinned(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    got = _inventory(name, monkeypatch)
    for where, want in PINNED[name].items():
        assert got[where] == want, f"{name}: seeded choices in {where}: {sorted(got[where])}, pinned {sorted(want)}"


@pytest.mark.model
def test_twin_a_new_seeded_choice_at_construction_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def one_more(system: Any) -> None:
        chooser_host(system).choices.chance("test.only", 0.5)

    got = _inventory("pf-2s-1f-replicas", monkeypatch, one_more)
    assert got["build"] != PINNED["pf-2s-1f-replicas"]["build"]
    assert "test.only" in got["build"]
