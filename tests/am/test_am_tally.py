"""What each Active Manager rule judged (issue 29): the fold's tally, the input faults, bugs that propagate.

Seed 002, all sections (the rules of `model/am/rules.py`). The invariants, on the model and every mutant:
- per rule, violations <= instances judged (a rule reported is a rule that compared something), also on the
  hand-built traces of issues 9 and 18;
- the model's clean traces judge every rule of the table at least once (none is listed as unreachable: the
  simulator reaches each, on seeds 1..3 together);
- twin: a trace stripped of the configuration a rule needs (the dial thresholds, the servers' dials) has that
  rule judged 0 times and skipped with the reason;
- a planted bug in rule code (a misspelt key, a `None` dereference) propagates out of
  `conformance.check.verdict`; its twin, a trace missing an attribute or its databases' creation, is unknown
  with the note (`model/am/faults.py`);
- a fold saved and restored at any cut gives the tally of one pass.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from collections.abc import Callable, Sequence
from functools import cache

import pytest

from conformance.check import group_for, trace_contexts, verdict
from model.am import rules as R
from model.am.monitor import AmMonitor
from model.am.mutants import CATCHES, SIMULATORS
from model.am.replay import Replay
from model.am.sim import simulate
from tests.handbuilt.am.cases import CASES
from tests.handbuilt.files.am_cases import CASES as FILE_CASES
from traces.schema import Event
from traces.verdict import MonitorResult, Tally, Verdict, fold_all, restore_fold, save_fold

pytestmark = pytest.mark.model

RUNS = ("model", *sorted(CATCHES))
SEEDS = (1, 2, 3)
# `always` rules the simulator's clean traces never judge, with the reason: none (each is reached on seeds 1..3)
UNREACHED: dict[str, str] = {}


@cache
def trace(run: str, seed: int) -> tuple[Event, ...]:
    return tuple(simulate(seed) if run == "model" else SIMULATORS[run](seed))


def results(events: Sequence[Event]) -> list[MonitorResult]:
    """Each group's result, as the engines form the groups (with their trace's context)."""
    contexts = trace_contexts(events)
    return [fold_all(AmMonitor(), g, contexts.get(g[0].trace_id, [])) for g in group_for(AmMonitor(), events)]


def over_judged(result: MonitorResult) -> list[tuple[str, int, int]]:
    """(rule, violations, judged) for every rule reported more often than it judged."""
    assert result.tally is not None
    counts = Counter(v.rule for v in result.violations)
    return [
        (rule, n, result.tally.judged.get(rule, 0))
        for rule, n in counts.items()
        if n > result.tally.judged.get(rule, 0)
    ]


def merged(rs: Sequence[MonitorResult]) -> Tally:
    out = Tally()
    for r in rs:
        assert r.tally is not None
        out.merge(r.tally)
    return out


@pytest.mark.parametrize("run", RUNS)
def test_violations_never_outnumber_the_instances_judged(run: str) -> None:
    for seed in SEEDS:
        for r in results(trace(run, seed)):
            assert not over_judged(r), (run, seed, over_judged(r))
        whole = AmMonitor().check(trace(run, seed))
        assert not over_judged(whole), (run, seed, over_judged(whole))


def test_twin_a_violation_without_its_instance_judged_is_found() -> None:
    result = AmMonitor().check(trace("sam-activates", 1))
    assert result.violations and not over_judged(result)
    emptied = dataclasses.replace(result, tally=Tally())
    assert {rule for rule, _, _ in over_judged(emptied)} == {v.rule for v in result.violations}


@pytest.mark.parametrize("run", sorted(CATCHES))
def test_each_mutants_rule_is_judged_where_it_fires(run: str) -> None:
    rule = CATCHES[run][1]
    tally = merged([r for seed in SEEDS for r in results(trace(run, seed))])
    assert tally.judged.get(rule.name, 0) > 0, (run, rule.name)


HAND_BUILT: dict[str, Callable[[], Sequence[Event]]] = {
    **{f"handbuilt/{name}": (lambda build=build: build().events) for name, (_, build, _) in CASES.items()},
    **{f"handbuilt/files/{name}": build for name, build, _ in FILE_CASES},
}


@pytest.mark.parametrize("name", sorted(HAND_BUILT))
def test_hand_built_traces_judge_what_they_report(name: str) -> None:
    """The hand-built traces (violations of every family): each reported rule judged at least as often."""
    for r in results(HAND_BUILT[name]()):
        assert not over_judged(r), (name, over_judged(r))


def test_clean_traces_judge_every_rule_the_simulator_reaches() -> None:
    tally = merged([r for seed in SEEDS for r in results(trace("model", seed))])
    never = {r.name for r in R.RULES.values() if r.kind == "always" and not tally.judged.get(r.name)}
    assert never == set(UNREACHED), never
    assert tally.judged.get(R.PAM_MOVES_WITH_QUORUM.name), "the eventually rule, judged at each view's end"
    assert not tally.unjudged, tally.unjudged  # the model records every configuration a rule needs


def _with_config(events: Sequence[Event], change: Callable[[dict], None]) -> list[Event]:
    start = events[0]
    assert start.kind == "TRACE_START"
    cfg = json.loads(start.attrs["config"])
    change(cfg)
    return [dataclasses.replace(start, attrs={**start.attrs, "config": json.dumps(cfg)}), *events[1:]]


def test_twin_without_recorded_thresholds_the_dial_is_skipped_not_held() -> None:
    events = trace("model", 1)
    before = merged(results(events))
    assert before.judged.get(R.DIAL.name), "the clean trace judges the dial"
    stripped = _with_config(events, lambda cfg: cfg["bcss"].pop("thresholds"))
    after = merged(results(stripped))
    assert not after.judged.get(R.DIAL.name)
    n, why = after.unjudged[R.DIAL.name]
    assert n > 0 and "thresholds not recorded" in why


def test_twin_without_recorded_dials_the_order_is_skipped_not_held() -> None:
    events = [e for e in trace("model", 1) if not (e.kind == "AM_CONFIG" and "dial" in e.attrs)]
    tally = merged(results(events))
    for rule in (R.SELECTION_ORDER, R.DIAL):
        assert not tally.judged.get(rule.name), rule.name
        assert "AutoDatabaseMountDial" in tally.unjudged[rule.name][1], rule.name
    assert tally.judged.get(R.NEXT_BEST_COPY.name)  # an attempt is still judged for being tried once


# ---- bugs propagate, input faults are unknown ------------------------------------------------------------


def _planted(monkeypatch: pytest.MonkeyPatch, kind: str, bug: Callable[..., None]) -> None:
    _check, transition = Replay.TABLE[kind]
    monkeypatch.setitem(Replay.TABLE, kind, (bug, transition))


def test_a_misspelt_key_in_rule_code_is_an_error_not_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(r: Replay, e: Event, a: dict) -> None:
        a["sever"]

    _planted(monkeypatch, "MOUNTED", bug)
    with pytest.raises(KeyError, match="sever"):
        verdict(list(trace("model", 1)))


def test_a_none_dereference_in_rule_code_is_an_error_not_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    def bug(r: Replay, e: Event, a: dict) -> None:
        r.runs.get("no such database").start  # noqa: B018 (the planted None)

    _planted(monkeypatch, "ACLL_END", bug)
    with pytest.raises(AttributeError):
        verdict(list(trace("model", 1)))


def test_twin_a_missing_attribute_is_unknown_with_the_event() -> None:
    events = list(trace("model", 1))
    i = next(i for i, e in enumerate(events) if e.kind == "MOUNTED" and i > len(events) // 2)
    events[i] = dataclasses.replace(events[i], attrs={k: v for k, v in events[i].attrs.items() if k != "server"})
    result = verdict(events)
    assert result.verdict is Verdict.UNKNOWN, result.violations
    assert any(
        f"am monitor stopped at MOUNTED seq {events[i].seq}" in n and "'server' missing" in n for n in result.notes
    )


def test_twin_a_wrongly_typed_attribute_is_unknown_with_the_event() -> None:
    events = list(trace("model", 1))
    i = next(i for i, e in enumerate(events) if e.kind == "LOGS")
    events[i] = dataclasses.replace(events[i], attrs={**events[i].attrs, "lgen": "forty"})
    result = verdict(events)
    assert result.verdict is Verdict.UNKNOWN and any("'lgen' is 'forty', not an integer" in n for n in result.notes)


def test_twin_a_trace_cut_at_the_front_is_unknown() -> None:
    events = [e for e in trace("model", 1) if e.kind != "DB_CREATE"]
    result = verdict(events)
    assert result.verdict is Verdict.UNKNOWN
    assert any("whose DB_CREATE is not in the trace" in n for n in result.notes), result.notes


# ---- the tally of a fold saved and restored ---------------------------------------------------------------


@pytest.mark.parametrize("run", ["model", "wrong-order", "activate-without-dial", "minority-keeps-mounted"])
def test_a_saved_and_restored_fold_gives_the_tally_of_one_pass(run: str) -> None:
    events = trace(run, 2)
    contexts = trace_contexts(events)
    for group in group_for(AmMonitor(), events):
        context = contexts.get(group[0].trace_id, [])
        one = fold_all(AmMonitor(), group, context)
        for cut in sorted({0, 1, len(group) // 3, len(group) // 2, len(group) - 1, len(group)}):
            fold = AmMonitor().start(context)
            for e in group[:cut]:
                fold.feed(e)
            again = restore_fold(save_fold(fold))
            for e in group[cut:]:
                again.feed(e)
            two = again.finish()
            assert two.tally == one.tally and two == one, (run, cut)


def test_an_unusable_configuration_judges_nothing_and_says_why() -> None:
    events = _with_config(trace("model", 1), lambda cfg: cfg["bcss"].update(nonsense=1))
    result = AmMonitor().check(events)
    assert result.verdict is Verdict.UNKNOWN and result.tally is not None and not result.tally.judged
    assert set(result.tally.unjudged) == set(R.RULES)
    assert all("unusable BCSS options" in why for _, why in result.tally.unjudged.values())


def test_a_database_without_dag_facts_is_not_judged_and_its_tally_says_so() -> None:
    rs = results(CASES["no_dag_facts"][1]().events)
    unknown = [r for r in rs if r.verdict is Verdict.UNKNOWN]
    assert unknown and all(r.tally is not None and not r.tally.judged and r.tally.unjudged for r in unknown)
    assert all("no DAG facts" in why for r in unknown for _, why in r.tally.unjudged.values())
