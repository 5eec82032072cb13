"""Every parameter's default is pinned to the seed line that states it, or says why no seed states it (issue 9).

A changed default must fail here by the parameter's name, not only because the golden samples moved.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from spec.catalogue import SPEC_DIR, CatalogueError, catalogue, cite, load, seeds_dir
from spec.param_sources import Pin, check_pin, read_value

pytestmark = pytest.mark.unit
SEEDS = seeds_dir()
needs_seeds = pytest.mark.skipif(
    SEEDS is None or not SEEDS.is_dir(), reason="seed documents (../shared/seeds) not found"
)
ID_IN_TEXT = re.compile(r"\b(?:SR|AM|PF|BF|TR)-(?:\d{3}|P\d{2}|I\d{2})\b")


def _problems(cat) -> list[str]:
    assert SEEDS is not None
    out = []
    for pid, src in cat.param_sources.items():
        for pin in src.pins:
            out += check_pin(pin, pid, cat.get(pid).parameter, SEEDS)
    return out


def test_every_parameter_has_a_source_entry():
    cat = catalogue()
    params = {r.id for r in cat.requirements.values() if r.parameter is not None}
    missing = sorted(params - set(cat.param_sources))
    assert not missing, f"parameters with no entry in spec/param_sources.toml: {missing}"


@needs_seeds
def test_every_pinned_default_stands_on_its_seed_line():
    cat = catalogue()
    assert sum(len(s.pins) for s in cat.param_sources.values()) >= 50
    problems = _problems(cat)
    assert not problems, "\n".join(problems)


def test_parameters_without_a_seed_value_say_why_and_where_it_comes_from():
    cat = catalogue()
    none = [s for s in cat.param_sources.values() if s.source == "none"]
    assert none, "the AutoDatabaseMountDial thresholds have no number in seed 002"
    assert {"AM-P02", "AM-P03", "AM-P04"} <= {s.id for s in none}
    for s in none:
        assert len(s.reason) > 20 and s.value_from, s.id
        cite(*ID_IN_TEXT.findall(s.value_from))  # every interpretation or requirement it names exists


@pytest.mark.parametrize(
    ("text", "reading", "name", "expected"),
    [
        ("2 days", "duration", "SafetyNetHoldTime", 2 * 86_400_000),
        ("48 hours", "duration", "BackfillLaterRetryRemote", 48 * 3_600_000),
        ("two days", "duration", "SafetyNetHoldTime", 2 * 86_400_000),
        ("1 minute on Edge Transport servers.", "duration", "ReceiveConnectionInactivityTimeoutEdge", 60_000),
        ("15 分钟", "duration", "ReplicationSendAlways", 15 * 60_000),
        ("24 小时", "duration", "ReplicationExpiry", 24 * 3_600_000),
        ("300 KB", "number", "ReplicationMessageSizeLimit", 300),
        ("It has a copy queue length less than 10 log files.", "number", "CriteriaCopyQueueLengthBelow", 10),
        ("$false", "boolean", "RejectMessageOnShadowFailure", False),
        ("12:15 A.M. and 12:15 P.M.", "clock-period", "ReplicationStatusThreadPeriod", 12 * 3_600_000),
        ("12:15 A.M. and 12:15 P.M.", "clock-offset", "ReplicationStatusThreadOffset", 15 * 60_000),
    ],
)
def test_readings_convert_units_explicitly(text, reading, name, expected):
    assert read_value(text, reading, catalogue().param(name)) == expected


@pytest.mark.parametrize(
    ("text", "reading", "name"),
    [
        ("300", "number", "ReplicationMessageSizeLimit"),  # a size without its unit is not read as KB
        ("10 messages", "number", "CriteriaCopyQueueLengthBelow"),
        ("a while", "duration", "SafetyNetHoldTime"),
        ("true", "boolean", "ShadowRedundancyEnabled"),
        ("12:15 A.M.", "clock-period", "ReplicationStatusThreadPeriod"),
    ],
)
def test_readings_refuse_text_that_states_no_value(text, reading, name):
    with pytest.raises(ValueError):
        read_value(text, reading, catalogue().param(name))


def _copy_spec(tmp_path: Path) -> Path:
    spec = tmp_path / "spec"
    shutil.copytree(SPEC_DIR / "requirements", spec / "requirements")
    shutil.copy(SPEC_DIR / "seeds.toml", spec / "seeds.toml")
    shutil.copy(SPEC_DIR / "param_sources.toml", spec / "param_sources.toml")
    return spec


@needs_seeds
@pytest.mark.parametrize(
    ("pid", "changed"), [("SR-P16", 3), ("PF-P06", 30), ("SR-P03", "RemoteOnly"), ("SR-P01", False)]
)
def test_twin_a_changed_default_fails_by_the_parameters_name(pid, changed):
    cat = catalogue()
    req = cat.get(pid)
    mutated = replace(req, parameter=replace(req.parameter, default=changed))
    problems = _problems(replace(cat, requirements={**cat.requirements, pid: mutated}))
    assert problems and all(p.startswith(f"{pid} {req.parameter.name}:") for p in problems), problems
    assert len(problems) == len(cat.param_sources[pid].pins)  # every pin of it fails, nothing else does


@needs_seeds
def test_twin_a_changed_seed_line_fails_by_the_parameters_name(tmp_path):
    assert SEEDS is not None
    seeds = tmp_path / "seeds"
    shutil.copytree(SEEDS, seeds)
    cat = catalogue()
    pin = cat.param_sources["PF-P11"].pins[0]
    path = seeds / pin.seed
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[pin.line - 1] = lines[pin.line - 1].replace("300", "400")
    path.write_text("\n".join(lines), encoding="utf-8")
    problems = check_pin(pin, "PF-P11", cat.get("PF-P11").parameter, seeds)
    assert problems and all(p.startswith("PF-P11 ReplicationMessageSizeLimit:") for p in problems)
    wrong_row = Pin(
        pin.seed, pin.line, pin.text, pin.reading, label="Replication Message Count Limit", label_line=pin.label_line
    )
    assert any("row label" in p for p in check_pin(wrong_row, "PF-P11", cat.get("PF-P11").parameter, SEEDS))


def test_loader_rejects_a_none_source_without_a_reason(tmp_path):
    spec = _copy_spec(tmp_path)
    (spec / "param_sources.toml").write_text('[[param]]\nid = "AM-P02"\nsource = "none"\nvalue_from = "AM-I09"\n')
    with pytest.raises(CatalogueError, match=r"param_sources.toml param AM-P02: source 'none' needs"):
        load(spec)
    (spec / "param_sources.toml").write_text(
        '[[param]]\nid = "SR-001"\nsource = "none"\nreason = "r"\nvalue_from = "v"\n'
    )
    with pytest.raises(CatalogueError, match="SR-001: not a parameter"):
        load(spec)
    (spec / "param_sources.toml").write_text(
        '[[param]]\nid = "SR-P13"\nsource = "seed"\n[[param.pin]]\n'
        'seed = "000_bc7da9fde6232d0b.txt"\nline = 316\ntext = "2 minutes"\n'
        'reading = "fuzzy"\n'
    )
    with pytest.raises(CatalogueError, match="field 'reading'"):
        load(spec)
