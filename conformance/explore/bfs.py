"""Breadth-first exploration of every state the reference model reaches within a bound (issue 22).

The shape of TLC's and stateright's checkers over the model behind the harness's protocol: a state is the
model system after a path of harness steps (`conformance.explore.spaces`), identified by its canonical
fingerprint (`conformance.explore.fingerprint`, over the system and the explorer's bookkeeping, not the
recorded trace). Issue 33: a state is expanded by copying it (`conformance.explore.state`: a pickle round trip
of the session, the monitor's fold included), never by replaying its path. The kernel refuses closure timers
(`Simulator.strict_timers`, on by default); a kernel with it turned off whose queue holds one cannot be copied,
and is then restored by replay (`Result.restore` says which; the replay path is also the reference the copy is
tested against). Only the fingerprints
of visited states are kept, plus the frontier's blobs (`Result.bytes_per_state`). A step that meets one of
the model's random choices (`model.kernel.choice`) is a choice point: each allowed outcome is its own
successor, and the step records the outcomes taken (`"choices"`). In BFS order:

- every transition is judged by the mechanism's monitor (`Session.judge`, the folds of `haconform check`):
  the `always` rules, from the source state's saved fold fed only the step's new events (the history is
  the shortest path to the source state). A transition into a state already seen is judged too (so every
  edge is judged once, with one history);
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
from collections.abc import Collection, Sequence
from typing import Any

from conformance.explore.edges import edge_verdict
from conformance.explore.ends import judged_ends
from conformance.explore.fingerprint import fingerprint
from conformance.explore.fixed import FixedTable
from conformance.explore.result import Found, Result
from conformance.explore.roots import construct
from conformance.explore.single import search
from conformance.explore.spaces import EMPTY, NO_TICK, SPACES, Action, Book, Bound, Space, symmetric_servers
from conformance.explore.state import (
    Node,
    NotCopyable,
    check_fold,
    feed_folds,
    fixed_table,
    forget_fed,
    forget_globals,
    freeze,
    plain,
    release,
    thaw,
)
from conformance.explore.witness import Witness
from conformance.harness.choosing import chooser_host, scripted
from conformance.harness.core import Session, Step, SystemFactory
from conformance.harness.search import driver
from model.kernel.choice import CountingChooser
from model.kernel.choice import next_resolution as _next_script

Edge = tuple[str, dict[str, Any], Node | None, Found | None]  # (fingerprint, step, new child, violation)


def _released(here: Session, edges: list[Edge]) -> list[Edge]:
    """`successors`' edges, the source's own copy released (`state.release`) unless a child's state is it."""
    if not any(child is not None and child.live is here for _, _, child, _ in edges):
        release(here)
    return edges


class Explorer:
    """One exploration: a mechanism's space under a bound, against the model or one of its mutants.

    The interface the Spark explorer builds on (issue 33): `root()` and `successors(node)`; `end_of(node)`
    judges a new state's fairness end. `run()` is the single-process BFS over the same three."""

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
        self.identities: set[str] = set()  # with symmetry: the states' fingerprints under their own names
        self.choices: bool = bound.choices  # choice points on (manifest field `choices`)
        self.ranges: str = bound.ranges  # the outcomes of a range explored (`model.kernel.choice`)
        self.root_found: Found | None = None
        self.compress = False  # frontier blobs LZ4-compressed (`state.freeze`)
        self.trim = goal is None  # a state keeps its fold, not the events fed to it (a goal reads them)
        self.reuse_probe = True  # the tick's successor is the session its probe ran forward (`actions`, session 12)
        # session 14: what every state shares, from the first root frozen (`conformance.explore.fixed`; False: not)
        self.fixed: FixedTable | None = None
        self.share_fixed = True
        forget_globals()  # session 17: its blobs' globals resolved afresh (`state.thaw`)

    # --- states ------------------------------------------------------------------------------------------
    def fresh(self, start: Sequence[int] = ()) -> Session:
        """A root: the system built, its construction's choices taken by `start` (first outcomes after it) where the
        bound branches on them (`conformance.explore.roots`), else drawn by the seed."""
        return construct(self, start)[0]

    def replay(self, steps: Sequence[dict[str, Any]], start: Sequence[int] = ()) -> Session:
        """The state after `steps` rebuilt from the setup (the root's and each step's recorded choices re-imposed)."""
        self.result.replays += 1
        s = self.fresh(start)
        for raw in steps:
            s.steps.append(Step(raw["op"], raw["calls"]))
            if "choices" in raw:
                with scripted(s.system, raw["choices"], raw.get("ranges", "ends")):
                    for call in raw["calls"]:
                        s.apply(call)
            else:
                for call in raw["calls"]:
                    s.apply(call)
        return s

    def prime(self) -> None:
        """The fixed table as the first root's freeze builds it: for a process thawing blobs (a Spark task)."""
        if self.fixed is None and self.share_fixed:
            s = self.fresh()
            self.judge(s, (), False)
            self.freeze(s)

    def restore(self, node: Node) -> Session:
        """An independent session in `node`'s state: a copy of its blob (or, without one, a replay)."""
        if node.blob is None:
            return self.replay(node.steps, node.start)
        self.prime() if self.fixed is None else self.fixed.ensure()
        self.result.copies += 1
        s = thaw(node.blob, self.driver, self.setup)
        s.start = node.start
        return s

    def freeze(self, s: Session) -> bytes | None:
        if self.result.restore == "replay":
            return None
        if self.trim:
            forget_fed(s)
        if self.fixed is None and self.share_fixed:
            self.fixed = fixed_table(s, f"{self.bound.mechanism}|{self.mutant}|{self.bound.name}")  # None: no copy
            self.share_fixed = self.fixed is not None
        try:
            return freeze(s, self.compress, self.fixed)
        except NotCopyable as exc:  # closure timers (strict timers turned off): replay, the reference path
            self.result.restore, self.result.why = "replay", str(exc)
            return None

    def fingerprint(self, s: Session, book: Book) -> str:
        roots = self.space.roots(s, book)
        seeds = self.fixed.seeds(self.renames) if self.fixed is not None else [None] * max(1, len(self.renames))
        if not self.renames:
            return fingerprint(roots, None, seeds[0])
        prints = [fingerprint(roots, r, k) for r, k in zip(self.renames, seeds, strict=True)]
        self.identities.add(prints[0])
        return min(prints)

    def judge(self, s: Session, steps: Sequence[dict[str, Any]], end: bool, consume: bool = False) -> Found | None:
        """The first violation in `s` (`consume`: `s` is not judged again, its folds are finished in place), with the
        construction's choices of its root (`s.start`, for the replay file)."""
        found = self._violation(s, steps, end, consume)
        if found is not None:
            found.start, found.ranges = s.start, self.ranges
        return found

    def _violation(self, s: Session, steps: Sequence[dict[str, Any]], end: bool, consume: bool) -> Found | None:
        inc = s.incremental
        violations, _ = s.judge(final=True, consume=True) if consume else edge_verdict(s)
        if self.trim:
            check_fold(inc, self.bound.name)
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
        g = self.goal
        if not end and g is not None and g.shown(s.events()):
            why = f"the model shows a behaviour against: {g.statement}"
            return Found("witness", g.claim, g.requirement, why, list(steps))
        return None

    # --- the interface of a search (issue 33) -------------------------------------------------------------
    def root(self) -> Node:
        """The initial state (the first root: `roots.level_zero` gives them all), its `always` rules judged
        (`root_found`), as a node holding its live session."""
        s = self.fresh()
        self.root_found = self.judge(s, (), False)
        return Node((), (), EMPTY, self.freeze(s), s, s.start)

    def successors(self, node: Node, seen: Collection[str] = (), frozen: bool = True) -> list[Edge]:
        """Every transition out of `node`, in order (the bound's actions; per choice point each outcome, in index
        order), each judged; a child node for each state not in `seen` (nor met earlier in this call) and
        without a violation. Stops after the first edge with a violation. The depth bound is the caller's: a node
        at `bound.depth` is not expanded. `frozen` False: the children hold their live sessions only, no blob
        (session 12: `run` neither expands nor copies a state of the last level, it only judges its end; session 21:
        nor a state whose folds its edge finishes in place, `quiet_end`, which is frozen first only to be expanded)."""
        if node.blob is not None:  # session 20: a compressed blob decompressed once, not once per edge's copy
            node.blob = plain(node.blob)
        here = node.live if node.live is not None else self.restore(node)
        node.live = None
        acts, probed, pristine = self.actions(here, node)  # may run `here` forward (time steps)
        edges: list[Edge] = []
        met: set[str] = set()
        for i, act in enumerate(acts):
            script: list[int] | None = []
            while script is not None:  # each resolution of the step's choice points, in lexicographic order
                if probed and i == len(acts) - 1:  # the tick's probe left `here` in the state after it
                    s, (step, made) = here, self.probed(here, act)
                else:  # the last action's first resolution applied to `here` when it is still the source state
                    s = here if pristine and i == len(acts) - 1 and not script else self.restore(node)
                    step, made = self.apply(s, act, script)
                script = _next_script(made)
                full = [k for _, k, _ in made]
                steps = (*node.steps, step)
                fp = self.fingerprint(s, act.book)
                new = fp not in seen and fp not in met
                # A copy into a state seen is judged in place; so is a new state whose fairness end does nothing
                # (am), frozen first: its folds are finished in place, not copied to be finished (session 11).
                quiet = new and self.quiet_end(s)
                if quiet:
                    feed_folds(s)
                blob = self.freeze(s) if quiet and frozen else None  # folds finished next: frozen first to expand
                found = self.judge(s, steps, False, consume=quiet or not new)
                child = None
                if found is None and new:
                    met.add(fp)
                    kept = blob if quiet or not frozen else self.freeze(s)
                    child = Node((*node.key, (i, *full)), steps, act.book, kept, s, node.start)
                edges.append((fp, step, child, found))
                if child is None and s is not here:  # a copy into a state seen, or a violation's: done with
                    release(s)
                if found is not None:
                    return _released(here, edges)
        return _released(here, edges)

    def actions(self, here: Session, node: Node) -> tuple[list[Action], bool, bool]:
        """The bound's actions in `node`'s state, computed on `here` (a copy of it, which the tick's probe runs
        forward); whether `here` is then the state after the last action, the tick, as `apply` would leave it; and
        whether it is still the source state (the space never runs it forward: am, or a `no-tick` bound). Session
        12: such a successor is not restored (and the tick not re-applied). The probe is the tick's state when it
        drew no random choice (counted on the way): the probe draws from the seed, `apply` scripts the choices,
        and only without a choice do the two agree; with choice points off both draw from the seed, identically.
        A live session whose folds were finished in place (`quiet_end`) is never a successor."""
        reuse = self.reuse_probe and (here.incremental is not None or self.result.restore == "replay")
        pristine = reuse and (not self.space.forward or NO_TICK in self.bound.kinds)
        host = chooser_host(here.system) if reuse and not pristine else None
        counting = CountingChooser(host.choices) if host is not None else None
        if counting is not None:
            host.choices = counting
        try:
            acts = self.space.actions(here, node.book, self.bound)
        finally:
            if counting is not None:
                host.choices = counting.inner
        probed = bool(acts) and acts[-1].probed and counting is not None and (not self.choices or counting.n == 0)
        return acts, probed, pristine

    def probed(self, s: Session, act: Action) -> tuple[dict[str, Any], list[tuple[str, int, int]]]:
        """The step `apply` records for the tick `act`, and what a session applying it does besides running it
        (`Session.apply`: the answer, the driver's bookkeeping), on `s` already run forward by the probe."""
        step = act.step()
        for call in act.calls:
            s.answers.append(None)
            self.driver.absorb(s, call["call"], None)
        if self.choices:  # `apply` under a script: the choices made (none), the ranges when not `ends`
            step["choices"] = []
            if self.ranges != "ends":
                step["ranges"] = self.ranges
        return step, []

    def apply(self, s: Session, act: Action, script: list[int]) -> tuple[dict[str, Any], list[tuple[str, int, int]]]:
        """Apply `act` to `s`, the model's random choices scripted (choice points on): `script` decides the first
        choices, every later one takes its first outcome. The step as recorded and the choices made (label,
        outcome index, outcomes)."""
        step = act.step()
        if not self.choices or chooser_host(s.system) is None:
            for call in act.calls:
                s.apply(call)
            return step, []
        with scripted(s.system, script, self.ranges, extend=True) as chooser:
            for call in act.calls:
                s.apply(call)
        made = list(chooser.made) if chooser is not None else []
        step["choices"] = [k for _, k, _ in made]
        if self.ranges != "ends":
            step["ranges"] = self.ranges
        return step, made

    def quiet_end(self, s: Session) -> bool:
        """Nothing happens at the state's fairness end (am): the state as its edge judged it, end checks included."""
        return self.space.always_end_checks and not self.driver.finish(s)

    def end_of(self, node: Node) -> Found | None:
        """The state's fairness end, judged (on its live session, or a copy: the session goes on past it). A live
        session whose folds its edge finished in place (`quiet_end`: no fold) is one whose end does nothing."""
        s = node.live if node.live is not None else self.restore(node)
        node.live = None
        try:
            calls = self.driver.finish(s)
            if not calls and self.space.always_end_checks and node.steps:
                return None  # nothing happens at the end (am): the state as its edge judged it, the end checks too
            if s.incremental is None:  # its folds were finished in place: judge a copy (a replay without a blob)
                release(s)
                s = self.restore(node)
            if self.choices and self.bound.end_choices:  # its first resolutions judged (`ends.py`, session 13)
                return judged_ends(self, node, s, calls)
            for call in calls:
                s.apply(call)
            return self.judge(s, node.steps, True, consume=True)
        finally:
            release(s)  # whichever copy was judged last: nothing steps it again (a second release does nothing)

    # --- the search --------------------------------------------------------------------------------------
    def symmetric(self, groups: Sequence[Sequence[str]]) -> None:
        """Symmetry reduction: a state and its images under every permutation within each group of interchangeable
        servers are one state (the identity first)."""
        per_group = [[dict(zip(g, p, strict=True)) for p in itertools.permutations(g)] for g in groups]
        self.renames = [{k: v for m in combo for k, v in m.items()} for combo in itertools.product(*per_group)]

    def run(self, max_states: int | None = None, ends: bool = True, deadline: float | None = None) -> Result:
        """Explore; stop (incomplete) after `max_states` distinct states or at `deadline` (time.monotonic()): the
        single-process BFS (`conformance.explore.single.search`)."""
        return search(self, max_states, ends, deadline)


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
