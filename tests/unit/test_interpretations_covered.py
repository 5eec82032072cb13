"""Every interpretation of the three mechanisms (`spec/requirements/*.toml`) is enforced by a
monitor rule, a z3 claim or a pinned test, or lists why not (it cannot be observed, or no rule checks it
yet). Each named rule, claim and test must exist. Twins: an interpretation with neither fails the check, and
so does one naming a rule that does not exist."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from conformance.harness.report import rule_table
from spec.catalogue import Interpretation, catalogue
from spec.claims.registry import all_claims

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
MECHANISMS = ("sr", "am", "pf")


def problems(interps: dict[str, Interpretation]) -> list[str]:
    rules = {m: set(rule_table(m)) for m in MECHANISMS}
    claims = {c.name for c in all_claims()}
    out: list[str] = []
    for iid, it in sorted(interps.items()):
        if not (it.covered_by or it.not_observable or it.not_enforced):
            out.append(f"{iid}: no rule, claim or test covers it and no reason is listed")
        for ref in it.covered_by:
            kind, _, name = ref.partition(":")
            if kind in rules:
                ok = name in rules[kind]
            elif kind == "claim":
                ok = name in claims
            elif kind == "test":
                path, _, fn = name.partition("::")
                file = ROOT / path
                ok = file.is_file() and re.search(rf"^def {re.escape(fn)}\(", file.read_text(), re.M) is not None
            else:
                ok = False
            if not ok:
                out.append(f"{iid}: covered_by {ref!r} names no rule, claim or test")
    return out


def test_every_interpretation_is_covered_or_gives_its_reason() -> None:
    interps = catalogue().interpretations
    assert {i.split("-")[0] for i in interps} >= {"SR", "AM", "PF", "BF"}
    assert problems(interps) == []


def test_twin_an_interpretation_with_no_cover_and_no_reason_fails() -> None:
    it = catalogue().interpretations["AM-I12"]
    bare = dataclasses.replace(it, covered_by=(), not_observable="", not_enforced="")
    assert problems({"AM-I12": bare}) == ["AM-I12: no rule, claim or test covers it and no reason is listed"]


def test_twin_a_cover_naming_a_missing_rule_fails() -> None:
    it = catalogue().interpretations["AM-I12"]
    wrong = dataclasses.replace(it, covered_by=("am:retry-once", "claim:am.nothing", "test:tests/x.py::y"))
    assert len(problems({"AM-I12": wrong})) == 3


def test_the_reasons_are_listed_in_the_catalogue_json() -> None:
    it = catalogue().interpretations["AM-I15"].to_json()
    assert it["not_observable"] and it["covered_by"] == []


@pytest.mark.model
def test_pf_i10_a_backfill_response_with_the_other_folder_kind_s_code_is_caught() -> None:
    """PF-I10's cover: 0x80000002 answers for the hierarchy, 0x80000004 for content; a hierarchy backfill
    response sent with the content code is `packing-separation`. Twin: the trace as recorded is clean of it."""
    from conformance.check import verdict
    from model.pf.sim import simulate

    events = simulate(0)
    i = next(k for k, e in enumerate(events) if e.kind == "REPL_SEND" and e.attrs["code"] == 0x80000002)
    assert "packing-separation" not in {v.rule for v in verdict(events).violations}
    wrong = dataclasses.replace(events[i], attrs={**events[i].attrs, "code": 0x80000004})
    rules = {v.rule for v in verdict([*events[:i], wrong, *events[i + 1 :]]).violations}
    assert "packing-separation" in rules
