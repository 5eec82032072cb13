"""The pure decisions against the seed's tables (SR-044..SR-049, SR-058, SR-059, SR-033, SR-038)."""

from __future__ import annotations

import pytest

from model.sr.decisions import attempt_plan, promotion_reason, safetynet_may_resubmit, shadow_candidates
from model.sr.sim import build_topology, config_warnings
from model.sr.state import ConfigError, SrConfig

R, L = "remote", "local"


@pytest.mark.unit
@pytest.mark.parametrize(
    ("pref", "in_dag", "multi", "meaning", "plan"),
    [
        ("PreferRemote", True, True, "attempts", (R,) * 4 + (L,) * 2),  # SR-044
        ("RemoteOnly", True, True, "attempts", (R,) * 4),  # SR-045
        ("LocalOnly", True, True, "attempts", (L,) * 2),  # SR-046, SR-I02
        ("PreferRemote", True, False, "attempts", (L,) * 2),  # SR-047: single-site DAG
        ("RemoteOnly", False, False, "attempts", (L,) * 2),  # SR-029: outside any DAG
        ("PreferRemote", True, True, "retries", (R,) * 5 + (L,) * 3),  # SR-I03 alternative
    ],
)
def test_attempt_plan(pref: str, in_dag: bool, multi: bool, meaning: str, plan: tuple[str, ...]) -> None:
    cfg = SrConfig()
    assert attempt_plan(pref, in_dag, multi, cfg.max_remote, cfg.max_local, meaning) == plan


@pytest.mark.unit
def test_candidates_stay_in_the_boundary_and_site_class() -> None:
    members = {
        "A": ("dag:d", "s0", "2013"),
        "B": ("dag:d", "s1", "2013"),
        "C": ("dag:d", "s0", "2013"),
        "D": ("site:s0", "s0", "2013"),
        "H": ("site:s0", "s0", "2010"),
    }
    assert shadow_candidates("A", "remote", members, lambda n: True) == ["B"]
    assert shadow_candidates("A", "local", members, lambda n: True) == ["C"]
    assert shadow_candidates("D", "local", members, lambda n: True) == []  # SR-014, SR-I13
    assert shadow_candidates("A", "local", members, lambda n: n != "C") == []


@pytest.mark.unit
def test_promotion_reason() -> None:
    span = SrConfig().resubmit_ms
    assert promotion_reason(span - 1, 0, span, "db0", None) == ""
    assert promotion_reason(span, 0, span, "db0", None) == "resubmit_timespan"  # SR-058
    assert promotion_reason(1, 0, span, "db0", "db1") == "database_id"  # SR-059: at once
    assert promotion_reason(span * 2, 0, span, "db0", "db0") == ""  # reachable, same database


@pytest.mark.unit
def test_safetynet_resubmits_only_to_mailboxes() -> None:
    assert safetynet_may_resubmit("mbx") and safetynet_may_resubmit("journal")
    assert not any(map(safetynet_may_resubmit, ["ext:contoso.example", "hub:HUB2010", "dsn"]))


@pytest.mark.unit
def test_inactivity_must_be_below_connection_timeout() -> None:
    """SR-049, and its twin: a valid configuration passes."""
    cfg = SrConfig().validate()
    with pytest.raises(ConfigError, match="SR-049"):
        cfg.replace(recv_inactivity_ms=cfg.recv_timeout_ms)


@pytest.mark.unit
def test_reject_without_peers_is_warned() -> None:
    """SR-023 (advisory) and its twin: the same topology without RejectMessageOnShadowFailure is quiet."""
    import random

    topo = build_topology(random.Random(0), 4, "mixed", False)
    assert [w.split()[5] for w in config_warnings(SrConfig(reject_on_failure=True), topo)] == ["MBX04"]
    assert config_warnings(SrConfig(), topo) == []
