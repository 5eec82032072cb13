"""Hand-built Active Manager traces for the four rule families, each with its expected verdict.

`CASES[name] = (family, build, expected)`: `expected` is the exact set of rules the verdict must report
(empty: valid), or `"unknown"` when the trace cannot be judged. Written from seed 002 alone, not from
the mutants; valid-but-unusual traces (another tied copy, a recorded threshold other than the catalogue's)
matter as much as the violations.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.handbuilt.am.build import Trace

Case = tuple[str, Callable[[], Trace], "frozenset[str] | str"]
ORDER3 = ["MBX2:1:1", "MBX3:1:1"]


def _failover(t: Trace, order: list[str] | None = ORDER3, lgen: int = 20) -> Trace:
    """DB1 is behind by 3 logs on MBX2 and MBX3, the SAM on MBX1 reports a failure, the PAM runs BCSS."""
    return t.boot().logs(lgen, {"MBX1": lgen, "MBX2": lgen - 3, "MBX3": lgen - 3}).sam_failure().bcss(order)


# ---- family 1: trust (configured values from the configuration, restated facts checked) -----------------


def recorded_threshold_valid() -> Trace:
    """GoodAvailability allows 20 missing logs in this run's configuration: 15 missing is within it."""
    t = Trace(
        "am9-f1-recorded-threshold",
        bcss={"thresholds": [["Lossless", 0], ["GoodAvailability", 20], ["BestAvailability", 30]]},
    )
    t.boot().logs(40, {"MBX1": 40, "MBX2": 20, "MBX3": 10}).sam_failure().bcss(["MBX2:1:3", "MBX3:1:3"])
    return t.attempt("MBX2", lli_before=20, lli=25, lgen=40, threshold=20).end("mounted", "MBX2")


def threshold_claimed_by_event() -> Trace:
    """The configuration says 6; ACLL_END claims 20 and mounts a copy missing 15 logs."""
    t = Trace("am9-f1-threshold-claimed")
    t.boot().logs(40, {"MBX1": 40, "MBX2": 20, "MBX3": 10}).sam_failure().bcss(["MBX2:1:3", "MBX3:1:3"])
    return t.attempt("MBX2", lli_before=20, lli=25, lgen=40, threshold=20, ok=True).end("mounted", "MBX2")


def thresholds_not_recorded() -> Trace:
    """The seed gives no dial numbers: a trace that records none cannot be judged on the dial."""
    t = _failover(Trace("am9-f1-no-thresholds", drop=("thresholds",)))
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def role_restated_wrong() -> Trace:
    t = Trace("am9-f1-role")
    t.boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure(role="PAM").bcss(ORDER3)
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def quorum_restated_wrong() -> Trace:
    t = Trace("am9-f1-quorum").boot()
    t.dag("PAM_RELEASE", server="MBX3", reason="move")
    return t.dag("PAM_ACQUIRE", server="MBX2", quorum=["MBX2"])


def blocked_restated_wrong() -> Trace:
    """MBX2's copy is configured blocked; its COPY_STATE says it is not, and BCSS activates it."""
    t = Trace("am9-f1-blocked").boot()
    t.db("AM_CONFIG", server="MBX2", database="DB1", blocked=True)
    t.copy("MBX2", blocked=False)
    t.logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure().bcss(ORDER3)
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def missing_restated_wrong() -> Trace:
    t = _failover(Trace("am9-f1-missing"))
    return t.attempt("MBX2", lli_before=17, lli=18, lgen=20, missing=0).end("mounted", "MBX2")


def sort_restated_wrong() -> Trace:
    t = Trace("am9-f1-sort").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(ORDER3, sort="ActivationPreference")
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def source_restated_wrong() -> Trace:
    """BCSS_START names MBX2 as the source; the active copy was on MBX1. The run itself is right: the record
    rule alone (issue 24: a behaviour rule would lead and carry it as evidence)."""
    t = Trace("am9-f1-source").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(ORDER3, source="MBX2")
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def request_to_wrong_pam() -> Trace:
    t = Trace("am9-f1-request").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17})
    t.db("FAILURE", server="MBX1", what="database", component=None, detector="MBX1", role="SAM")
    t.db("DISMOUNTED", server="MBX1", reason="database").copy("MBX1", status="Failed")
    t.db("FAILOVER_REQUEST", server="MBX1", pam="MBX2").bcss(ORDER3)
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def active_move_from_wrong_source() -> Trace:
    t = _failover(Trace("am9-f1-move-src"))
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20, active="MBX3").end("mounted", "MBX2")


def dismount_reason_false() -> Trace:
    """MBX1 is dismounted 'because its server is down' while the recorded view has it up."""
    t = Trace("am9-f1-dismount-reason").boot()
    return t.db("DISMOUNTED", server="MBX1", reason="server_down").copy("MBX1", status="ServiceDown")


def no_candidate_claimed() -> Trace:
    """BCSS gives up claiming there is no candidate although two healthy copies qualify."""
    return _failover(Trace("am9-f1-no-candidate"), order=[]).end("no_candidate")


def acll_from_wrong_source() -> Trace:
    t = _failover(Trace("am9-f1-acll-source"))
    t.db("ACLL_START", server="MBX2", source="MBX3").copy("MBX2", lli=20)
    t.db("ACLL_END", server="MBX2", lli_before=17, lli=20, missing=0, threshold=6, ok=True)
    t.db("ACTIVE_MOVE", src="MBX1", dst="MBX2", by="MBX3").db("MOUNT_START", server="MBX2", by="MBX3")
    return t.db("MOUNTED", server="MBX2").copy("MBX2", status="Mounted").end("mounted", "MBX2")


def dag_facts_lie() -> Trace:
    """The DAG facts recorded for the databases' monitors name MBX2 as PAM; the DAG events make it MBX3."""
    t = Trace("am9-f1-dag-facts-lie").boot()
    return t.dag("SERVER_HEALTH", server="MBX2", component="Search", priority="Low", state="Degraded").flush(
        claims=["MBX2"]
    )


def no_dag_facts() -> Trace:
    """Nothing records the DAG facts for the databases: a database cannot be judged on its own."""
    return (
        _failover(Trace("am9-f1-no-dag-facts", dag_facts=False))
        .attempt("MBX2", lli_before=17, lli=20, lgen=20)
        .end("mounted", "MBX2")
    )


def _nothing_else(name: str) -> Trace:
    t = Trace(name).boot()
    return t.copy("MBX2", status="Failed").copy("MBX3", status="Failed")


def remount_after_switchover_unflagged_valid() -> Trace:
    """A switchover finds no other copy; the PAM remounts the source. The event carries no 'remount' flag:
    the monitor derives that this is the allowed remount from the run it saw."""
    t = _nothing_else("am9-f1-remount").db("SWITCHOVER", lossless=False)
    t.db("DISMOUNTED", server="MBX1", reason="switchover").copy("MBX1", status="Healthy")
    t.bcss([], trigger="switchover").end("no_candidate")
    return t.db("MOUNT_START", server="MBX1", by="MBX3").db("MOUNTED", server="MBX1").copy("MBX1", status="Mounted")


def remount_flag_after_failure() -> Trace:
    """After a failure run found nothing, a mount flagged 'remount' is still a mount outside BCSS."""
    t = _nothing_else("am9-f1-remount-flag").sam_failure().bcss([]).end("no_candidate")
    t.db("MOUNT_START", server="MBX1", by="MBX3", remount=True).db("MOUNTED", server="MBX1")
    return t.copy("MBX1", status="Mounted")


# ---- family 2: parameters read from the recorded configuration ------------------------------------------


def _rq_case(name: str, rq_below: int) -> Trace:
    """MBX2: copy queue 0, replay queue 60; MBX3: copy queue 5, replay queue 0. With a replay-queue bound of
    100 both meet set 1 and MBX2 (shorter copy queue) comes first; with 50, MBX2 falls to set 6."""
    t = Trace(name, bcss={"rq_below": rq_below}).boot()
    t.copy("MBX2", rq=60)
    t.logs(20, {"MBX1": 20, "MBX2": 20, "MBX3": 15}).sam_failure().bcss(["MBX2:1:1", "MBX3:1:1"])
    return t.attempt("MBX2", lli_before=20, lli=20, lgen=20).end("mounted", "MBX2")


def rq_bound_recorded_valid() -> Trace:
    return _rq_case("am9-f2-rq-100", 100)


def rq_bound_recorded_invalid() -> Trace:
    return _rq_case("am9-f2-rq-50", 50)


def _scope_case(name: str, scope: str) -> Trace:
    """MBX1 (the source) is Lossless, MBX2 GoodAvailability; MBX2 mounts missing 3 logs."""
    t = Trace(name, bcss={"dial_scope": scope}).boot(dials={"MBX1": "Lossless"})
    t.logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(["MBX2:1:1", "MBX3:1:1"], sort="ActivationPreference")
    threshold = 6 if scope == "TargetServer" else 0
    return t.attempt("MBX2", lli_before=17, lli=17, lgen=20, threshold=threshold, ok=True).end("mounted", "MBX2")


def dial_target_scope_valid() -> Trace:
    return _scope_case("am9-f2-scope-target", "TargetServer")


def dial_most_restrictive_invalid() -> Trace:
    return _scope_case("am9-f2-scope-strict", "MostRestrictive")


# ---- family 3: state changed outside the protocol --------------------------------------------------------


def mounted_without_request() -> Trace:
    t = Trace("am9-f3-no-request").boot()
    t.db("DISMOUNTED", server="MBX1", reason="database").copy("MBX1", status="Failed")
    return t.db("MOUNTED", server="MBX2").copy("MBX2", status="Mounted")


def second_mounted_copy() -> Trace:
    t = Trace("am9-f3-two-mounted").boot()
    t.db("ACTIVE_MOVE", src="MBX1", dst="MBX2", by="MBX3").db("MOUNT_START", server="MBX2", by="MBX3")
    return t.db("MOUNTED", server="MBX2")


def minority_keeps_mounted() -> Trace:
    t = Trace("am9-f3-minority-keeps").boot()
    t.view(("MBX1", "MBX2", "MBX3"), ("MBX1", "MBX2", "MBX3"), ["MBX1", "MBX2+MBX3"])
    return t.view(("MBX1", "MBX2", "MBX3"), ("MBX1", "MBX2", "MBX3"), ["MBX1+MBX2+MBX3"])


def minority_mounts() -> Trace:
    t = Trace("am9-f3-minority-mounts").boot()
    t.view(("MBX1", "MBX2", "MBX3"), ("MBX1", "MBX2", "MBX3"), ["MBX1", "MBX2+MBX3"])
    t.db("DISMOUNTED", server="MBX1", reason="lost_quorum").copy("MBX1", status="Dismounted")
    return t.db("MOUNT_START", server="MBX1", by="MBX1").db("MOUNTED", server="MBX1")


def mount_request_for_passive_copy() -> Trace:
    """The PAM asks to mount MBX2 without first moving the active designation there (AM-008, AM-009)."""
    t = _failover(Trace("am9-f3-mount-passive"))
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20, active="MBX2").end("mounted", "MBX2")


def pam_change_without_trigger() -> Trace:
    t = Trace("am9-f3-pam-no-trigger").boot()
    t.dag("PAM_RELEASE", server="MBX3", reason="lost_quorum")
    return t.dag("PAM_ACQUIRE", server="MBX2", quorum=["MBX1", "MBX2", "MBX3"])


def release_by_non_pam() -> Trace:
    return Trace("am9-f3-release-sam").boot().dag("PAM_RELEASE", server="MBX2", reason="move")


def status_mounted_without_mount() -> Trace:
    return Trace("am9-f3-status-mounted").boot().copy("MBX2", status="Mounted")


def dismount_not_mounted() -> Trace:
    return Trace("am9-f3-dismount-idle").boot().db("DISMOUNTED", server="MBX2", reason="switchover")


def service_down_while_running() -> Trace:
    return Trace("am9-f3-servicedown-up").boot().copy("MBX2", status="ServiceDown")


def admin_move_then_maintenance_valid() -> Trace:
    t = Trace("am9-f3-move-maintain").boot()
    t.dag("PAM_RELEASE", server="MBX3", reason="move").dag(
        "PAM_ACQUIRE", server="MBX2", quorum=["MBX1", "MBX2", "MBX3"]
    )
    t.dag("MAINTENANCE", server="MBX3")
    t.view(("MBX1", "MBX2", "MBX3"), ("MBX1", "MBX2"), ["MBX1+MBX2+MBX3"])
    return t.copy("MBX3", status="ServiceDown")


def crash_failover_valid() -> Trace:
    """The active server crashes: dismounted as down, BCSS by the PAM, ACLL from an unreachable source copies
    nothing and the copy within its dial mounts."""
    t = Trace("am9-f3-crash").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17})
    t.view(("MBX1", "MBX2", "MBX3"), ("MBX2", "MBX3"), ["MBX1+MBX2+MBX3"])
    t.db("DISMOUNTED", server="MBX1", reason="server_down").copy("MBX1", status="ServiceDown")
    t.bcss(ORDER3)
    return t.attempt("MBX2", lli_before=17, lli=17, lgen=20).end("mounted", "MBX2")


def half_is_no_quorum() -> Trace:
    """Four members split two and two: neither half is a strict majority, so the PAM (MBX3) must let go
    (AM-I13); it keeps the role to the end of the trace."""
    m = ("MBX1", "MBX2", "MBX3", "MBX4")
    t = Trace("am9-f3-half").boot(members=m)
    t.view(m, m, ["MBX3+MBX4", "MBX1+MBX2"])
    return t.db("DISMOUNTED", server="MBX1", reason="lost_quorum").copy("MBX1", status="Dismounted")


def three_of_four_is_quorum_valid() -> Trace:
    m = ("MBX1", "MBX2", "MBX3", "MBX4")
    t = Trace("am9-f3-three-of-four").boot(members=m)
    return t.view(m, m, ["MBX1+MBX2+MBX3", "MBX4"])


# ---- family 4: choices the seed leaves open --------------------------------------------------------------


def _tie(name: str) -> Trace:
    """MBX2 and MBX3 both have activation preference 2 and the same copy queue: tied on every key."""
    t = Trace(name).boot(prefs={"MBX2": 2, "MBX3": 2})
    return t.logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()


def tie_other_copy_valid() -> Trace:
    t = _tie("am9-f4-tie-other").bcss(["MBX3:1:1", "MBX2:1:1"])
    return t.attempt("MBX3", lli_before=17, lli=20, lgen=20).end("mounted", "MBX3")


def tie_other_copy_unrecorded_list_valid() -> Trace:
    t = _tie("am9-f4-tie-no-list").bcss(None, sort=None)
    return t.attempt("MBX3", lli_before=17, lli=20, lgen=20).end("mounted", "MBX3")


def tie_first_fails_then_other_valid() -> Trace:
    t = _tie("am9-f4-tie-fall-through").bcss(["MBX3:1:1", "MBX2:1:1"])
    t.attempt("MBX3", lli_before=17, lli=20, lgen=20, mounts=False)
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20, active="MBX3").end("mounted", "MBX2")


def lossless_preference_tie_valid() -> Trace:
    """Lossless on MBX1 sorts by preference only: MBX3 (longer queue) and MBX2 (preference tie) may go
    in either order."""
    t = Trace("am9-f4-lossless-tie").boot(dials={"MBX1": "Lossless"}, prefs={"MBX2": 2, "MBX3": 2})
    t.logs(20, {"MBX1": 20, "MBX2": 19, "MBX3": 12}).sam_failure()
    t.bcss(["MBX3:1:1", "MBX2:1:1"], sort="ActivationPreference")
    return t.attempt("MBX3", lli_before=12, lli=20, lgen=20).end("mounted", "MBX3")


def not_a_tie_invalid() -> Trace:
    t = Trace("am9-f4-not-tied").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(["MBX3:1:1", "MBX2:1:1"])
    return t.attempt("MBX3", lli_before=17, lli=20, lgen=20).end("mounted", "MBX3")


def gives_up_leaving_tied_copy() -> Trace:
    t = _tie("am9-f4-gives-up").bcss(["MBX3:1:1", "MBX2:1:1"])
    return t.attempt("MBX3", lli_before=17, lli=20, lgen=20, mounts=False).end("exhausted")


def own_list_not_followed() -> Trace:
    t = _tie("am9-f4-own-list").bcss(["MBX2:1:1", "MBX3:1:1"])
    return t.attempt("MBX3", lli_before=17, lli=20, lgen=20).end("mounted", "MBX3")


def f(*rules: str) -> frozenset[str]:
    return frozenset(rules)


CASES: dict[str, Case] = {
    "recorded_threshold_valid": ("trust", recorded_threshold_valid, f()),
    "threshold_claimed_by_event": ("trust", threshold_claimed_by_event, f("dial")),
    "thresholds_not_recorded": ("trust", thresholds_not_recorded, "unknown"),
    "role_restated_wrong": ("trust", role_restated_wrong, f("role-record")),
    "quorum_restated_wrong": ("trust", quorum_restated_wrong, f("role-record")),
    "blocked_restated_wrong": (
        "trust",
        blocked_restated_wrong,
        f("copy-config-record", "never-blocked"),
    ),
    "missing_restated_wrong": ("trust", missing_restated_wrong, f("acll-record")),
    "sort_restated_wrong": ("trust", sort_restated_wrong, f("sort-copy-queue")),
    "source_restated_wrong": ("trust", source_restated_wrong, f("bcss-record")),
    "request_to_wrong_pam": ("trust", request_to_wrong_pam, f("role-record", "sam-asks-pam")),
    "active_move_from_wrong_source": ("trust", active_move_from_wrong_source, f("active-record")),
    "dismount_reason_false": ("trust", dismount_reason_false, f("active-record", "copy-status-transition")),
    "no_candidate_claimed": ("trust", no_candidate_claimed, f("selection-order")),
    "acll_from_wrong_source": ("trust", acll_from_wrong_source, f("acll-record")),
    "dag_facts_lie": ("trust", dag_facts_lie, f("dag-record")),
    "no_dag_facts": ("trust", no_dag_facts, "unknown"),
    "remount_after_switchover_unflagged_valid": ("trust", remount_after_switchover_unflagged_valid, f()),
    "remount_flag_after_failure": ("trust", remount_flag_after_failure, f("mount-outside-bcss")),
    "rq_bound_recorded_valid": ("parameters", rq_bound_recorded_valid, f()),
    "rq_bound_recorded_invalid": ("parameters", rq_bound_recorded_invalid, f("selection-order")),
    "dial_target_scope_valid": ("parameters", dial_target_scope_valid, f()),
    "dial_most_restrictive_invalid": ("parameters", dial_most_restrictive_invalid, f("dial")),
    "mounted_without_request": ("transitions", mounted_without_request, f("mount-transition")),
    "second_mounted_copy": ("transitions", second_mounted_copy, f("mount-outside-bcss", "one-active-copy")),
    "minority_keeps_mounted": ("transitions", minority_keeps_mounted, f("minority-mount")),
    "minority_mounts": (
        "transitions",
        minority_mounts,
        f("minority-mount", "only-pam-activates", "mount-outside-bcss"),
    ),
    "mount_request_for_passive_copy": ("transitions", mount_request_for_passive_copy, f("mount-not-active")),
    "pam_change_without_trigger": ("transitions", pam_change_without_trigger, f("pam-transition")),
    "release_by_non_pam": ("transitions", release_by_non_pam, f("pam-transition")),
    "status_mounted_without_mount": ("transitions", status_mounted_without_mount, f("copy-status-transition")),
    "dismount_not_mounted": ("transitions", dismount_not_mounted, f("mount-transition")),
    "service_down_while_running": ("transitions", service_down_while_running, f("copy-status-transition")),
    "admin_move_then_maintenance_valid": ("transitions", admin_move_then_maintenance_valid, f()),
    "crash_failover_valid": ("transitions", crash_failover_valid, f()),
    "half_is_no_quorum": ("transitions", half_is_no_quorum, f("pam-owns-quorum")),
    "three_of_four_is_quorum_valid": ("transitions", three_of_four_is_quorum_valid, f()),
    "tie_other_copy_valid": ("choices", tie_other_copy_valid, f()),
    "tie_other_copy_unrecorded_list_valid": ("choices", tie_other_copy_unrecorded_list_valid, f()),
    "tie_first_fails_then_other_valid": ("choices", tie_first_fails_then_other_valid, f()),
    "lossless_preference_tie_valid": ("choices", lossless_preference_tie_valid, f()),
    "not_a_tie_invalid": ("choices", not_a_tie_invalid, f("sort-copy-queue")),
    "gives_up_leaving_tied_copy": ("choices", gives_up_leaving_tied_copy, f("selection-order")),
    "own_list_not_followed": ("choices", own_list_not_followed, f("selection-order")),
}
