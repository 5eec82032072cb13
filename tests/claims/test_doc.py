"""spec/CLAIMS.md carries the generated tables verbatim (regenerate with `haconform prove --markdown`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.claims.registry import run_all
from spec.claims.report import claims_table, constraints_table, coverage_table

DOC = Path(__file__).resolve().parents[2] / "spec" / "CLAIMS.md"


@pytest.mark.unit
def test_claims_doc_tables_are_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    for table in (claims_table(run_all()), constraints_table(), coverage_table()):
        assert table in text, "spec/CLAIMS.md is stale: run `haconform prove --update-doc`"


@pytest.mark.unit
def test_every_refuted_claim_is_discussed_in_the_doc() -> None:
    text = DOC.read_text(encoding="utf-8")
    for r in run_all():
        if r.claim.expected == "refuted" or r.claim.repairs:
            assert r.claim.requirement in text
