"""Unknown event kinds of a known mechanism are reported, never skipped (`conformance.engine.folds.GroupFolds`
with the vocabularies of `model.registry.MechanismSpec.kinds`): an older am trace's `SERVER_DIAL` (now
`AM_CONFIG`) and a made-up kind in an sr or pf trace are counted unjudgeable, with the kind named, once per
kind per group, in `unknown.jsonl`; the check exits 2. Twins: the same traces with their current kinds are
judged clean, and every kind the models record is in its mechanism's vocabulary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.check import verdict
from conformance.cli import main
from model.registry import mechanisms, vocabulary
from traces.corpus import SAMPLES_DIR
from traces.io import read_events

pytestmark = pytest.mark.unit

RENAMED = {  # mechanism -> (sample, kind in it, the kind it is renamed to, what follows the kind)
    "am": ("am-s1.jsonl", "AM_CONFIG", "SERVER_DIAL", ',"attrs":{"dial"'),  # the dials, as older traces had
    "sr": ("sr-s1.jsonl", "HAREDIRECT", "HAREDIRECT_V0", ""),
    "pf": ("pf-s1.jsonl", "CLIENT_ACCESS", "CLIENT_ACCESS_V0", ""),
}

# without HAREDIRECT the sr monitor finds violations (shadows stored without a session): exit 1, and the
# unknown kind is listed all the same
EXIT = {"am": 2, "pf": 2, "sr": 1}


def renamed(tmp_path: Path, mechanism: str) -> tuple[Path, int]:
    sample, kind, old, tail = RENAMED[mechanism]
    text = (SAMPLES_DIR / "clean" / sample).read_text(encoding="utf-8")
    needle = f'"kind":"{kind}"{tail}'
    path = tmp_path / f"{mechanism}-old.jsonl"
    path.write_text(text.replace(needle, f'"kind":"{old}"{tail}'), encoding="utf-8")
    return path, text.count(needle)


@pytest.mark.parametrize("mechanism", sorted(RENAMED))
def test_an_unknown_kind_is_reported_with_its_name(mechanism: str, tmp_path: Path) -> None:
    path, count = renamed(tmp_path, mechanism)
    out = tmp_path / "out"
    assert main(["check", "--engine", "python", "--quiet", str(path), "--out", str(out)]) == EXIT[mechanism]
    notes = [json.loads(line) for line in (out / "unknown.jsonl").read_text(encoding="utf-8").splitlines()]
    old = RENAMED[mechanism][2]
    about = [n for n in notes if repr(old) in n["note"]]
    assert about and all(n["mechanism"] == mechanism for n in about)
    assert sum(int(n["note"].split(": ", 1)[1].split(" ", 1)[0]) for n in about) == count  # every event counted
    assert all("not in the" in n["note"] and "vocabulary" in n["note"] for n in about)


@pytest.mark.parametrize("mechanism", sorted(RENAMED))
def test_twin_the_current_kinds_are_judged_clean(mechanism: str, tmp_path: Path) -> None:
    sample = SAMPLES_DIR / "clean" / RENAMED[mechanism][0]
    assert main(["check", "--engine", "python", "--quiet", str(sample), "--out", str(tmp_path / "o")]) == 0


def test_once_per_kind_per_group_even_when_the_monitor_finds_violations(tmp_path: Path) -> None:
    """The note stands beside the monitor's own result: violations do not hide it."""
    path, _ = renamed(tmp_path, "sr")
    events = read_events(path).events
    result = verdict(events)
    ours = [n for n in result.notes if "'HAREDIRECT_V0'" in n]
    assert len(ours) == 1, ours  # sr judges a whole trace: one note for the kind in the trace


def test_every_kind_the_models_record_is_in_the_vocabulary() -> None:
    """The vocabulary is not too narrow: no sample or mutant trace of a mechanism records a kind outside it."""
    for path in sorted((SAMPLES_DIR).glob("*/*.jsonl")):
        for e in read_events(path).events:
            vocab = vocabulary(e.mechanism)
            assert vocab is None or e.kind in vocab, (path.name, e.mechanism, e.kind)
    assert {name for name, spec in mechanisms().items() if spec.kinds} == {"sr", "am", "pf"}
