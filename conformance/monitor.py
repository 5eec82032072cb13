"""Verdicts, violations, rules and the monitor fold protocol: re-exported from `traces.verdict`, where they
live below the mechanisms (kept so that callers of the engine's old module keep working)."""

from __future__ import annotations

from traces.verdict import (
    ContextCursor,
    Fold,
    Monitor,
    MonitorResult,
    Rule,
    RuleKind,
    Verdict,
    Violation,
    fold_all,
    in_seq_order,
    restore_fold,
    save_fold,
)

__all__ = [
    "ContextCursor",
    "Fold",
    "Monitor",
    "MonitorResult",
    "Rule",
    "RuleKind",
    "Verdict",
    "Violation",
    "fold_all",
    "in_seq_order",
    "restore_fold",
    "save_fold",
]
