"""Builders shared by the Active Manager tests: snapshots, health, a scripted environment."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field
from typing import Any

from model.am.state import COMPONENTS, CopyState, Health, Snapshot
from model.kernel.choice import ChoiceNeeded, ScriptedChooser

LGEN = 100


def copy(
    server: str, *, cq: int = 0, rq: int = 0, ci: str = "Healthy", pref: int = 2, status: str = "Healthy", **kw: object
) -> CopyState:
    return CopyState(server, status=status, lli=LGEN - cq, replay_queue=rq, content_index=ci, preference=pref, **kw)  # type: ignore[arg-type]


def health(**states: str) -> Health:
    h = Health.uniform()
    for comp, state in states.items():
        h = h.set(comp, state)
    return h


def snap(
    *copies: CopyState,
    dials: Mapping[str, str] | None = None,
    healths: Mapping[str, Health] | None = None,
    source: str = "SRC",
) -> Snapshot:
    all_copies = (CopyState(source, status="Failed", lli=LGEN, preference=1), *copies)
    servers = [c.server for c in all_copies]
    return Snapshot(
        "DB1",
        source,
        LGEN,
        all_copies,
        {s: (dials or {}).get(s, "GoodAvailability") for s in servers},
        {s: (healths or {}).get(s, Health.uniform()) for s in servers},
    )


@dataclass
class ScriptEnv:
    """A deterministic environment: mounts fail on the listed servers, ACLL reaches `acll_to`."""

    fail_mount: set[str] = field(default_factory=set)
    acll_short: int = 0
    picks: list[str] = field(default_factory=list)

    def choose(self, options: Sequence[str]) -> str:
        for p in self.picks:
            if p in options:
                return p
        return sorted(options)[0]

    def mount_ok(self, db: str, server: str) -> bool:
        return server not in self.fail_mount

    def source_last_log(self, db: str, lgen: int) -> int:
        return max(0, lgen - self.acll_short)


COMPONENT_NAMES = [c for c, _ in COMPONENTS]


def resolutions(root: Any, act: Callable[[Any], list]) -> list[tuple[list, Any, list]]:
    """Every resolution of the choices `act` meets, as the explorer finds them: each branch applies `act` to a
    fresh copy of `root` under a script, extended on `ChoiceNeeded` by each allowed outcome.
    Returns (choices made, the system after, the events) per complete script."""
    done, todo = [], [[]]
    while todo:
        script = todo.pop(0)
        s = deepcopy(root)
        chooser = ScriptedChooser(list(script))
        s.env.choices = chooser
        try:
            outs = act(s)
        except ChoiceNeeded as e:
            todo += [[*script, i] for i in range(len(e.outcomes))]
            continue
        done.append((chooser.made, s, outs))
    return done
