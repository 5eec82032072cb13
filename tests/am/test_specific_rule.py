"""Every seed statement is judged by its own rule, and the most specific one leads.

Seed 002, "Best Copy Selection" (step 5: "the database doesn't mount, and PAM performs steps 3 and 4 on the
next best copy") and "Best copy selection process" (AM-034..AM-039). Hand-built traces (the issue 9
builder) with a twin each: the same run done right is valid. The mutants' first violation names the rule of
the statement each one breaks; a record rule (`bcss-record`, `acll-record`) appears only as evidence when a
behaviour rule fires on the same run.
"""

from __future__ import annotations

import pytest

from conformance.check import verdict
from model.am.monitor import AmMonitor
from model.am.mutants import MUTANTS, SIMULATORS
from model.am.rules import RULES
from tests.handbuilt.am.build import Trace
from tests.handbuilt.am.cases import _failover

pytestmark = pytest.mark.unit


def _rules(t: Trace) -> dict[str, str]:
    """Each rule reported, with its first explanation."""
    out: dict[str, str] = {}
    for v in verdict(t.events).violations:
        out.setdefault(v.rule, v.explanation)
    return out


def _failed_mount_then(what: str) -> Trace:
    """MBX2's mount fails; then the PAM mounts MBX2 again, retries it from ACLL, or goes on to MBX3."""
    t = _failover(Trace(f"am24-retry-{what}"))
    t.attempt("MBX2", lli_before=17, lli=20, lgen=20, mounts=False)
    if what == "mount":
        t.db("MOUNT_START", server="MBX2", by="MBX3").db("MOUNTED", server="MBX2")
        return t.copy("MBX2", status="Mounted").end("mounted", "MBX2")
    server = "MBX2" if what == "acll" else "MBX3"
    t.attempt(server, lli_before=20 if server == "MBX2" else 17, lli=20, lgen=20, active="MBX2")
    return t.end("mounted", server)


@pytest.mark.parametrize("what", ["mount", "acll"])
def test_a_copy_retried_after_its_mount_failed_is_next_best_copy(what: str) -> None:
    got = _rules(_failed_mount_then(what))
    assert set(got) == {"next-best-copy"}, got
    assert RULES["next-best-copy"].requirement == "AM-025"
    assert "MBX2" in got["next-best-copy"] and "next best copy" in got["next-best-copy"]


def test_twin_going_on_to_the_next_copy_is_valid() -> None:
    assert _rules(_failed_mount_then("next")) == {}


def _blocked(listed: list[str], tried: str) -> Trace:
    t = Trace(f"am24-blocked-{tried}").boot()
    t.db("AM_CONFIG", server="MBX2", database="DB1", blocked=True).copy("MBX2", blocked=True)
    t.logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure().bcss(listed)
    return t.attempt(tried, lli_before=17, lli=20, lgen=20).end("mounted", tried)


def test_activating_a_blocked_copy_is_never_blocked_with_the_record_as_evidence() -> None:
    got = _rules(_blocked(["MBX2:1:1", "MBX3:1:1"], "MBX2"))
    assert set(got) == {"never-blocked"}, got  # not bcss-record (AM-039): the record is the evidence
    why = got["never-blocked"]
    assert "MBX2" in why and "blocked from activation" in why and "excluded: MBX2 blocked" in why
    assert "evidence" in why and "bcss-record" in why


def test_twin_a_run_leaving_the_blocked_copy_out_is_valid() -> None:
    assert _rules(_blocked(["MBX3:1:1"], "MBX3")) == {}


def test_a_wrong_record_alone_is_still_reported_under_the_record_rule() -> None:
    """Nothing the run does is wrong, only what BCSS_START restates (its source): bcss-record, at the end of
    the run."""
    t = Trace("am24-record-only").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(["MBX2:1:1", "MBX3:1:1"], source="MBX2")
    got = _rules(t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2"))
    assert set(got) == {"bcss-record"}, got


def test_a_sort_recorded_against_the_statement_is_that_statement_s_rule() -> None:
    """BCSS_START says it sorted by activation preference where no server is Lossless: AM-035's rule."""
    t = Trace("am24-sort").boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure()
    t.bcss(["MBX2:1:1", "MBX3:1:1"], sort="ActivationPreference")
    got = _rules(t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2"))
    assert set(got) == {"sort-copy-queue"} and "ordered by copy queue length (AM-035)" in got["sort-copy-queue"]


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_each_mutant_first_violation_names_the_rule_it_breaks(name: str) -> None:
    """The first violation of each mutant's trace (its prelude reaches the flaw first) is the rule of the
    statement the mutant breaks, never a record rule or a general one standing in for it."""
    _, rule, requirement = MUTANTS[name]
    for seed in range(3):
        events = SIMULATORS[name](seed, steps=40)
        seq = {e.event_id: e.seq for e in events}
        violations = AmMonitor().check(events).violations
        assert violations, (name, seed)
        first = min(violations, key=lambda v: seq[v.event_ids[-1]])
        assert (first.rule, first.requirement) == (rule, requirement), (name, seed, str(first))
