"""Every requirement ID cited by a claim or a configuration constraint exists in the catalogue."""

from __future__ import annotations

import pytest

from spec.catalogue import catalogue
from spec.claims.config import CONSTRAINTS
from spec.claims.registry import all_claims
from spec.claims.skew import DEFAULT_ORDERINGS

CLAIM_KINDS = {"ordering", "timing", "parameter", "invariant"}


@pytest.mark.unit
@pytest.mark.parametrize("claim", all_claims(), ids=lambda c: c.name)
def test_claim_requirement_exists_with_a_claim_kind(claim) -> None:
    req = catalogue().get(claim.requirement)
    assert req.kind in CLAIM_KINDS, (claim.name, claim.requirement, req.kind)


@pytest.mark.unit
def test_constraint_and_ordering_requirements_exist() -> None:
    cat = catalogue()
    for c in CONSTRAINTS:
        for rid in c.requirements:
            assert cat.has(rid), (c.name, rid)
    for o in DEFAULT_ORDERINGS:
        assert cat.get(o.requirement).kind == "ordering"


@pytest.mark.unit
def test_claim_ids_in_the_reserved_range_only_come_from_claims_files() -> None:
    """IDs 900-999 are this package's; any such requirement must live in a *_claims.toml file."""
    from pathlib import Path

    from spec.catalogue import REQUIREMENTS_DIR

    for path in REQUIREMENTS_DIR.glob("*.toml"):
        if path.name.endswith("_claims.toml"):
            continue
        assert "-9" not in "".join(line for line in path.read_text().splitlines() if line.startswith("id = ")), path
    assert Path(REQUIREMENTS_DIR).is_dir()


@pytest.mark.unit
def test_every_id_cited_in_the_claims_package_and_doc_exists() -> None:
    """Requirement and interpretation IDs named in spec/claims/*.py and spec/CLAIMS.md are all in the catalogue."""
    import re

    from spec.catalogue import SPEC_DIR, cite

    texts = [p.read_text(encoding="utf-8") for p in (SPEC_DIR / "claims").glob("*.py")]
    texts.append((SPEC_DIR / "CLAIMS.md").read_text(encoding="utf-8"))
    ids = sorted({m for t in texts for m in re.findall(r"\b(?:SR|AM|PF|BF|TR)-(?:I?\d{2,3}|P\d{2})\b", t)})
    assert len(ids) > 40
    cite(*ids)
