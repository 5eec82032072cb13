"""Every claim comes back with its expected verdict, its twin the other way, and never vacuously."""

from __future__ import annotations

import pytest
import z3

from spec.claims.engine import Claim, Env, decide, fmt_ms, maximise, run_claim
from spec.claims.registry import all_claims, run_all

CLAIMS = all_claims()


@pytest.mark.unit
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_claim_verdict_and_twin(claim: Claim) -> None:
    result = run_claim(claim)
    assert result.main.verdict == claim.expected, (claim.name, result.main)
    assert result.twin.verdict == claim.twin_expected, (claim.name, result.twin)
    if claim.expected == "refuted":
        assert result.main.counterexample, "a refutation must come with a counterexample"
    else:
        assert result.twin.counterexample, "the twin's refutation must come with a counterexample"


@pytest.mark.unit
@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.name)
def test_assumptions_alone_are_satisfiable(claim: Claim) -> None:
    for problem in (claim.build(), claim.twin()):
        solver = z3.Solver()
        solver.add(*(expr for _, expr in problem.assumptions))
        assert solver.check() == z3.sat, claim.name


@pytest.mark.unit
def test_names_unique_and_refuted_claims_document_a_finding() -> None:
    names = [c.name for c in CLAIMS]
    assert len(names) == len(set(names))
    for c in CLAIMS:
        if c.expected == "refuted":
            assert c.finding, f"{c.name}: a claim refuted as stated must say why (finding)"
        if c.repairs:
            assert c.repairs in names and c.expected == "proved"


@pytest.mark.unit
def test_every_claim_refuted_as_stated_has_a_proved_repair_or_is_a_documented_reading() -> None:
    repaired = {c.repairs for c in CLAIMS if c.repairs}
    for name in ("sr.new_db_delay.as_stated", "sr.same_db_delay.as_stated", "bf.initial_request.as_stated"):
        assert name in repaired


@pytest.mark.unit
def test_vacuous_assumptions_are_reported_not_proved() -> None:
    e = Env()
    t = e.time("t")
    e.assume("t positive", t > 0)
    e.assume("t negative", t < 0)
    outcome = decide(e.problem(t == 42), 1_000)
    assert outcome.verdict == "vacuous"
    assert "t positive" in outcome.detail


@pytest.mark.unit
def test_refutation_shows_the_counterexample_values() -> None:
    e = Env()
    hb = e.param("ShadowHeartbeatFrequency")
    d = e.time("delay")
    e.assume("delay within two periods", z3.And(d >= 0, d <= 2 * hb))
    outcome = decide(e.problem(d <= hb), 1_000)
    assert outcome.verdict == "refuted"
    assert outcome.counterexample["ShadowHeartbeatFrequency"] == "2min (120000 ms)"


@pytest.mark.unit
def test_status_message_bound_is_tight_to_the_millisecond() -> None:
    """The 36-hour bound (seed 001, Replication Status Thread) is a supremum: the largest delay is 1 ms "
    "under."""
    from spec.catalogue import param_ms
    from spec.claims.pf import _status_message

    problem = _status_message()
    delay = dict(problem.show)["delay"]
    bound = param_ms("ReplicationSendStatusTimeout") + param_ms("ReplicationStatusThreadPeriod")
    assert bound == 36 * 3_600_000
    assert maximise(problem, delay) == bound - 1


@pytest.mark.unit
def test_fmt_ms() -> None:
    assert fmt_ms(129_600_000) == "1d12h (129600000 ms)"
    assert fmt_ms(5) == "5 ms"
    assert fmt_ms(-61_000) == "-1min1s (-61000 ms)"


@pytest.mark.unit
def test_run_all_filters_by_prefix() -> None:
    results = run_all(["pf."])
    assert results and all(r.claim.name.startswith("pf.") for r in results)


@pytest.mark.unit
def test_solver_time_out_is_unknown_and_fails_the_claim() -> None:
    """Fermat for cubes is beyond the solver in 1 ms: the verdict must be 'unknown', never 'proved'."""

    def hard():
        e = Env()
        x, y, z = e.int("x"), e.int("y"), e.int("z")
        e.assume("positive", z3.And(x > 0, y > 0, z > 0))
        return e.problem(x * x * x + y * y * y != z * z * z)

    claim = Claim("fermat3", "SR-031", "no cubes sum to a cube", hard, "proved", "same", hard, timeout_ms=1)
    result = run_claim(claim)
    assert result.main.verdict == "unknown" and not result.ok
