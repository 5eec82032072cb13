"""A database whose DB_CREATE the trace lacks is partial (TR-I01, the policy of sr and pf
too): its verdict is unknown with the reason, and what its events show by themselves is still judged
(`model/am/partial.py`): two mounted copies (AM-009), an activation by a member that is not the PAM (AM-008).
Each test has a twin that must pass."""

from __future__ import annotations

import dataclasses

import pytest

from model.am import events as ev
from model.am import rules as R
from model.am.monitor import AmMonitor
from model.am.sim import simulate
from traces.schema import Event
from traces.verdict import Verdict


def _cut(seed: int = 4) -> list[Event]:
    """A generated run with no DB_CREATE: every database is partial."""
    return [e for e in simulate(seed, steps=100) if e.kind != ev.DB_CREATE]


def _rules(events: list[Event]) -> list[str]:
    return sorted({v.rule for v in AmMonitor().check(events).violations})


@pytest.mark.unit
def test_a_partial_run_is_unknown_and_its_mounts_are_judged() -> None:
    """The twin: the generated run, cut at the front, has nothing to blame; mounts were judged all the same."""
    result = AmMonitor().check(_cut())
    assert result.verdict is Verdict.UNKNOWN and not result.violations, result.violations[:2]
    assert result.tally.judged.get(R.ONE_ACTIVE_COPY.name, 0) > 0


@pytest.mark.unit
def test_two_mounted_copies_of_a_partial_database_are_invalid() -> None:
    """A DISMOUNTED dropped before the database is mounted on another server: two copies mounted, whatever came
    before the recording."""
    for seed in range(4, 30):
        events = _cut(seed)
        for i, e in enumerate(events):
            if e.kind != ev.DISMOUNTED:
                continue
            later = [n for n in events[i + 1 :] if n.entity == e.entity and n.kind == ev.MOUNTED]
            if later and later[0].attrs["server"] != e.attrs["server"]:
                assert R.ONE_ACTIVE_COPY.name in _rules(events[:i] + events[i + 1 :])
                return
    pytest.fail("no dismount followed by a mount elsewhere")


@pytest.mark.unit
def test_an_activation_by_a_member_that_is_not_the_pam_is_invalid_on_a_partial_database() -> None:
    """An ACTIVE_MOVE of a partial database made by a DAG member that is not the PAM (AM-008)."""
    events = _cut()
    members = sorted({s for e in events if e.kind == ev.DAG_VIEW for s in e.attrs["members"]})
    for i, e in enumerate(events):
        if e.kind == ev.ACTIVE_MOVE and e.attrs["src"] is not None:
            other = next(s for s in members if s != e.attrs["by"])
            changed = [*events[:i], dataclasses.replace(e, attrs={**e.attrs, "by": other}), *events[i + 1 :]]
            assert R.ONLY_PAM_ACTIVATES.name in _rules(changed)
            return
    pytest.fail("no ACTIVE_MOVE in the run")


@pytest.mark.unit
def test_twin_the_same_move_by_the_pam_is_not() -> None:
    events = _cut()
    moves = [e for e in events if e.kind == ev.ACTIVE_MOVE and e.attrs["src"] is not None]
    assert moves and ONLY_PAM not in _rules(events)


ONLY_PAM = R.ONLY_PAM_ACTIVATES.name
