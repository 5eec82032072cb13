"""pf violation messages name the party at fault first (issue 34): an obligation flagged late names the store that
owes it, whichever store's event the lateness was noticed at; a folder that did not converge names the stores
behind. Twin: a rule judged at the acting store's own event keeps that store first."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.check import run_monitor
from model.pf import rules as R
from model.pf.monitor import PFMonitor
from model.pf.mutants import MUTANTS
from model.pf.sim import simulate
from traces.schema import Event
from traces.verdict import in_seq_order

pytestmark = pytest.mark.model

LATE = {R.BROADCAST_INTERVAL.name, R.STATUS_THREAD_LATE.name, R.BACKFILL_CHECK_LATE.name}
LATE |= {R.DELETE_PENDING_REQUESTS.name, R.MAINTENANCE_REMOVAL.name}


def _violations(events: list[Event]) -> list:
    return [v for r in run_monitor(PFMonitor(), list(in_seq_order(events))) for v in r.violations]


def test_a_late_obligation_names_the_store_that_owes_it_first() -> None:
    seen = 0
    for name in sorted(MUTANTS):
        for v in _violations(MUTANTS[name](1)):
            if v.rule in LATE and "store" in v.data:
                seen += 1
                assert v.explanation.startswith(f"{v.data['store']}: still owes"), v.explanation
    assert seen  # the mutants' traces hold late obligations


def test_a_folder_that_did_not_converge_names_the_stores_behind() -> None:
    events = list(in_seq_order(simulate(1)))
    ends = [e for e in events if e.kind == "END" and e.entity != "1-1"]
    assert ends
    fid, store = ends[0].entity, ends[0].node
    # the store never receives anything of the folder: at the end it is behind the others
    cut = [e for e in events if not (e.kind == "REPL_RECV" and e.node == store and e.entity == fid)]
    found = [v for v in _violations(cut) if v.rule == R.CONVERGENCE.name]
    assert found
    behind = found[0].explanation.split(":", 1)[0].split(",")
    assert store in behind and set(behind) < set(found[0].data["observed"]), found[0].explanation


def test_twin_a_rule_judged_at_the_acting_store_names_that_store() -> None:
    events = list(in_seq_order(simulate(1)))
    sends = [i for i, e in enumerate(events) if e.kind == "REPL_SEND" and e.attrs.get("type") == "content"]
    assert sends
    i = sends[0]
    bad = list(events)
    bad[i] = replace(events[i], attrs={**events[i].attrs, "cnset": ["Z#0:1-99"]})  # claims changes it lacks
    found = [v for v in _violations(bad) if v.rule == R.CNSET_CARRIED.name]
    assert found and found[0].explanation.startswith(f"{events[i].node}: "), found
