"""Every requirement ID cited in the Active Manager package and its tests exists in the catalogue,
and every interpretation's parameter is a catalogue parameter the model reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from model.am.bcss import Options
from spec.catalogue import catalogue

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
ID = re.compile(r"\bAM-(?:\d{3}|P\d{2}|I\d{2})\b")


def test_cited_ids_exist() -> None:
    cat = catalogue()
    cited = set()
    for path in [
        *(ROOT / "model" / "am").glob("*.py"),
        *(ROOT / "model" / "am").glob("*.md"),
        *(ROOT / "tests" / "am").glob("*.py"),
    ]:
        cited |= set(ID.findall(path.read_text(encoding="utf-8")))
    missing = sorted(i for i in cited if not (cat.has(i) or i in cat.interpretations))
    assert cited and missing == []


def test_interpretation_parameters_are_read_by_the_model() -> None:
    cat = catalogue()
    params = {i.parameter for i in cat.interpretations.values() if i.id.startswith("AM-") and i.parameter}
    defaults = Options()
    fields = {
        "BcssTierCriteriaOrder": defaults.order,
        "UpToNormalScope": defaults.up_to_normal,
        "CriteriaRequireStatus": defaults.require_status,
        "DialScope": defaults.dial_scope,
        "ResponderConstraint": defaults.responder,
        "BcssBelowSourceFallback": defaults.below_source,
    }
    assert params == set(fields)
    for name, value in fields.items():
        assert cat.param(name).default == value


def test_every_seed_section_is_covered() -> None:
    cat = catalogue()
    sections = {s.section for s in cat.sections if s.seed == "002_46acbb50977df48d.txt"}
    used = {s.section for r in cat.by_mechanism("am") for s in r.sources}
    assert sections <= used
