"""Every claim, in a stable order, and running them all (used by `haconform prove` and the tests)."""

from __future__ import annotations

from dataclasses import replace

from spec.claims import am, bf, pf, sr
from spec.claims.engine import Claim, ClaimResult, run_claim
from spec.claims.ids import COVERS


def all_claims() -> list[Claim]:
    return [replace(c, covers=COVERS.get(c.name, ())) for c in (*sr.claims(), *pf.claims(), *bf.claims(), *am.claims())]


def run_all(names: list[str] | None = None) -> list[ClaimResult]:
    """Run every claim (or those whose name starts with one of `names`) with its twin."""
    chosen = [c for c in all_claims() if not names or any(c.name.startswith(n) for n in names)]
    return [run_claim(c) for c in chosen]
