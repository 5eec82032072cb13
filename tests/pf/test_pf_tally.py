"""What the public folder monitor judged, per rule (issue 29): the fold's `Tally`, its input faults, its data.

- For the model and every mutant: no rule has more violations than judged instances (the engine's invariant);
  the model's clean runs judge every rule of the table at least once (`UNREACHABLE` lists the ones the
  simulator cannot reach: none today). Twin: a fold whose rules never call `judge` breaks the invariant on a
  mutant, so the check can fail; a trace stripped of the recorded latency bound leaves convergence (PF-035)
  judged 0 times, with the reason.
- A bug planted in rule code (a `KeyError`, a `None` dereferenced) makes `conformance.check.verdict` raise,
  never return unknown; its twins, a trace with a required attribute deleted or its opening events removed,
  stay unknown with a note (`model/pf/faults.py`).
- A fold saved and restored mid-trace gives the tally of one pass.
- Every violation carries JSON-able `data`; the timing rules their deadline or bound (seeds 001, 003).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

import pytest

from conformance.check import run_monitor, trace_contexts, verdict
from model.pf import handlers as H
from model.pf import rules as R
from model.pf.monitor import PfFold, PFMonitor
from model.pf.mutants import EXPECTED_RULE, MUTANTS
from model.pf.sim import simulate
from traces.schema import Event
from traces.verdict import MonitorResult, Rule, Tally, Verdict, in_seq_order, restore_fold, save_fold

pytestmark = pytest.mark.model

RUNS: dict[str, Callable[[int], list[Event]]] = {"model": simulate, **MUTANTS}
SEEDS = (1, 2)
# always-rules the simulator's clean runs cannot reach, with the reason: none (every rule of the table is
# judged by seeds 1 and 2, with and without the concurrent removal of BF-I14)
UNREACHABLE: dict[str, str] = {}


@cache
def _trace(name: str, seed: int) -> list[Event]:
    return list(in_seq_order(RUNS[name](seed)))


def _results(events: Sequence[Event]) -> list[MonitorResult]:
    return run_monitor(PFMonitor(), events)


def over_judged(result: MonitorResult) -> dict[str, tuple[int, int]]:
    """Rules with more violations than judged instances: name -> (violations, judged)."""
    assert result.tally is not None
    found = Counter(v.rule for v in result.violations)
    return {r: (n, result.tally.judged.get(r, 0)) for r, n in found.items() if n > result.tally.judged.get(r, 0)}


@pytest.mark.parametrize("name", sorted(RUNS))
def test_no_rule_has_more_violations_than_judged_instances(name: str) -> None:
    for seed in SEEDS:
        for result in _results(_trace(name, seed)):
            assert result.tally is not None
            assert not over_judged(result), (name, seed, over_judged(result))
            assert set(result.tally.judged) | set(result.tally.unjudged) <= set(R.RULES), (name, seed)


def test_the_model_judges_every_rule_it_can_reach() -> None:
    judged: Counter[str] = Counter()
    for seed in SEEDS:
        for concurrent_removal in (False, True):
            for result in _results(simulate(seed, concurrent_removal=concurrent_removal)):
                assert result.verdict is Verdict.VALID and result.tally is not None
                judged.update(result.tally.judged)
    never = {name for name in R.RULES if judged[name] == 0}
    assert never == set(UNREACHABLE), f"rules never judged on clean runs: {sorted(never - set(UNREACHABLE))}"
    assert judged[R.CONVERGENCE.name] > 0  # the eventually-rule: once per folder at its END


def test_twin_a_fold_that_never_judges_breaks_the_invariant(monkeypatch: pytest.MonkeyPatch) -> None:
    def flag_only(self: PfFold, rule: Rule, ev: Event, why: object, *more: object, **kw: Any) -> None:
        if why:  # `PfFold.flag` without its count
            evs: Any = (*more, ev)
            data = kw.get("data") or {}
            self.violations.append(rule.violated(evs, f"{ev.node}: {why}", at=ev, entity=kw.get("entity"), **data))

    monkeypatch.setattr(Tally, "judge", lambda self, rule, n=1: None)
    monkeypatch.setattr(PfFold, "flag", flag_only)
    (result,) = _results(_trace("answer-non-subset", 1))
    assert EXPECTED_RULE["answer-non-subset"].name in over_judged(result)


def test_twin_no_recorded_latency_bound_leaves_convergence_unjudged() -> None:
    events = _trace("model", 1)
    (clean,) = _results(events)
    assert clean.tally is not None and clean.tally.judged[R.CONVERGENCE.name] > 0
    stripped = [
        replace(e, attrs={k: v for k, v in e.attrs.items() if k != "latency_ms"})
        if e.kind in ("PF_CONFIG", "NET_CONFIG")
        else e
        for e in events
    ]
    (result,) = _results(stripped)
    assert result.tally is not None
    assert R.CONVERGENCE.name not in result.tally.judged
    count, reason = result.tally.unjudged[R.CONVERGENCE.name]
    assert count > 0 and "latency" in reason
    assert result.verdict is Verdict.UNKNOWN


def test_twin_no_end_snapshot_leaves_convergence_unjudged() -> None:
    (result,) = _results([e for e in _trace("model", 1) if e.kind != "END"])
    assert result.tally is not None and R.CONVERGENCE.name not in result.tally.judged
    assert "END" in result.tally.unjudged[R.CONVERGENCE.name][1]


# --- bugs are internal errors, partial traces are unknown -------------------------------------------------
def test_a_rule_that_raises_key_error_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> None:
        raise KeyError("misspelt")

    monkeypatch.setattr(H, "packing_limits", broken)  # where the handler reads it
    with pytest.raises(KeyError, match="misspelt"):
        verdict(_trace("model", 1))


def test_a_rule_that_dereferences_none_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(H, "others", lambda rep: None)
    with pytest.raises(TypeError):
        verdict(_trace("model", 1))


def test_twin_a_required_attribute_deleted_is_unknown_with_the_note() -> None:
    events = _trace("model", 1)
    at = next(i for i, e in enumerate(events) if e.kind == "REPL_SEND")
    broken = replace(events[at], attrs={k: v for k, v in events[at].attrs.items() if k != "cns"})
    result = verdict([*events[:at], broken, *events[at + 1 :]])
    assert result.verdict is Verdict.UNKNOWN and not result.violations
    assert f"{broken.event_id}: cannot replay REPL_SEND (attribute 'cns' missing)" in result.notes


def test_twin_a_trace_without_its_opening_events_is_unknown_with_the_note() -> None:
    events = _trace("model", 1)
    result = verdict([e for e in events if e.kind != "REPLICA_CREATE"])
    assert result.verdict is Verdict.UNKNOWN and not result.violations
    assert any("before mounting its store" in n for n in result.notes)


def test_twin_an_unparseable_configuration_is_unknown_with_the_note() -> None:
    events = _trace("model", 1)
    bad = [replace(e, attrs={**e.attrs, "params": "{not json"}) if e.kind == "PF_CONFIG" else e for e in events]
    result = verdict(bad)
    assert result.verdict is Verdict.UNKNOWN
    config = next(e for e in events if e.kind == "PF_CONFIG")
    assert any(
        n.startswith(f"{config.event_id}: cannot read PF_CONFIG (PF_CONFIG does not parse") for n in result.notes
    )


# --- a saved fold keeps its tally -------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["model", "never-backfill", "status-before-expiry"])
def test_a_saved_and_restored_fold_gives_the_tally_of_one_pass(name: str) -> None:
    events = _trace(name, 1)
    context = trace_contexts(events).get(events[0].trace_id, [])
    whole = PFMonitor().check(events, context).tally
    assert whole is not None and whole.judged
    for cut in (1, len(events) // 3, len(events) // 2, len(events) - 1):
        fold = PFMonitor().start(context)
        for e in events[:cut]:
            fold.feed(e)
        fold = restore_fold(save_fold(fold))
        for e in events[cut:]:
            fold.feed(e)
        tally = fold.finish().tally
        assert tally is not None
        assert (tally.judged, tally.unjudged) == (whole.judged, whole.unjudged), (name, cut)


# --- structured violations ----------------------------------------------------------------------------------
TIMED = {
    R.BROADCAST_INTERVAL,
    R.STATUS_THREAD_LATE,
    R.BACKFILL_CHECK_LATE,
    R.DELETE_PENDING_REQUESTS,
    R.MAINTENANCE_REMOVAL,
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_every_violation_carries_json_data(name: str) -> None:
    for result in _results(_trace(name, 1)):
        for v in result.violations:
            assert v.data, v
            json.dumps(v.to_json())
            if v.rule in {r.name for r in TIMED}:
                assert {"deadline_ms", "observed_ms", "parameters"} <= set(v.data), v
            if v.rule in (R.BROADCAST_NOT_EARLY.name, R.BACKFILL_CHECK_NOT_EARLY.name):
                assert {"observed_ms", "bound_ms", "parameter"} <= set(v.data), v
