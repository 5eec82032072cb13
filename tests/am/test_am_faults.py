"""The input faults of the Active Manager monitor (`model/am/faults.py`): each is unknown, with the event.

Seed 002, all sections. One damage per fault the module lists, applied to a clean model trace (valid: the
twin); the group it damages must be unknown (or invalid, when a rule fired before the fault), never an
internal error, and its note must say what the trace lacks at which event. The check as a whole is unknown,
or invalid where the damage also breaks a rule (a health entry the DAG events do not make: `dag-record`).
Every other exception in rule code propagates (`test_am_tally.py`).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import textwrap
from collections.abc import Callable
from functools import cache

import pytest

from conformance.check import run_monitor, verdict
from model.am import events as ev
from model.am.faults import OPTIONAL, REQUIRED
from model.am.monitor import AmMonitor
from model.am.replay import Replay
from model.am.sim import simulate
from model.am.vocabulary import VOCABULARY
from traces.schema import Event
from traces.verdict import Verdict

pytestmark = pytest.mark.unit

Damage = Callable[[list[Event]], list[Event]]


@cache
def clean() -> tuple[Event, ...]:
    return tuple(simulate(1))


def _edit(kind: str, change: Callable[[dict], dict], nth: int = 0) -> Damage:
    """The `nth` event of `kind` with its attributes changed."""

    def damage(events: list[Event]) -> list[Event]:
        i = [i for i, e in enumerate(events) if e.kind == kind][nth]
        return [*events[:i], dataclasses.replace(events[i], attrs=change(dict(events[i].attrs))), *events[i + 1 :]]

    return damage


def _drop(key: str) -> Callable[[dict], dict]:
    return lambda a: {k: v for k, v in a.items() if k != key}


def _set(key: str, value: object) -> Callable[[dict], dict]:
    return lambda a: {**a, key: value}


def _config(change: Callable[[dict], None]) -> Damage:
    def damage(events: list[Event]) -> list[Event]:
        cfg = json.loads(events[0].attrs["config"])
        change(cfg)
        return [dataclasses.replace(events[0], attrs={**events[0].attrs, "config": json.dumps(cfg)}), *events[1:]]

    return damage


def _bcss_thresholds(value: object) -> Callable[[dict], None]:
    return lambda cfg: cfg["bcss"].update(thresholds=value)


# fault -> (damage, a fragment of the note)
FAULTS: dict[str, tuple[Damage, str]] = {
    "missing attribute": (_edit(ev.MOUNTED, _drop("server"), 1), "attribute 'server' missing"),
    "integer as text": (_edit(ev.COPY_STATE, _set("lli", "12"), 3), "'lli' is '12', not an integer"),
    "list as text": (_edit(ev.DAG_VIEW, _set("up", 5), 1), "'up' is 5, not a list of strings"),
    "list of numbers": (_edit(ev.DAG_VIEW, _set("groups", [1, 2]), 1), "[1, 2]], not a list of strings"),
    "health entry": (_edit(ev.AM_DAG_CONFIG, _set("health", ["MBX1/OutlookWeb"]), 1), "is not server/component"),
    "unknown priority": (_edit(ev.SERVER_HEALTH, _set("priority", "Urgent")), "not a priority and a state"),
    "server without a copy": (_edit(ev.ACLL_START, _set("server", "MBX99")), "MBX99 holds no copy of"),
    "dial without a threshold": (
        _config(_bcss_thresholds([["Lossless", 0], ["BestAvailability", 12]])),
        "dial 'GoodAvailability' has no threshold",
    ),
    "unusable thresholds": (_config(_bcss_thresholds("six")), "unusable BCSS options"),
    # found by conform's random answers (issue 36): both raised out of the rule code (exit 3) before
    "server null": (_edit(ev.MOUNTED, _set("server", None), 1), "'server' is None, not a string"),
    "responder without a component": (
        _edit(ev.FAILURE, lambda a: {**a, "what": "responder", "component": None}),
        "a responder FAILURE names no component",
    ),
    "configuration not JSON": (
        lambda events: [dataclasses.replace(events[0], attrs={**events[0].attrs, "config": "{bcss"}), *events[1:]],
        "unusable BCSS options",
    ),
}


def test_twin_the_clean_trace_is_valid() -> None:
    result = verdict(list(clean()))
    assert result.verdict is Verdict.VALID, result.notes


# faults after which the check is invalid: a rule the damage breaks fired (in another group, or before it)
INVALID = {"health entry": "dag-record", "server without a copy": "selection-order"}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_each_input_fault_is_unknown_with_its_note(fault: str) -> None:
    damage, fragment = FAULTS[fault]
    events = damage(list(clean()))
    notes = [n for r in run_monitor(AmMonitor(), events) for n in r.notes]
    assert any(fragment in n for n in notes), (fault, notes)
    result = verdict(events)
    if fault in INVALID:
        assert result.verdict is Verdict.INVALID and {v.rule for v in result.violations} == {INVALID[fault]}
    else:
        assert result.verdict is Verdict.UNKNOWN and not result.violations, (fault, result.violations)


def test_the_attributes_read_are_the_vocabularys() -> None:
    """Every attribute a check or transition reads is one the vocabulary documents for its kind."""
    for table in (REQUIRED, OPTIONAL):
        for kind, needs in table.items():
            doc = VOCABULARY.get(kind)
            assert doc is not None, kind
            assert {k for k, _ in needs} <= doc.attr_names(), kind


# attributes a check reads by subscript only after testing that they are there (`"source" in a`)
GUARDED = {
    ev.ACLL_END: {"lli_before", "missing", "threshold"},
    ev.ACLL_START: {"source"},
    ev.BCSS_START: {"sort", "source", "order"},
    ev.PAM_ACQUIRE: {"quorum"},
    ev.AM_CONFIG: {ev.DIAL_ATTR},
}


def _subscripts(fn: Callable | None) -> set[str]:
    """The attribute names `fn` reads as `a["name"]` (a check's or a transition's attributes)."""
    if fn is None:
        return set()
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return {
        n.slice.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Subscript)
        and isinstance(n.value, ast.Name)
        and n.value.id == "a"
        and isinstance(n.slice, ast.Constant)
    }


def test_every_attribute_a_check_reads_is_listed_as_required() -> None:
    """Fault 1 is complete: what the checks and transitions read without a default is in `REQUIRED` (or
    `OPTIONAL`, read only when present), so a missing one is an input fault, never a KeyError."""
    for kind, (check, transition) in Replay.TABLE.items():
        read = _subscripts(check) | _subscripts(transition)
        listed = {k for k, _ in (*REQUIRED.get(kind, ()), *OPTIONAL.get(kind, ()))} | GUARDED.get(kind, set())
        assert read <= listed, (kind, read - listed)


def test_twin_an_unlisted_read_is_found() -> None:
    def planted(r: object, e: Event, a: dict) -> None:
        a["server"], a["not-listed"]

    assert _subscripts(planted) - {k for k, _ in REQUIRED[ev.MOUNTED]} == {"not-listed"}
