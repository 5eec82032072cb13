"""Breadth-first exploration of every state the reference model reaches within a bound (issue 22).

The shape of TLC's and stateright's checkers over the model behind the harness's protocol: a state is the
model system after a path of harness steps (`conformance.explore.spaces`), identified by its canonical
fingerprint (`conformance.explore.fingerprint`, over the system and the explorer's bookkeeping, not the
recorded trace). A state is restored by replaying its path on a fresh system (the model is deterministic
for one setup; `deepcopy` cannot copy its timers). In BFS order:

- every transition's path is judged by the mechanism's monitor (`Session.judge`, the folds of
  `haconform check`): the `always` rules, on the shortest path to the source state plus the step. A
  transition into a state already seen is judged too (so every edge is judged once, with one history);
- where the driver's end-of-run checks are safety (am: one PAM, one mounted copy) they are checked in every
  state, with the mechanism's state-level safety rules (am: `model.am.properties.check_world`);
- the `eventually` rules on every new state's fairness end (`Driver.finish`: the fairness the mechanism's
  README states, e.g. every server restarted, the network healed and the quiet tail for sr; the
  convergence wait for pf), with the driver's end checks (pf's PF-035 convergence). sr and pf: virtual
  time is part of the state and only grows, so the explored graph has no cycles: every state is a possible
  end. am has no time (cycles are states seen again) and no liveness rule judged under arbitrary faults.

The first violation found is at the smallest depth (BFS); its path is a replay file (`replay_file`).
"""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from conformance.explore.fingerprint import fingerprint
from conformance.explore.spaces import EMPTY, SPACES, Action, Book, Bound, BoundError, Space
from conformance.explore.witness import Witness
from conformance.harness.core import Session, Step, SystemFactory
from conformance.harness.report import REPLAY_FORMAT, where_in_seed
from conformance.harness.search import driver


@dataclass
class Found:
    """A violation and the shortest path to it."""

    kind: str  # "always" (judged on the path), "end" (at the path's fairness end) or "witness" (a refuted claim)
    rule: str
    requirement: str
    explanation: str
    steps: list[dict[str, Any]]

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
    per_level: list[int] = field(default_factory=list)

    @property
    def result(self) -> str:
        return "violation" if self.found else "clean"

    def replay_file(self, mutant: str | None = None) -> dict[str, Any]:
        f = self.found
        assert f is not None
        return {
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
            "states_per_level": self.per_level,
        }


class Explorer:
    """One exploration: a mechanism's space under a bound, against the model or one of its mutants."""

    def __init__(
        self, bound: Bound, mutant: str | None = None, watch: frozenset[str] | None = None, goal: Witness | None = None
    ) -> None:
        self.bound, self.mutant, self.watch, self.goal = bound, mutant, watch, goal
        self.space: Space = SPACES[bound.mechanism]
        self.driver = driver(bound.mechanism)
        self.factory: SystemFactory = self.driver.model_factory(mutant)
        self.setup = self.space.setup(bound)
        self.result = Result(bound.mechanism, bound.name, self.setup)
        self.renames: list[dict[str, str]] = []

    # --- states ------------------------------------------------------------------------------------------
    def replay(self, steps: list[dict[str, Any]]) -> Session:
        self.result.replays += 1
        s = Session(self.driver, self.factory(dict(self.setup)), dict(self.setup))
        self.driver.absorb(s, "__init__", None)
        for raw in steps:
            s.steps.append(Step(raw["op"], raw["calls"]))
            for call in raw["calls"]:
                s.apply(call)
        return s

    def fingerprint(self, s: Session, book: Book) -> str:
        roots = self.space.roots(s, book)
        if not self.renames:
            return fingerprint(roots)
        return min(fingerprint(roots, r) for r in self.renames)

    def judge(self, s: Session, steps: list[dict[str, Any]], end: bool) -> Found | None:
        violations, _ = s.judge(final=True)
        if self.watch is not None:
            violations = [v for v in violations if v.rule in self.watch]
        if violations:
            v = violations[0]
            return Found("end" if end else "always", v.rule, v.requirement, v.explanation, list(steps))
        for rule, req, text in self.space.invariants(s) if self.space.invariants else ():
            if self.watch is None or rule in self.watch:
                return Found("end" if end else "always", rule, req, text, list(steps))
        if end or self.space.always_end_checks:
            for p in self.driver.end_checks(s):
                req, _, rule = p[1 : p.index("]")].partition(" ") if p.startswith("[") else ("", "", "end-check")
                if self.watch is None or rule in self.watch:
                    return Found("end" if end else "always", rule, req, p, list(steps))
        return None

    # --- the search --------------------------------------------------------------------------------------
    def symmetric(self, names: list[str]) -> None:
        """Symmetry reduction: a state and its images under every permutation of `names` are one state."""
        self.renames = [dict(zip(names, p, strict=True)) for p in itertools.permutations(names)]

    def run(self, max_states: int | None = None, ends: bool = True, deadline: float | None = None) -> Result:
        """Explore; stop (incomplete) after `max_states` distinct states or at `deadline` (time.monotonic())."""
        started = time.monotonic()
        res = self.result
        root = self.replay([])
        paths: list[tuple[int, dict[str, Any] | None]] = [(-1, None)]
        books: list[Book] = [EMPTY]
        seen = {self.fingerprint(root, EMPTY): 0}
        res.states, res.per_level = 1, [1]
        res.found = self.judge(root, [], False) or (self.end(self.replay([]), []) if ends else None)
        frontier: deque[tuple[int, int]] = deque([(0, 0)])
        while frontier and res.found is None and res.complete:
            idx, depth = frontier.popleft()
            if depth >= self.bound.depth:
                continue
            steps = self.path(paths, idx)
            here = self.replay(steps)
            for act in self.space.actions(here, books[idx], self.bound):
                res.transitions += 1
                res.found = self.expand(steps, act, depth, paths, books, seen, frontier, idx, ends)
                if res.found is not None:
                    break
                if (max_states is not None and res.states >= max_states) or (
                    deadline is not None and time.monotonic() > deadline
                ):
                    res.complete = False
                    break
        res.seconds = time.monotonic() - started
        return res

    def expand(
        self,
        steps: list[dict[str, Any]],
        act: Action,
        depth: int,
        paths: list[tuple[int, dict[str, Any] | None]],
        books: list[Book],
        seen: dict[str, int],
        frontier: deque[tuple[int, int]],
        parent: int,
        ends: bool,
    ) -> Found | None:
        longer = [*steps, act.step()]
        s = self.replay(longer)
        found = self.judge(s, longer, False)
        if found is not None:
            return found
        g = self.goal
        if g is not None and g.shown(s.events()):
            why = f"the model shows a behaviour against: {g.statement}"
            return Found("witness", g.claim, g.requirement, why, longer)
        fp = self.fingerprint(s, act.book)
        if fp in seen:
            return None
        seen[fp] = len(paths)
        frontier.append((len(paths), depth + 1))
        paths.append((parent, act.step()))
        books.append(act.book)
        res = self.result
        res.states += 1
        res.depth = max(res.depth, depth + 1)
        if len(res.per_level) <= depth + 1:
            res.per_level.append(0)
        res.per_level[depth + 1] += 1
        return self.end(s, longer) if ends else None

    def end(self, s: Session, steps: list[dict[str, Any]]) -> Found | None:
        """The state's fairness end, judged (the session goes on past the state: call it last)."""
        for call in self.driver.finish(s):
            s.apply(call)
        return self.judge(s, steps, True)

    @staticmethod
    def path(paths: list[tuple[int, dict[str, Any] | None]], idx: int) -> list[dict[str, Any]]:
        out = []
        while idx > 0:
            idx, step = paths[idx]
            out.append(step)
        return out[::-1]


def explore(
    bound: Bound,
    mutant: str | None = None,
    watch: frozenset[str] | None = None,
    max_states: int | None = None,
    ends: bool = True,
    goal: Witness | None = None,
) -> Result:
    """Explore `bound` against the model (or `mutant`); `watch`: only these rules count as violations; `goal`: stop
    at the first state whose trace shows a refuted claim's counterexample (`conformance.explore.witness`)."""
    ex = Explorer(bound, mutant, watch, goal)
    if bound.symmetry:
        ex.symmetric(symmetric_servers(bound, ex.setup))
    return ex.run(max_states, ends)


def symmetric_servers(bound: Bound, setup: dict[str, Any]) -> list[str]:
    """The servers a bound declares interchangeable (am: the DAG members, every database on each)."""
    if bound.mechanism == "am":
        return list(setup["members"])
    raise BoundError(
        f"{bound.name}: field 'symmetry': {bound.mechanism} has no symmetry reduction (servers are not "
        "interchangeable in its model: conformance/explore/README.md)"
    )
