"""What an exploration found and its figures (issues 22, 33): `Found` (a violation and the shortest path to it, a
replay file) and `Result` (states, transitions, levels, how states were restored, bytes per state), as
`conformance.explore.bfs.Explorer.run` and the Spark plan (`conformance.explore.levels`) report them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.harness.report import REPLAY_FORMAT, where_in_seed


@dataclass
class Found:
    """A violation and the shortest path to it."""

    kind: str  # "always" (judged on the path), "end" (at the path's fairness end) or "witness" (a refuted claim)
    rule: str
    requirement: str
    explanation: str
    steps: list[dict[str, Any]]
    start: tuple[int, ...] = ()  # the construction's choices of the path's root (`roots.py`; issue 33)
    ranges: str = "ends"  # the ranges those choices were made under
    end: tuple[int, ...] | None = None  # the fairness end's resolution it was found under (`ends.py`; None: seeded)

    @property
    def depth(self) -> int:
        return len(self.steps)


@dataclass
class Result:
    mechanism: str
    bound: str
    setup: dict[str, Any]
    states: int = 0
    transitions: int = 0
    depth: int = 0  # the deepest level with a new state
    complete: bool = True  # False when stopped by max_states
    found: Found | None = None
    seconds: float = 0.0
    replays: int = 0
    copies: int = 0  # states restored from a blob (issue 33)
    end_copies: int = 0  # copies made to judge a fairness end's later resolutions (`ends.py`, session 13)
    restore: str = "copy"  # "copy", or "replay" (with `why`): the model's state could not be copied
    why: str = ""
    merges: int = 0  # named states merged into another by the symmetry reduction
    seen_bytes: int = 0  # the visited fingerprints' set
    frontier_bytes: int = 0  # the frontier's largest size (its blobs and path steps)
    per_level: list[int] = field(default_factory=list)

    @property
    def bytes_per_state(self) -> float:
        return (self.seen_bytes + self.frontier_bytes) / self.states if self.states else 0.0

    @property
    def result(self) -> str:
        return "violation" if self.found else "clean"

    def replay_file(self, mutant: str | None = None) -> dict[str, Any]:
        f = self.found
        assert f is not None
        # the root's construction choices (`conformance.harness.choosing.construction_of` re-imposes them)
        built = {"construction": {"choices": list(f.start), "ranges": f.ranges}} if f.start else {}
        if f.end is not None:  # the end's resolution (`conformance.harness.core.replay_steps(..., end=...)`)
            built["end"] = {"choices": list(f.end), "ranges": f.ranges}
        return {
            **built,
            "format": REPLAY_FORMAT,
            "mechanism": self.mechanism,
            "sut": None,
            "seed": self.setup.get("seed"),
            "setup": self.setup,
            "steps": f.steps,
            "violations": [{"rule": f.rule, "requirement": f.requirement, "explanation": f.explanation}],
            "problem": "" if f.kind == "always" else "found at the fairness end of the path",
            "found_by": {"explore": self.bound, "depth": f.depth, "kind": f.kind, "mutant": mutant},
            "seed_section": where_in_seed(f.requirement) if f.requirement else "",
        }

    def to_json(self) -> dict[str, Any]:
        f = self.found
        return {
            "mechanism": self.mechanism,
            "bound": self.bound,
            "states": self.states,
            "transitions": self.transitions,
            "depth": self.depth,
            "complete": self.complete,
            "result": self.result,
            "violation": None
            if f is None
            else {
                "rule": f.rule,
                "requirement": f.requirement,
                "kind": f.kind,
                "depth": f.depth,
                "explanation": f.explanation,
            },
            "seconds": round(self.seconds, 3),
            "replays": self.replays,
            "copies": self.copies,
            "end_copies": self.end_copies,
            "restore": self.restore,
            "restore_why": self.why,
            "merges": self.merges,
            "bytes_per_state": round(self.bytes_per_state, 1),
            "seen_bytes": self.seen_bytes,
            "frontier_bytes": self.frontier_bytes,
            "states_per_level": self.per_level,
        }
