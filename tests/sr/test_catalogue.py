"""The shadow redundancy catalogue: loads, covers every seed section, and every cited ID exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model.sr.properties import SOMETIMES
from model.sr.rules import RULES
from spec.catalogue import catalogue, param_ms

SEED = "000_bc7da9fde6232d0b.txt"
PKG = Path(__file__).resolve().parents[2] / "model" / "sr"


@pytest.mark.unit
def test_every_seed_section_is_covered() -> None:
    cat = catalogue()
    sections = {s.section for s in cat.sections if s.seed == SEED}
    used = {src.section for r in cat.by_mechanism("sr") for src in r.sources}
    assert sections - used == set()
    assert used - sections == set()


@pytest.mark.unit
def test_requirement_and_interpretation_counts() -> None:
    cat = catalogue()
    statements = [r for r in cat.by_mechanism("sr") if r.kind != "parameter"]
    assert len(statements) >= 40
    interps = [i for i in cat.interpretations if i.startswith("SR-")]
    assert len(interps) >= 10
    for i in interps:
        for req in cat.interpretations[i].requirements:
            assert cat.has(req), (i, req)
        if cat.interpretations[i].parameter:
            cat.param(cat.interpretations[i].parameter)


@pytest.mark.unit
def test_every_id_cited_in_the_package_exists() -> None:
    cat = catalogue()
    cited = set()
    for path in PKG.glob("*.py"):
        cited |= set(re.findall(r"\bSR-(?:\d{3}|P\d{2})\b", path.read_text()))
    cited |= (
        {r.requirement for r in RULES.values()}
        | {q for r in RULES.values() for q in r.params}
        | set(SOMETIMES.values())
    )
    missing = sorted(c for c in cited if not cat.has(c))
    assert not missing, missing
    assert all(not 900 <= int(c[3:]) <= 999 for c in cited if c[3:].isdigit())


@pytest.mark.unit
def test_durations_come_from_the_catalogue() -> None:
    assert param_ms("ShadowHeartbeatFrequency") == 2 * 60_000
    assert param_ms("ShadowResubmitTimeSpan") == 3 * 3_600_000
