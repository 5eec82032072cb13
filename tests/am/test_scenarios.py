"""Scripted scenarios through `ModelSystem` (the reference `ActiveManagerSystem`), each checked by the
monitor: mount failures and fall-through, the dial, no candidate, partitions, responders, maintenance."""

from __future__ import annotations

import pytest

from model.am import events as ev
from model.am.bcss import Options
from model.am.monitor import Replay
from model.am.properties import check_world
from model.am.protocol import Layout, ModelSystem
from tests.am.helpers import ScriptEnv

pytestmark = pytest.mark.unit


def system(env: ScriptEnv | None = None, flaws: frozenset[str] = frozenset(), **dials: str) -> ModelSystem:
    layout = Layout("DAG1", ("MBX1", "MBX2", "MBX3"), ("MBXS1",), {"DB1": ("MBX1", "MBX2", "MBX3"), "SDB1": ("MBXS1",)})
    return ModelSystem(layout, env or ScriptEnv(), flaws, dials=dials)


class Recorder:
    """Collects the (entity, kind, attrs) triples and replays them through the monitor."""

    def __init__(self, sysm: ModelSystem) -> None:
        self.sys, self.outs = sysm, list(sysm.initial)

    def __call__(self, name: str, *args, **kw):
        out = getattr(self.sys, name)(*args, **kw)
        self.outs.extend(out)
        assert check_world(self.sys.world) == []
        return out

    def violations(self) -> list:
        from tests.am.test_monitor import as_events

        return Replay(Options()).feed(as_events(self.outs))


def kinds(outs, entity: str = "DB1") -> list[tuple[str, str | None]]:
    keep = (ev.ACLL_START, ev.MOUNT_START, ev.MOUNT_FAIL, ev.MOUNTED, ev.BCSS_END)
    return [(k, a.get("server")) for e, k, a in outs if e == entity and k in keep]


def test_mount_failure_falls_through_to_next_copy() -> None:
    """AM-025: the first copy does not mount; ACLL, dial and mount are repeated on the next."""
    r = Recorder(system(ScriptEnv(fail_mount={"MBX2"})))
    out = r("fail_database", "DB1")
    assert kinds(out) == [
        (ev.ACLL_START, "MBX2"),
        (ev.MOUNT_START, "MBX2"),
        (ev.MOUNT_FAIL, "MBX2"),
        (ev.ACLL_START, "MBX3"),
        (ev.MOUNT_START, "MBX3"),
        (ev.MOUNTED, "MBX3"),
        (ev.BCSS_END, "MBX3"),
    ]
    assert r.sys.mounted("DB1") == {"MBX3"} and r.violations() == []


def test_dial_exceeded_moves_to_next_copy_and_pam_moves_with_quorum() -> None:
    """AM-024 and AM-006: the PAM (MBX1) crashes; MBX2 misses 10 logs > 6 and is passed over."""
    r = Recorder(system(MBX3="BestAvailability"))
    r("generate_logs", "DB1", 20, {"MBX2": 10, "MBX3": 12})
    out = r("crash", "MBX1")
    assert [a["server"] for _, k, a in out if k == ev.PAM_ACQUIRE] == ["MBX2"]
    acll = [(a["server"], a["missing"], a["ok"]) for _, k, a in out if k == ev.ACLL_END]
    assert acll == [("MBX2", 10, False), ("MBX3", 12, True)]
    assert r.sys.mounted("DB1") == {"MBX3"} and r.violations() == []


def test_all_copies_over_dial_is_exhausted() -> None:
    r = Recorder(system())
    r("generate_logs", "DB1", 20, {"MBX2": 10, "MBX3": 12})
    out = r("crash", "MBX1")
    assert [a["outcome"] for _, k, a in out if k == ev.BCSS_END] == ["exhausted"]
    assert r.sys.mounted("DB1") == frozenset() and r.violations() == []


def test_no_candidate_means_no_automatic_activation() -> None:
    """AM-050."""
    r = Recorder(system())
    r("set_copy", "DB1", "MBX2", status="Failed")
    r("set_copy", "DB1", "MBX3", status="Suspended")
    out = r("fail_database", "DB1")
    assert [a["outcome"] for _, k, a in out if k == ev.BCSS_END] == ["no_candidate"]
    assert r.sys.mounted("DB1") == frozenset() and r.violations() == []
    out = r("set_copy", "DB1", "MBX3", status="Healthy")  # repaired: the PAM retries
    assert r.sys.mounted("DB1") == {"MBX3"} and r.violations() == []


def test_partition_minority_pam_steps_down() -> None:
    """AM-005, AM-009, AM-I13: MBX1 (PAM, active) is cut off; the majority elects MBX2 and fails over."""
    r = Recorder(system())
    out = r("partition", [["MBX1"]])
    assert (ev.PAM_RELEASE, "MBX1") in [(k, a.get("server")) for _, k, a in out]
    assert r.sys.pams() == {"MBX2"} and r.sys.mounted("DB1") == {"MBX2"}
    assert r.violations() == []
    r("heal")
    r("query", "DB1", "MBX3")
    assert r.outs[-1][2]["answer"] == "MBX2" and r.violations() == []


def test_second_pam_after_partition_is_caught() -> None:
    sysm = system(flaws=frozenset({"second_pam"}))
    sysm.partition([["MBX1"]])
    assert any("single-pam" in m or "pam-owns-quorum" in m for m in check_world(sysm.world))


def test_sam_asks_pam() -> None:
    """AM-013: a SAM detecting a failure asks the PAM, which runs BCSS (AM-022)."""
    r = Recorder(system())
    r("switchover", "DB1", False)  # DB1 now on MBX2, a SAM
    out = r("fail_database", "DB1")
    assert [(k, a.get("server"), a.get("pam")) for _, k, a in out if k == ev.FAILOVER_REQUEST] == [
        (ev.FAILOVER_REQUEST, "MBX2", "MBX1")
    ]
    assert [a["pam"] for _, k, a in out if k == ev.BCSS_START] == ["MBX1"] and r.violations() == []


def test_responder_failover_needs_healthier_component() -> None:
    """AM-032: OutlookWeb fails on MBX1; MBX2 has it unhealthy too, so MBX3 is chosen."""
    r = Recorder(system())
    r("set_health", "MBX2", "OutlookWeb", "Unhealthy")
    r("responder_failover", "MBX1", "OutlookWeb")
    assert r.sys.mounted("DB1") == {"MBX3"} and r.violations() == []
    r("set_health", "MBX1", "OutlookWeb", "Unhealthy")
    r("set_health", "MBX2", "OutlookWeb", "Unhealthy")
    out = r("responder_failover", "MBX3", "OutlookWeb")  # nowhere better: BCSS finds nothing, remount
    assert [a["outcome"] for _, k, a in out if k == ev.BCSS_END] == ["no_candidate"]
    assert r.sys.mounted("DB1") == {"MBX3"} and r.violations() == []


def test_pam_moved_before_maintenance() -> None:
    """AM-007."""
    r = Recorder(system())
    out = r("maintenance", "MBX1")
    kinds_ = [k for _, k, _ in out]
    assert kinds_.index(ev.PAM_RELEASE) < kinds_.index(ev.MAINTENANCE)
    assert r.sys.pams() == {"MBX2"} and r.violations() == []


def test_standalone_never_fails_over() -> None:
    """AM-002: a standalone server's database stays down until repaired, then its own AM mounts it."""
    r = Recorder(system())
    out = r("fail_database", "SDB1")
    assert ev.BCSS_START not in [k for _, k, _ in out] and r.sys.mounted("SDB1") == frozenset()
    r("crash", "MBXS1")
    r("set_copy", "SDB1", "MBXS1", status="Healthy")
    r("restart", "MBXS1")
    assert r.sys.mounted("SDB1") == {"MBXS1"} and r.violations() == []


def test_lossless_switchover_uses_preference() -> None:
    """AM-037: MBX3 has the shorter queue but MBX2 the lower preference value."""
    r = Recorder(system())
    r("generate_logs", "DB1", 5, {"MBX2": 3, "MBX3": 0})
    r("switchover", "DB1", True)
    assert r.sys.mounted("DB1") == {"MBX2"}
    r("switchover", "DB1", False)  # not lossless, GoodAvailability everywhere: copy queue first
    assert r.sys.mounted("DB1") == {"MBX1"} and r.violations() == []


@pytest.mark.model
@pytest.mark.parametrize("seed", range(10))
def test_liveness_after_faults_stop(seed: int) -> None:
    """Property failover-mounts (AM-020) and pam-moves-with-quorum (AM-006) under their fairness
    assumption: after the random phase, faults stop; every database ends mounted once, with one PAM."""
    from model.am.monitor import AmMonitor
    from model.am.sim import simulate

    events = simulate(seed, steps=300, liveness=True)
    replay = Replay(Options())
    assert replay.feed(events) == [], f"seed {seed}"
    assert AmMonitor().check(events).violations == ()
    assert len(replay.w.claims) == 1
    for db, d in replay.w.dbs.items():
        assert len(d.on) == 1, f"seed {seed}: {db} mounted on {sorted(d.on)} after the liveness phase"


@pytest.mark.model
def test_liveness_twin_without_the_fair_phase() -> None:
    """The twin that must fail: without the liveness phase some run ends with a database unmounted."""
    from model.am.sim import simulate

    for seed in range(10):
        replay = Replay(Options())
        replay.feed(simulate(seed, steps=300))
        if any(len(d.on) != 1 for d in replay.w.dbs.values()):
            return
    pytest.fail("every run converged even without the fair phase: the liveness test proves nothing")
