"""An sr bound may name the choice points it branches on (issue 33): `choices = [labels]` in `spec/explore.toml`.

The named labels are branched on (each outcome a successor, recorded in the step's `choices`), every other choice
is drawn by the seed (`Simulator.branching`, `conformance.harness.choosing.scripted`), so a bound pays for the
choices it means to explore. A replay of a step re-imposes the recorded choices under the same labels and reaches
the same state. Twins: the same bound with every label on branches on labels outside the list; a list naming no
choice point of sr is refused naming the file, the bound and the field.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.explore.bfs import Explorer, _next_script
from conformance.explore.manifest import ManifestError, find, load
from model.sr import choice_points as C

NAME = "sr-2s-1m-crash"
LIST = (C.SHADOW_SERVER, C.HOP_SLOW, C.ACK_LOST)


def _labels(choices: bool | tuple[str, ...]) -> tuple[set[str], int]:
    """The labels branched on over the root's successors and their successors, and how many successors."""
    ex = Explorer(find(NAME).bound.with_(choices=choices))
    seen: set[str] = set()
    n = 0
    for _, _, child, _ in ex.successors(ex.root()):
        n += 1
        if child is None:
            continue
        for act in ex.space.actions(ex.restore(child), child.book, ex.bound):
            script: list[int] | None = []
            while script is not None:
                _, made = ex.apply(ex.restore(child), act, script)
                seen |= {label for label, _, _ in made}
                script = _next_script(made)
                n += 1
    return seen, n


@pytest.mark.model
def test_a_bound_branches_only_on_the_labels_it_names() -> None:
    named, n_named = _labels(LIST)
    assert named and named <= set(LIST)
    every, n_every = _labels(True)
    assert every - set(LIST), "twin: with every label on, other labels are branched on"
    assert n_named < n_every


@pytest.mark.model
def test_a_step_with_named_labels_replays_to_the_same_state() -> None:
    ex = Explorer(find(NAME).bound.with_(choices=LIST))
    root = ex.root()
    kids = [e for e in ex.successors(root) if e[2] is not None]
    for fp, step, child, _ in kids:
        assert ex.fingerprint(ex.replay([step]), child.book) == fp


@pytest.mark.unit
def test_a_label_list_is_checked(tmp_path: Path) -> None:
    text = Path("spec/explore.toml").read_text(encoding="utf-8")
    head = text.split("[[bound]]")[0]
    bad = tmp_path / "m.toml"
    bound = (
        '[[bound]]\nname = "x"\nmechanism = "sr"\nservers = 2\nmessages = 1\nfaults = 0\nkinds = []\ndepth = 1\n'
        'choices = ["sr.shadow-server", "sr.no-such-choice"]\n'
    )
    bad.write_text(head + bound, encoding="utf-8")
    with pytest.raises(ManifestError, match=r"bound\[0\] \(x\): field 'choices' names \['sr.no-such-choice'\]"):
        load(bad)
    bad.write_text(head + bound.replace('"sr"', '"am"').replace(', "sr.no-such-choice"', ""), encoding="utf-8")
    with pytest.raises(ManifestError, match="field 'choices' must be true or false"):
        load(bad)
