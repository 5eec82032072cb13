"""Ordering claims of best copy and server selection (seed 002_46acbb50977df48d.txt, sections "Best
Copy Selection" and "Best copy selection process").

The candidate list is sorted by copy queue length then activation preference, unless any server hosting a
copy has AutoDatabaseMountDial = Lossless, in which case activation preference is the primary key. Copy
queue length is computed from LastLogInspected "from the copy's point of view". The dial admits a copy
whose number of missing logs is at most its threshold (AM-P02..AM-P04).
"""

from __future__ import annotations

import z3

from spec.claims.bf import lex_less
from spec.claims.engine import Claim, Env, Problem
from spec.claims.ids import AM_IDS

HOSTS = 3  # servers hosting a copy of the database in the model
DIALS = ("Lossless", "GoodAvailability", "BestAvailability")


def _copy(e: Env, name: str) -> dict[str, z3.ArithRef]:
    c = {"cql": e.int(f"{name}.copy_queue_length"), "ap": e.int(f"{name}.activation_preference")}
    e.assume(f"{name}: queue length >= 0, activation preference >= 1", z3.And(c["cql"] >= 0, c["ap"] >= 1))
    return c


def _lossless_anywhere(e: Env) -> z3.BoolRef:
    dials = [e.int(f"server{i}.dial") for i in range(HOSTS)]
    for i, d in enumerate(dials):
        e.assume(f"server{i}.dial is one of {DIALS} (0, 1, 2)", z3.And(d >= 0, d < len(DIALS)))
    return z3.Or([d == 0 for d in dials])


def _bcss_key(lossless: z3.BoolRef, c: dict[str, z3.ArithRef]) -> list[z3.ArithRef]:
    """Lossless anywhere: (activation preference,); otherwise (copy queue length, activation preference)."""
    return [z3.If(lossless, c["ap"], c["cql"]), z3.If(lossless, 0, c["ap"])]


def _sort_claim(primary: str, *, lossless: bool) -> Problem:
    e = Env()
    any_lossless = _lossless_anywhere(e)
    e.assume("Lossless on some server" if lossless else "no server has Lossless", any_lossless == lossless)
    a, b = _copy(e, "a"), _copy(e, "b")
    other = "ap" if primary == "cql" else "cql"
    e.assume(f"a is better on {primary}", a[primary] < b[primary])
    e.assume(f"b is better on {other}", b[other] < a[other])
    return e.problem(lex_less(_bcss_key(any_lossless, a), _bcss_key(any_lossless, b)))


def _inspected(*, shared_generation: bool) -> Problem:
    """Sorting by the highest LastLogInspected picks the lowest copy queue length when the copies see the
    same LastLogGenerated; 'from the copy's point of view' the generated log may differ per copy."""
    e = Env()
    gen_a, gen_b = e.int("a.last_log_generated"), e.int("b.last_log_generated")
    insp_a, insp_b = e.int("a.last_log_inspected"), e.int("b.last_log_inspected")
    e.assume(
        "inspected logs are generated logs",
        z3.And(insp_a <= gen_a, insp_b <= gen_b, insp_a >= 0, insp_b >= 0),
    )
    if shared_generation:
        e.assume("both copies see the same LastLogGenerated", gen_a == gen_b)
    cql_a, cql_b = gen_a - insp_a, gen_b - insp_b
    e.show("a.copy_queue_length", cql_a, plain=True)
    e.show("b.copy_queue_length", cql_b, plain=True)
    e.assume("a has inspected more logs", insp_a > insp_b)
    return e.problem(cql_a < cql_b)


def _dial(*, defaults: bool) -> Problem:
    e = Env()
    limits = [e.param(f"Dial{d}MaxLogs", default=defaults) for d in DIALS]
    missing = e.int("missing_logs")
    e.assume("missing logs >= 0", missing >= 0)
    mountable = [missing <= limit for limit in limits]
    return e.problem(z3.And(z3.Implies(mountable[0], mountable[1]), z3.Implies(mountable[1], mountable[2])))


def claims() -> list[Claim]:
    ids = AM_IDS
    return [
        Claim(
            "am.bcss.copy_queue_first",
            ids["cql_primary"],
            "Without Lossless on any server, a copy with a shorter copy queue comes first even against a "
            "better "
            "activation preference.",
            lambda: _sort_claim("cql", lossless=False),
            "proved",
            "With Lossless on one server it fails (activation preference becomes the primary key).",
            lambda: _sort_claim("cql", lossless=True),
        ),
        Claim(
            "am.bcss.lossless_preference_first",
            ids["lossless_ap"],
            "With Lossless on any server, the lower activation preference comes first even against a "
            "shorter copy "
            "queue.",
            lambda: _sort_claim("ap", lossless=True),
            "proved",
            "Without Lossless anywhere it fails.",
            lambda: _sort_claim("ap", lossless=False),
        ),
        Claim(
            "am.bcss.inspected_is_queue_length",
            ids["lli_is_cql"],
            "Sorting by the highest LastLogInspected is sorting by the lowest copy queue length.",
            lambda: _inspected(shared_generation=True),
            "proved",
            "Weakened (each copy's own view of LastLogGenerated): the copy that inspected more can have the "
            "longer queue.",
            lambda: _inspected(shared_generation=False),
        ),
        Claim(
            "am.dial.monotone",
            ids["dial_monotone"],
            "A copy mountable under Lossless is mountable under GoodAvailability, and one mountable under "
            "GoodAvailability is mountable under BestAvailability.",
            lambda: _dial(defaults=True),
            "proved",
            "Weakened (thresholds only within their ranges): the dial values can be configured out of order.",
            lambda: _dial(defaults=False),
        ),
    ]
