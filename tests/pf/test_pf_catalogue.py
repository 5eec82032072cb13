"""The pf/bf catalogue: every cited ID exists, every section of seeds 001, 003 and 004 is covered."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spec.catalogue import load

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ("001_171cc7041818ad72.txt", "003_e3b4488f2fd47eb9.txt", "004_edc18663c15e61b0.txt")
ID = re.compile(r"\b(?:PF|BF)-(?:\d{3}|P\d{2}|I\d{2})\b")


@pytest.mark.unit
def test_every_id_cited_in_the_package_exists() -> None:
    cat = load()
    cited = set()
    for path in [*(ROOT / "model" / "pf").glob("*.py"), ROOT / "model" / "pf" / "README.md"]:
        cited |= set(ID.findall(path.read_text(encoding="utf-8")))
    missing = sorted(i for i in cited if i not in cat.requirements and i not in cat.interpretations)
    assert cited and not missing, missing


@pytest.mark.unit
def test_every_section_of_the_three_seeds_is_cited_and_sources_are_real() -> None:
    cat = load()
    sections = {(s.seed, s.section) for s in cat.sections}
    used = set()
    entries = [*cat.requirements.values(), *cat.interpretations.values()]
    for entry in entries:
        if entry.id[:2] in ("PF", "BF"):
            for src in entry.sources:
                assert (src.seed, src.section) in sections, (entry.id, src)
                used.add((src.seed, src.section))
    uncovered = sorted(s for s in sections if s[0] in SEEDS and s not in used)
    assert not uncovered, uncovered


@pytest.mark.unit
def test_interpretations_point_at_real_requirements_and_parameters() -> None:
    cat = load()
    for i in cat.interpretations.values():
        if i.id[:2] in ("PF", "BF"):
            assert all(cat.has(r) for r in i.requirements), i.id
            if i.parameter:
                assert cat.param(i.parameter) is not None
    counts = {m: len([r for r in cat.by_mechanism(m) if r.kind != "parameter"]) for m in ("pf", "bf")}
    assert counts["pf"] >= 30 and counts["bf"] >= 30, counts
