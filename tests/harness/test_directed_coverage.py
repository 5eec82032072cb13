"""The coverage sweep's directed perturbations (issue 34, `conformance/harness/directed.py`): each pf entry makes
the rules it names fire on a model trace that holds its event, and a trace without that event gets none."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.check import verdict
from conformance.harness.directed import DIRECTED, directed, edited
from conformance.harness.report import rule_table, run_coverage
from conformance.harness.search import driver
from traces.io import read_events
from traces.schema import Event

pytestmark = pytest.mark.model


# two runs of the pf generator on the model: one with a client redirected, one with a backfill response
TRACES = [Path(__file__).parent / "replays" / f"pf-generator-{n}.jsonl" for n in ("redirect", "backfill")]


@pytest.fixture(scope="module")
def pf_traces() -> list[list[Event]]:
    out = []
    for path in TRACES:
        got = read_events(path)
        assert not got.errors
        out.append(list(got.events))
    return out


def _fired(evs: list[Event]) -> set[str]:
    mon = driver("pf").monitor()
    return {v.rule for v in verdict([replace(x, seq=k) for k, x in enumerate(evs)], [mon]).violations}


def test_every_directed_entry_reaches_its_rules(pf_traces: list[list[Event]]) -> None:
    fired: set[str] = set().union(*(_fired(evs) for t in pf_traces for evs in directed(t, "pf")))
    for d in DIRECTED["pf"]:
        assert set(d.reaches) <= fired, d
        assert set(d.reaches) <= set(rule_table("pf"))


def test_run_coverage_counts_the_directed_rules(pf_traces: list[list[Event]]) -> None:
    got = run_coverage("pf", driver("pf").monitor(), pf_traces[1], seed=0, n=0)
    assert {"backfill-response-addressing", "non-replicating-folder", "served-by-active-replica"} <= got


def test_twin_the_unperturbed_trace_and_other_mechanisms_get_nothing(pf_traces: list[list[Event]]) -> None:
    pf_trace = pf_traces[1]
    assert not _fired(pf_trace)
    assert directed(pf_trace, "am") == []
    bare = [e for e in pf_trace if e.kind not in {d.kind for d in DIRECTED["pf"]}]
    assert directed(bare, "pf") == []


def test_a_list_edit_drops_or_adds_one_element() -> None:
    assert edited(["B"], ["A", "B", "C"], add=False) == []
    assert edited(["B"], ["A", "B", "C"], add=True) == ["B", "A"]
    assert edited([], ["A"], add=False) is None and edited(["A"], ["A"], add=True) is None
