"""Several roots: the construction's choices branched on (issue 33, "every allowed choice explored"; session 13).

Building a system draws choices too (sr: each server's first heartbeat, `sr.heartbeat-phase`; am: the first PAM's
holder, `am.pam-holder`; pf: each store's first replication timers, `pf.phase.*`, and the mail sent at start,
`net.*`). With choice points on (`Bound.choices`) and `Bound.construction` (the default), the explorer builds the
system once per resolution of those choices, in the lexicographic order of an odometer over them
(`model.kernel.choice.next_resolution`), each under a scripted chooser that takes the first outcome of every choice
its script leaves open (`conformance.harness.choosing.built`); every distinct state so built is a root, and the roots
form level 0, each with its own fingerprint (with symmetry, equivalent roots are one state). A root's choices are
its `Node.start` and its session's `start`; every state reached from it inherits them, a violation found there
carries them (`Found.start`) and its replay file records them as `construction` (`{"choices": [...], "ranges":
...}`), which `haconform replay` re-imposes (`conformance.harness.choosing.construction_of`: a model that makes more or
fewer choices than recorded fails naming the field).

With `choices = false`, or `construction = false`, the construction is drawn by the seed: one root, as before.
For sr with a label list, only the listed labels are branched at construction (the others drawn by the seed, as
in the steps).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from conformance.explore.result import Found
from conformance.explore.spaces import EMPTY
from conformance.explore.state import Node
from conformance.harness.choosing import built
from conformance.harness.core import Session
from model.kernel.choice import next_resolution

Made = list[tuple[str, int, int]]  # the choices a chooser took: (label, outcome index, outcomes)


def branched(ex: Any) -> bool:
    """Whether the bound branches on the construction's choices (choice points on and `construction`; `ex`: the
    `conformance.explore.bfs.Explorer`, not imported: it imports this module)."""
    return bool(ex.choices) and ex.bound.construction


def construct(ex: Any, script: Sequence[int] = ()) -> tuple[Session, Made]:
    """A fresh session of the bound's setup (the system built, the driver told of its start), its construction's
    choices taken by `script` and then each at its first outcome (`branched`), else drawn by the seed; and the
    choices made (their indices are the session's `start`)."""
    s = Session(ex.driver, None, dict(ex.setup))

    def build() -> Any:
        s.system = ex.factory(dict(ex.setup))
        ex.driver.absorb(s, "__init__", None)
        return s.system

    if not branched(ex):
        build()
        return s, []
    only = ex.bound.choices if isinstance(ex.bound.choices, tuple) else None
    _, chooser = built(build, script, ex.ranges, only, extend=True)
    s.start = tuple(k for _, k, _ in chooser.made)
    return s, list(chooser.made)


def level_zero(ex: Any, ends: bool) -> tuple[list[tuple[str, Node]], Found | None]:
    """The distinct roots in odometer order with their fingerprints, each judged as `Explorer.root` judges the one
    root (its `always` rules, then its fairness end when `ends`), up to the first with a violation (returned)."""
    out: list[tuple[str, Node]] = []
    met: set[str] = set()
    script: list[int] | None = []
    while script is not None:
        s, made = construct(ex, script)
        script = next_resolution(made)
        fp = ex.fingerprint(s, EMPTY)
        if fp in met:
            continue
        met.add(fp)
        found = ex.judge(s, (), False)
        node = Node((), (), EMPTY, ex.freeze(s), s, s.start)
        out.append((fp, node))
        if found is None and ends:
            found = ex.end_of(node)
        node.live = None
        if found is not None:
            return out, found
    return out, None
