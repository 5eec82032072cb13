"""The claim engine: encode an ordering or timing claim of the seeds in z3, prove or refute it.

A `Claim` is built by a function returning a `Problem`: named assumptions (the protocol rules and the
parameter values, read from the catalogue), a goal, and the variables worth showing in a counterexample.
`decide` first checks that the assumptions alone are satisfiable (otherwise every goal would be "proved"
vacuously), then asserts the negated goal: `unsat` proves the claim, `sat` refutes it with a model, and
`unknown` (time-out) is a failure. Every claim carries a twin that must come back the other way: a
too-strong version the solver refutes, or a weakened assumption set under which the claim fails.
See FIELD-NOTES ("z3, in practice") for the encoding habits followed here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import z3

from spec.catalogue import catalogue

Verdict = Literal["proved", "refuted", "vacuous", "unknown"]
OPPOSITE: dict[str, str] = {"proved": "refuted", "refuted": "proved"}

SECOND_MS = 1_000
MINUTE_MS = 60 * SECOND_MS
HOUR_MS = 60 * MINUTE_MS
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True)
class Problem:
    """Named assumptions, a goal, and the terms printed in a counterexample (name -> term)."""

    assumptions: tuple[tuple[str, z3.BoolRef], ...]
    goal: z3.BoolRef
    show: tuple[tuple[str, z3.ExprRef], ...] = ()
    plain: frozenset[str] = frozenset()  # shown as plain numbers, not durations
    prefer: tuple[z3.ArithRef, ...] = ()  # minimised (in order) to make a counterexample easier to read


class Env:
    """Builder for a `Problem`: declares variables and parameters, collects named assumptions."""

    def __init__(self) -> None:
        self._assumptions: list[tuple[str, z3.BoolRef]] = []
        self._show: list[tuple[str, z3.ExprRef]] = []
        self._plain: set[str] = set()
        self._pinned: dict[str, int] = {}
        self._prefer: list[z3.ArithRef] = []

    def assume(self, label: str, expr: z3.BoolRef | bool) -> None:
        self._assumptions.append((label, z3.BoolVal(expr) if isinstance(expr, bool) else expr))

    def time(self, name: str, *, show: bool = True) -> z3.ArithRef:
        """An integer number of milliseconds (a time point or a duration)."""
        var = z3.Int(name)
        if show:
            self._show.append((name, var))
        return var

    def at(self, name: str) -> z3.ArithRef:
        """A time point, at or after the Unix epoch."""
        var = self.time(name)
        self.assume(f"{name} is not before the epoch", var >= 0)
        return var

    def int(self, name: str, *, show: bool = True) -> z3.ArithRef:
        self._plain.add(name)
        return self.time(name, show=show)

    def bool(self, name: str, *, show: bool = True) -> z3.BoolRef:
        var = z3.Bool(name)
        if show:
            self._show.append((name, var))
        return var

    def param(self, name: str, *, default: bool = True) -> z3.ArithRef:
        """A catalogue parameter in milliseconds (durations) or its own unit (counts, logs).

        With `default=True` it is pinned to the catalogue default; otherwise only to the catalogue's
        valid range (the "weakened assumption set" twins use that)."""
        p = catalogue().param(name)
        var = z3.Int(name)
        self._show.append((name, var))
        conv = p.to_ms if p.is_duration else (lambda v: int(v))
        if not p.is_duration:
            self._plain.add(name)
        if default:
            self._pinned[name] = conv(p.default)
            self.assume(f"{name} = catalogue default ({p.default} {p.unit})", var == conv(p.default))
        elif p.range is not None:
            lo, hi = p.range
            self.assume(
                f"{name} within catalogue range [{lo}, {hi}] {p.unit}",
                z3.And(var >= conv(lo), var <= conv(hi)),
            )
        return var

    def grid(self, name: str, offset: z3.ArithRef | int, period: z3.ArithRef | int) -> z3.ArithRef:
        """A time point on a periodic timer: offset + period * k for some integer k (linear when the
        period is a constant)."""
        k = z3.Int(f"{name}.k")
        t = self.time(name)
        if isinstance(period, z3.ArithRef) and str(period) in self._pinned:
            period = self._pinned[str(period)]  # a constant period keeps the arithmetic linear
        self.assume(f"{name} is a tick of its periodic timer", t == offset + period * k)
        return t

    def show(self, name: str, term: z3.ExprRef, *, plain: bool = False) -> None:
        self._show.append((name, term))
        if plain:
            self._plain.add(name)

    def prefer_small(self, term: z3.ArithRef) -> None:
        """Ask for counterexamples with `term` as small as possible (readability only)."""
        self._prefer.append(term)

    def problem(self, goal: z3.BoolRef) -> Problem:
        return Problem(tuple(self._assumptions), goal, tuple(self._show), frozenset(self._plain), tuple(self._prefer))


@dataclass(frozen=True)
class Claim:
    """One ordering or timing claim of the seeds, with its expected verdict and its twin."""

    name: str
    requirement: str
    statement: str
    build: Callable[[], Problem]
    expected: Literal["proved", "refuted"]
    twin_statement: str
    twin: Callable[[], Problem]
    timeout_ms: int = 10_000
    finding: str = ""  # for claims refuted as the seed states them: why, and where the repaired bound is
    repairs: str = ""  # name of the claim whose bound this claim repairs
    covers: tuple[str, ...] = ()  # further requirement IDs the claim encodes (see spec/claims/ids.py)

    @property
    def twin_expected(self) -> str:
        return OPPOSITE[self.expected]


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    seconds: float
    counterexample: dict[str, str] = field(default_factory=dict)
    detail: str = ""
    assumptions: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    main: Outcome
    twin: Outcome

    @property
    def ok(self) -> bool:
        return self.main.verdict == self.claim.expected and self.twin.verdict == self.claim.twin_expected

    def to_json(self) -> dict[str, Any]:
        c = self.claim
        return {
            "claim": c.name,
            "requirement": c.requirement,
            "covers": list(c.covers),
            "statement": c.statement,
            "expected": c.expected,
            "got": self.main.verdict,
            "timeout_ms": c.timeout_ms,
            "seconds": round(self.main.seconds, 4),
            "assumptions": list(self.main.assumptions),
            "counterexample": self.main.counterexample,
            "detail": self.main.detail,
            "twin": {
                "statement": c.twin_statement,
                "expected": c.twin_expected,
                "got": self.twin.verdict,
                "seconds": round(self.twin.seconds, 4),
                "assumptions": list(self.twin.assumptions),
                "counterexample": self.twin.counterexample,
                "detail": self.twin.detail,
            },
            "finding": c.finding,
            "ok": self.ok,
        }


def fmt_ms(value: int) -> str:
    """A millisecond count in words a reader checks quickly: 129600000 -> '36h (129600000 ms)'."""
    sign, v = ("-" if value < 0 else ""), abs(value)
    parts = []
    for unit, size in (("d", DAY_MS), ("h", HOUR_MS), ("min", MINUTE_MS), ("s", SECOND_MS), ("ms", 1)):
        if v >= size:
            parts.append(f"{v // size}{unit}")
            v %= size
    human = sign + "".join(parts) if parts else "0"
    return f"{human} ({value} ms)" if abs(value) >= SECOND_MS else f"{value} ms"


def _model_values(
    model: z3.ModelRef, show: tuple[tuple[str, z3.ExprRef], ...], plain: frozenset[str]
) -> dict[str, str]:
    _plain = plain
    out: dict[str, str] = {}
    for name, term in show:
        val = model.eval(term, model_completion=True)
        if z3.is_bv_value(val):
            bits = val.as_long()
            out[name] = "{" + ", ".join(str(i) for i in range(val.size()) if bits >> i & 1) + "}"
        elif z3.is_int_value(val):
            n = val.as_long()
            out[name] = str(n) if name in _plain or name.endswith(".k") else fmt_ms(n)
        else:
            out[name] = str(val)
    return out


def decide(problem: Problem, timeout_ms: int) -> Outcome:
    """Check the assumptions are satisfiable, then try to refute the goal."""
    start = time.perf_counter()
    solver = z3.Solver()
    solver.set(timeout=timeout_ms)
    for i, (label, expr) in enumerate(problem.assumptions):
        solver.assert_and_track(expr, z3.Bool(f"a{i}: {label}"))
    first = solver.check()
    if first == z3.unsat:
        core = ", ".join(str(c) for c in solver.unsat_core())
        return Outcome("vacuous", time.perf_counter() - start, detail=f"assumptions unsatisfiable: {core}")
    if first == z3.unknown:
        return Outcome("unknown", time.perf_counter() - start, detail=f"assumptions: {solver.reason_unknown()}")
    solver.add(z3.Not(problem.goal))
    result = solver.check()
    elapsed = time.perf_counter() - start
    if result == z3.unsat:
        return Outcome("proved", elapsed)
    if result == z3.sat:
        model = _readable_model(problem, timeout_ms) or solver.model()
        return Outcome("refuted", elapsed, _model_values(model, problem.show, problem.plain))
    return Outcome("unknown", elapsed, detail=solver.reason_unknown())


def _readable_model(problem: Problem, timeout_ms: int) -> z3.ModelRef | None:
    if not problem.prefer:
        return None
    opt = z3.Optimize()
    opt.set(timeout=timeout_ms)
    opt.add(*(expr for _, expr in problem.assumptions), z3.Not(problem.goal))
    for term in problem.prefer:
        opt.minimize(term)
    return opt.model() if opt.check() == z3.sat else None


def run_claim(claim: Claim) -> ClaimResult:
    outcomes = []
    for problem in (claim.build(), claim.twin()):
        outcome = decide(problem, claim.timeout_ms)
        outcomes.append(replace(outcome, assumptions=tuple(label for label, _ in problem.assumptions)))
    return ClaimResult(claim, outcomes[0], outcomes[1])


def maximise(problem: Problem, term: z3.ArithRef, timeout_ms: int = 10_000) -> int | None:
    """The largest value `term` takes under the assumptions (None if unbounded or unknown): used to
    report how tight a proved bound is."""
    opt = z3.Optimize()
    opt.set(timeout=timeout_ms)
    for _label, expr in problem.assumptions:
        opt.add(expr)
    handle = opt.maximize(term)
    if opt.check() != z3.sat:
        return None
    value = opt.upper(handle)
    return value.as_long() if z3.is_int_value(value) else None
