"""Unusable public folder parameters are an input fault of the trace (`model/pf/faults.py`, fault 4), never an
exception out of the rules: a status period of 0 (found by conform's random answers, issue 36, where it was a
ZeroDivisionError and exit 3), a negative limit, a timing that is not an integer. Twin: the catalogue's own
values, restated, are judged as before."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conformance.check import verdict
from model.pf.sim import simulate
from traces.verdict import Verdict

pytestmark = pytest.mark.unit


def _with_params(params: dict) -> list:
    out = []
    for e in simulate(1):
        if e.kind == "PF_CONFIG":
            e = dataclasses.replace(e, attrs={**e.attrs, "params": json.dumps(params)})
        out.append(e)
    return out


@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"status_period_ms": 0}, "status_period_ms = 0 is below 1"),
        ({"folder_count_limit": -1}, "folder_count_limit = -1 is below 0"),
        ({"backfill_check_ms": "5 min"}, "backfill_check_ms = '5 min' is not an integer"),
    ],
)
def test_unusable_parameters_are_unknown_with_the_reason(params: dict, fragment: str) -> None:
    result = verdict(_with_params(params))
    assert result.verdict is Verdict.UNKNOWN, result.violations[:2]
    assert any(fragment in n for n in result.notes), result.notes[:3]


def test_twin_the_catalogue_values_restated_are_judged() -> None:
    assert verdict(_with_params({"status_period_ms": 43_200_000})).verdict is Verdict.VALID
