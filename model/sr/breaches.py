"""Kept for importers of the old module name: the rules table and `Breach` now live in `rules.py`."""

from __future__ import annotations

from model.sr.rules import RULES, Breach, breach

__all__ = ["RULES", "Breach", "breach"]
