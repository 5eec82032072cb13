"""The shipped sample corpus is what the models produce today, and every mutant shows up in it."""

from __future__ import annotations

import json

import pytest

from conformance.audit.samples import regenerate as regenerate_audit
from conformance.check import check_events
from conformance.samples import regenerate
from model.registry import mechanisms
from traces.corpus import SAMPLES_DIR
from traces.io import read_events

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    out = tmp_path_factory.mktemp("samples")
    regenerate(out)
    regenerate_audit(out / "audit")  # what `haconform samples` writes besides
    return out


def test_shipped_samples_are_up_to_date(fresh):
    shipped = sorted(p.relative_to(SAMPLES_DIR) for p in SAMPLES_DIR.rglob("*") if p.is_file())
    assert shipped == sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file()), (
        "run `haconform samples` and commit the result"
    )
    for rel in shipped:
        if rel.suffix == ".parquet":
            assert read_events(SAMPLES_DIR / rel).events == read_events(fresh / rel).events, rel
        else:
            assert (SAMPLES_DIR / rel).read_bytes() == (fresh / rel).read_bytes(), rel


def test_clean_samples_check_clean(fresh):
    for path in sorted((fresh / "clean").iterdir()):
        assert check_events(read_events(path).events) == [], path.name


def test_every_mutant_of_every_model_yields_a_trace_with_a_known_violation(fresh):
    index = json.loads((fresh / "mutants" / "INDEX.json").read_text())
    expected = {f"{name}--{m}.jsonl" for name, spec in mechanisms().items() for m in spec.mutants}
    assert set(index) == expected, "every mutant must be caught at some seed by the checker"
    for name, entry in index.items():
        assert entry["seed"] is not None and entry["breaks"], name
