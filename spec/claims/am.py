"""Ordering claims of best copy and server selection (seed 002_46acbb50977df48d.txt, sections "Best
Copy Selection" and "Best copy selection process").

The candidate list is sorted by copy queue length then activation preference, unless any server hosting a
copy has AutoDatabaseMountDial = Lossless, in which case activation preference is the primary key. Copy
queue length is computed from LastLogInspected "from the copy's point of view". The dial admits a copy
whose number of missing logs is at most its threshold (AM-P02..AM-P04).
"""

from __future__ import annotations

import z3

from spec.catalogue import catalogue
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
    """AM-035/036/037: activation preference is the primary key when any server has Lossless or when an
    administrator runs a lossless switchover without a target."""
    e = Env()
    switchover = e.bool("targetless_lossless_switchover")
    any_lossless = z3.Or(_lossless_anywhere(e), switchover)
    e.assume(
        "Lossless on some server, or a targetless lossless switchover"
        if lossless
        else "no server has Lossless and no targetless lossless switchover",
        any_lossless == lossless,
    )
    a, b = _copy(e, "a"), _copy(e, "b")
    other = "ap" if primary == "cql" else "cql"
    e.assume(f"a is better on {primary}", a[primary] < b[primary])
    e.assume(f"b is better on {other}", b[other] < a[other])
    return e.problem(lex_less(_bcss_key(any_lossless, a), _bcss_key(any_lossless, b)))


def _sort_rules(*, second_reading_all: bool) -> Problem:
    """The seed's two sort rules: 'any value other than Lossless on all servers' (copy queue first) and
    'Lossless on any server' (activation preference first). For every assignment of dials exactly one
    applies. The twin reads the second rule as 'Lossless on all servers'."""
    e = Env()
    dials = [e.int(f"server{i}.dial") for i in range(HOSTS)]
    for i, d in enumerate(dials):
        e.assume(f"server{i}.dial is one of {DIALS} (0, 1, 2)", z3.And(d >= 0, d < len(DIALS)))
    queue_first = z3.And([d != 0 for d in dials])
    preference_first = z3.And([d == 0 for d in dials]) if second_reading_all else z3.Or([d == 0 for d in dials])
    return e.problem(z3.Xor(queue_first, preference_first))


TIERS = ("All Healthy", "Up to Normal Healthy", "All Better than Source", "Same as Source")


def _tiers(order: str) -> Problem:
    """AM-027 with AM-I01: the candidates are tried by (tier, criteria set) under TierMajor, by (criteria
    set, tier) under CriteriaMajor. Copy a's server passes a healthier tier than copy b's."""
    e = Env()
    ranks = {}
    for name in ("a", "b"):
        tier, crit = e.int(f"{name}.tier"), e.int(f"{name}.criteria_set")
        e.assume(
            f"{name}: tier 1..{len(TIERS)}, criteria set 1..10",
            z3.And(tier >= 1, tier <= len(TIERS), crit >= 1, crit <= 10),
        )
        ranks[name] = [tier, crit] if order == "TierMajor" else [crit, tier]
    e.assume("a's server passes a healthier tier than b's", z3.Int("a.tier") < z3.Int("b.tier"))
    return e.problem(lex_less(ranks["a"], ranks["b"]))


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


CONTENT_INDEX = ("Healthy", "Crawling", "Other")


def _criteria_level(e: Env, name: str) -> tuple[z3.ArithRef, dict[str, z3.ArithRef]]:
    """The first of the ten criteria sets (1..10) the copy meets (seed: 'Best copy selection process')."""
    cq_below, rq_below = e.param("CriteriaCopyQueueLengthBelow"), e.param("CriteriaReplayQueueLengthBelow")
    c = {
        "ci": e.int(f"{name}.content_index"),
        "cql": e.int(f"{name}.copy_queue_length"),
        "rql": e.int(f"{name}.replay_queue_length"),
    }
    e.assume(
        f"{name}: content index is 0 Healthy, 1 Crawling or 2 other; queues >= 0",
        z3.And(c["ci"] >= 0, c["ci"] <= 2, c["cql"] >= 0, c["rql"] >= 0),
    )
    healthy, crawling = c["ci"] == 0, c["ci"] == 1
    short_cq, short_rq = c["cql"] < cq_below, c["rql"] < rq_below
    sets = [
        z3.And(healthy, short_cq, short_rq),
        z3.And(crawling, short_cq, short_rq),
        z3.And(healthy, short_rq),
        z3.And(crawling, short_rq),
        short_rq,
        z3.And(healthy, short_cq),
        z3.And(crawling, short_cq),
        healthy,
        crawling,
    ]
    level: z3.ArithRef = z3.IntVal(10)
    for k in range(len(sets), 0, -1):
        level = z3.If(sets[k - 1], k, level)
    e.show(f"{name}.criteria_set", level, plain=True)
    return level, c


def _criteria_claim(*, short_replay_queues: bool) -> Problem:
    """Copy a has a healthy content index and a copy queue under the bound; copy b has neither. Is a
    always tried first (a lower criteria set)?"""
    e = Env()
    level_a, a = _criteria_level(e, "a")
    level_b, b = _criteria_level(e, "b")
    e.assume(
        "a: healthy content index, short copy queue",
        z3.And(a["ci"] == 0, a["cql"] < catalogue().param("CriteriaCopyQueueLengthBelow").default),
    )
    e.assume(
        "b: content index neither healthy nor crawling, long copy queue",
        z3.And(b["ci"] == 2, b["cql"] >= catalogue().param("CriteriaCopyQueueLengthBelow").default),
    )
    if short_replay_queues:
        rq = catalogue().param("CriteriaReplayQueueLengthBelow").default
        e.assume("(strengthened) both replay queues under the bound", z3.And(a["rql"] < rq, b["rql"] < rq))
    return e.problem(level_a < level_b)


def _acll_before_mount(*, checked: bool) -> Problem:
    """AM-024, AM-051: BCSS, then attempt copy last logs, then the missing logs are compared with the dial,
    then the mount request; a copy over the dial's threshold is not mounted."""
    e = Env()
    steps = [e.at(n) for n in ("failure_detected", "bcss_run", "acll_done", "dial_compared")]
    for a, b, label in zip(
        steps, steps[1:], ("BCSS after detection", "ACLL after BCSS", "dial compared after ACLL"), strict=False
    ):
        e.assume(label, a < b)
    mount = e.time("mount_request")
    missing = e.int("missing_logs_after_acll")
    limit = e.param("DialGoodAvailabilityMaxLogs")
    e.assume("missing logs >= 0", missing >= 0)
    if checked:
        e.assume(
            "the mount request follows the dial comparison, only within the threshold",
            z3.And(mount > steps[3], missing <= limit),
        )
    else:
        e.assume("(weakened) the mount request follows BCSS, whatever the missing logs", mount > steps[1])
    return e.problem(z3.And(mount > steps[2], missing <= limit))


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
        Claim(
            "am.criteria.healthy_short_queue_first",
            ids["criteria_order"],
            "A copy with a healthy content index and a short copy queue is always tried before a copy with neither.",
            lambda: _criteria_claim(short_replay_queues=False),
            "refuted",
            "When both replay queues are under their bound, it holds.",
            lambda: _criteria_claim(short_replay_queues=True),
            finding="Not a seed sentence but a consequence of its ten criteria sets: the replay queue "
            "outranks the "
            "content index and the copy queue (set 5 comes before set 6), so a copy with a failed index and "
            "a "
            "long copy queue but a short replay queue is tried before a healthy one whose replay queue is "
            "long.",
        ),
        Claim(
            "am.acll_before_mount",
            ids["acll_before_mount"],
            "A mount request follows attempt copy last logs, and only for a copy whose missing logs are "
            "within "
            "the dial's threshold (GoodAvailability by default).",
            lambda: _acll_before_mount(checked=True),
            "proved",
            "Weakened (mount right after BCSS): a copy can be mounted before ACLL or beyond the threshold.",
            lambda: _acll_before_mount(checked=False),
        ),
        Claim(
            "am.bcss.sort_rules_exhaustive",
            ids["sort_rules"],
            "For every combination of AutoDatabaseMountDial values, exactly one of the two sort rules applies.",
            lambda: _sort_rules(second_reading_all=False),
            "proved",
            "Reading the Lossless rule as 'on all servers' leaves mixed dials with no rule.",
            lambda: _sort_rules(second_reading_all=True),
        ),
        Claim(
            "am.bcss.healthier_tier_first",
            ids["tiers"],
            "A copy whose server passes a healthier tier is tried before a copy on a less healthy server, "
            "whatever "
            f"their criteria sets (BcssTierCriteriaOrder = "
            f"{catalogue().param('BcssTierCriteriaOrder').default}).",
            lambda: _tiers(str(catalogue().param("BcssTierCriteriaOrder").default)),
            "proved",
            "Under the alternative reading CriteriaMajor (AM-I01) a better criteria set on a less healthy server wins.",
            lambda: _tiers("CriteriaMajor"),
        ),
    ]
