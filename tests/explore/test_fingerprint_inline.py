"""The walker puts an int, a bool and None inline in sequences, dicts and objects (issue 33, session 17: sr's states
hold about 73 ints and 28 bools each; session 16 put strings so) with the very tokens `Walker.walk` puts, so that
no fingerprint and no pinned count changes.

The reference is the walker's own path under a renaming that renames nothing: with a pattern every element goes
through `walk` (nothing is inline). Compared on values holding every inline kind in every container (a list, a
tuple, a dict's keys and values, a plain object, a slotted record, a frozen dataclass), on an int subclass and a
bool (which must not be put as an int), and on explored states of sr, am and pf.

Twins: bools inlined as ints (the `isinstance(x, int)` mistake: `True` is an int) and None inlined under another
name each give other tokens, and are caught.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import pytest

from conformance.explore import fingerprint as fp_module
from conformance.explore.bfs import Explorer
from conformance.explore.fingerprint import Walker
from conformance.explore.manifest import load

NOTHING = {"\x00renames-nothing": "\x00renames-nothing"}  # a pattern: every element walked, none inline


class Level(IntEnum):
    LOW = 1


class Plain:
    def __init__(self, **kw: object) -> None:
        self.__dict__.update(kw)


class Slotted:
    __slots__ = ("a", "b", "c", "d")

    def __init__(self, a: object, b: object, c: object, d: object) -> None:
        self.a, self.b, self.c, self.d = a, b, c, d


@dataclass(frozen=True)
class Frozen:
    n: int
    flag: bool
    none: None
    name: str


def values() -> list[Any]:
    atoms = [0, -3, 2**70, True, False, None, "s", Level.LOW, 1.5]
    return [
        list(atoms),
        tuple(atoms),
        {0: True, 7: None, "k": -1, True: 2, None: False, Level.LOW: 3},
        Plain(a=1, b=True, c=None, d="x", e=Level.LOW, f=[1, False]),
        Slotted(5, False, None, Level.LOW),
        Frozen(3, True, None, "MBX01"),
        [Frozen(4, False, None, "x"), {"n": [0, 1, (True, None)]}],
    ]


def tokens(roots: list[Any], rename: dict[str, str] | None = None) -> list[str]:
    w = Walker(rename)
    for root in roots:
        w.walk(root)
    return w.tokens


def test_inline_atoms_put_the_tokens_walk_puts() -> None:
    assert tokens(values()) == tokens(values(), NOTHING)


@pytest.mark.parametrize("bound", ["sr-2s-1m-crash", "am-3s-1db-crash-partition", "pf-2s-1f-replicas"])
def test_explored_states_put_the_same_tokens(bound: str) -> None:
    entry = next(e for e in load()[0] if e.bound.name == bound)
    ex = Explorer(entry.bound)
    node, met = ex.root(), 0
    for _ in range(3):
        children = [child for _, _, child, _ in ex.successors(node) if child is not None]
        for child in children:
            s = ex.restore(child)
            roots = ex.space.roots(s, child.book)
            assert tokens(roots) == tokens(roots, NOTHING)
            met += 1
        node = children[len(children) // 2]
    assert met >= 5


@pytest.mark.parametrize(
    "table", [("_BOOL", {False: "int:0", True: "int:1"}), ("_NONE", "None")], ids=["bool-as-int", "none"]
)
def test_twin_a_wrong_inline_token_is_caught(monkeypatch, table: tuple[str, Any]) -> None:
    monkeypatch.setattr(fp_module, *table)
    assert tokens(values()) != tokens(values(), NOTHING)
