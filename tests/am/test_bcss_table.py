"""Table-driven tests of BCSS (seed 002, "Best Copy Selection", "Best copy selection process")."""

from __future__ import annotations

import pytest

from model.am.bcss import Options, dial_allows, select
from model.am.state import Trigger
from tests.am.helpers import copy, health, snap

pytestmark = pytest.mark.unit

# set n -> a copy that meets set n and no earlier set (AM-040..AM-049); bounds are 10 and 50 (AM-P05/P06)
FIRST_SET = {
    1: dict(ci="Healthy", cq=9, rq=49),
    2: dict(ci="Crawling", cq=9, rq=49),
    3: dict(ci="Healthy", cq=10, rq=49),
    4: dict(ci="Crawling", cq=10, rq=49),
    5: dict(ci="Failed", cq=10, rq=49),
    6: dict(ci="Healthy", cq=9, rq=50),
    7: dict(ci="Crawling", cq=9, rq=50),
    8: dict(ci="Healthy", cq=10, rq=50),
    9: dict(ci="Crawling", cq=10, rq=50),
    10: dict(ci="Failed", cq=10, rq=50),
}


@pytest.mark.parametrize("n", sorted(FIRST_SET))
def test_each_criteria_set_admits_its_copy(n: int) -> None:
    sel = select(snap(copy("A", **FIRST_SET[n])))
    assert [(c.server, c.criteria_set, c.tier) for c in sel.order] == [("A", n, 1)]


@pytest.mark.parametrize("n", range(1, 10))
def test_earlier_set_wins_over_better_sort_key(n: int) -> None:
    """AM-039: a copy meeting set n is tried before one meeting only set n+1, though B sorts first."""
    a = copy("A", pref=9, **FIRST_SET[n])
    b = copy("B", pref=2, **FIRST_SET[n + 1])
    sel = select(snap(a, b, dials={"SRC": "Lossless"}))  # activation preference order: B before A
    assert [(c.server, c.criteria_set) for c in sel.order] == [("A", n), ("B", n + 1)]


@pytest.mark.parametrize(
    "status",
    [
        "Failed",
        "Suspended",
        "FailedAndSuspended",
        "ServiceDown",
        "Initializing",
        "Resynchronizing",
        "Dismounted",
        "Mounted",
    ],
)
def test_unacceptable_status_never_admitted(status: str) -> None:
    sel = select(snap(copy("A", status=status)))
    assert sel.order == () and sel.excluded == (("A", "meets no criteria set (AM-050)"),)


@pytest.mark.parametrize(
    "status", ["Healthy", "DisconnectedAndHealthy", "DisconnectedAndResynchronizing", "SeedingSource"]
)
def test_acceptable_statuses(status: str) -> None:
    assert select(snap(copy("A", status=status))).order[0].criteria_set == 1


def test_status_reading_is_selectable() -> None:
    """AM-I07: with CriteriaRequireStatus false, sets 1..9 ignore status; set 10 still tests it."""
    failed_good = copy("A", status="Failed")
    failed_bad = copy("B", status="Failed", **FIRST_SET[10])
    sel = select(snap(failed_good, failed_bad), opts=Options().with_(require_status=False))
    assert sel.servers == ("A",) and sel.order[0].criteria_set == 1


def test_no_candidate() -> None:
    """AM-050: nothing meets the tenth set: no copy can be activated automatically."""
    assert select(snap(copy("A", status="Failed"), copy("B", status="Suspended"))).order == ()


@pytest.mark.parametrize(
    "kw,reason",
    [
        (dict(reachable=False), "unreachable (AM-034)"),
        (dict(blocked=True), "blocked from activation (AM-034)"),
        (dict(suspended=True), "blocked from activation (AM-034)"),
    ],
)
def test_unreachable_and_blocked_are_ignored(kw: dict, reason: str) -> None:
    sel = select(snap(copy("A", **kw), copy("B", cq=50)))
    assert sel.servers == ("B",) and ("A", reason) in sel.excluded


# ---- health tiers (AM-027..AM-031) ---------------------------------------------------------------

SOURCE_BAD = health(OutlookWeb="Unhealthy", Transport="Unhealthy")
TIER_CASES = [
    ("all healthy", health(), 1),
    ("only a Low component unhealthy", health(Search="Unhealthy"), 2),
    ("a High component degraded, better than source", health(OutlookWeb="Degraded", Transport="Unhealthy"), 3),
    ("same as source", SOURCE_BAD, 4),
    (
        "worse than source somewhere",
        health(OutlookWeb="Unhealthy", Transport="Unhealthy", ActiveSync="Unhealthy"),
        None,
    ),
]


@pytest.mark.parametrize("label,h,tier", TIER_CASES, ids=[c[0] for c in TIER_CASES])
def test_health_tiers(label: str, h, tier: int | None) -> None:
    sel = select(snap(copy("A"), healths={"SRC": SOURCE_BAD, "A": h}))
    if tier is None:
        assert sel.order == () and sel.excluded == (("A", "server passes no health tier (AM-I04)"),)
    else:
        assert sel.order[0].tier == tier


def test_below_source_fallback_is_selectable() -> None:
    bad = health(OutlookWeb="Unhealthy", Transport="Unhealthy", ActiveSync="Unhealthy")
    sel = select(snap(copy("A"), healths={"SRC": SOURCE_BAD, "A": bad}), opts=Options().with_(below_source=True))
    assert sel.order[0].tier == 5


def test_up_to_normal_scope() -> None:
    """AM-I05: a High component unhealthy fails tier 2 under NormalAndAbove, passes under NormalOnly."""
    h = health(OutlookWeb="Unhealthy")
    s = snap(copy("A"), healths={"A": h})
    assert select(s).excluded and not select(s).order  # source healthy: A is worse, no tier
    assert select(s, opts=Options().with_(up_to_normal="NormalOnly")).order[0].tier == 2


def test_tier_major_versus_criteria_major() -> None:
    """AM-I01: a healthy server with a poor copy against a same-as-source server with a perfect copy."""
    a = copy("A", **FIRST_SET[10])
    b = copy("B")
    s = snap(a, b, healths={"SRC": SOURCE_BAD, "A": health(), "B": SOURCE_BAD})
    tier_major = select(s)
    assert [(c.server, c.tier, c.criteria_set) for c in tier_major.order] == [("A", 1, 10), ("B", 4, 1)]
    crit_major = select(s, opts=Options().with_(order="CriteriaMajor"))
    assert [(c.server, c.tier, c.criteria_set) for c in crit_major.order] == [("B", 4, 1), ("A", 1, 10)]


# ---- sort orders (AM-035..AM-037) ----------------------------------------------------------------


def test_sort_by_copy_queue_then_preference() -> None:
    s = snap(copy("A", cq=5, pref=2), copy("B", cq=3, pref=4), copy("C", cq=3, pref=3))
    sel = select(s)
    assert sel.sort == "CopyQueue" and sel.servers == ("C", "B", "A")


@pytest.mark.parametrize("lossless_on", ["SRC", "A", "B"])
def test_lossless_on_any_server_sorts_by_preference(lossless_on: str) -> None:
    """AM-036 with AM-I06: any copy's server, even the failed source or a blocked copy's."""
    s = snap(
        copy("A", cq=5, pref=2),
        copy("B", cq=0, pref=3, blocked=lossless_on == "B"),
        copy("C", cq=0, pref=4),
        dials={lossless_on: "Lossless"},
    )
    sel = select(s)
    assert sel.sort == "ActivationPreference" and sel.servers[0] == "A"


@pytest.mark.parametrize("lossless,expected", [(True, ("A", "B")), (False, ("B", "A"))])
def test_switchover_sort(lossless: bool, expected: tuple[str, ...]) -> None:
    """AM-037: a lossless targetless switchover sorts by preference whatever the dials."""
    s = snap(copy("A", cq=5, pref=2), copy("B", cq=1, pref=3))
    assert select(s, Trigger("switchover", lossless=lossless)).servers == expected


# ---- responder constraint (AM-032) ---------------------------------------------------------------


@pytest.mark.parametrize(
    "target_state,mode,admitted",
    [
        ("Healthy", "Better", True),
        ("Degraded", "Better", True),
        ("Unhealthy", "Better", False),
        ("Degraded", "Healthy", False),
        ("Healthy", "Healthy", True),
    ],
)
def test_responder_constraint(target_state: str, mode: str, admitted: bool) -> None:
    src = health(OutlookWeb="Unhealthy")
    s = snap(copy("A"), healths={"SRC": src, "A": health(OutlookWeb=target_state)})
    sel = select(s, Trigger("responder", "OutlookWeb"), Options().with_(responder=mode))
    assert (sel.servers == ("A",)) is admitted


# ---- the dial (AM-024, AM-P02..P04, AM-I08) ------------------------------------------------------


@pytest.mark.parametrize(
    "dial,missing,ok",
    [
        ("Lossless", 0, True),
        ("Lossless", 1, False),
        ("GoodAvailability", 6, True),
        ("GoodAvailability", 7, False),
        ("BestAvailability", 12, True),
        ("BestAvailability", 13, False),
    ],
)
def test_dial_thresholds(dial: str, missing: int, ok: bool) -> None:
    s = snap(copy("A"), dials={"A": dial})
    assert dial_allows(missing, s, "A", Options()) is ok


def test_dial_scope_most_restrictive() -> None:
    s = snap(copy("A"), copy("B"), dials={"A": "BestAvailability", "B": "Lossless"})
    assert dial_allows(12, s, "A", Options())
    assert not dial_allows(1, s, "A", Options().with_(dial_scope="MostRestrictive"))


def test_why_this_copy_names_tier_and_set() -> None:
    text = select(snap(copy("A", **FIRST_SET[3]))).order[0].why()
    assert "tier 1 (All Healthy)" in text and "criteria set 3 (AM-042)" in text
