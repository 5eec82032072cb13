"""What every rule judged in a check, and the four states of a rule in the report (TR-009, issue 29).

Each fold counts, per rule, the instances it evaluated and the instances it met but could not judge
(`traces.verdict.Tally`). The engine adds every finished fold's tally into one `RuleCounts`, keyed by
(monitor, rule name): the single-process drivers through `conformance.engine.stream.Router`, the Spark
tasks by returning theirs (merged in the driver), the incremental state by saving each trace's. Violations
are counted from the violations themselves; the two format rules the engine judges itself are counted by
it: TR-002 (every event checked for a repeated ID) and TR-005 (every row read checked against the schema).

`rule_rows` gives the report's row for every rule of every monitor that ran, with one of four states:
- `violated`: at least one violation;
- `held`: at least one instance judged, none violated;
- `not-judged`: the input holds events the rule's monitor reads, but the rule judged no instance (`reason`:
  the fold's first reason for an instance it could not judge, or that no instance arose);
- `not-applicable`: the input holds no event the rule's monitor reads (or, for TR-003 and TR-006, only imported
  logs, to which they do not apply: TR-008).
A rule with no judged instance is never `held`. `nothing_judged` is true when no rule beyond the format
rules (TR-001, TR-002, TR-004, TR-005; and TR-006 and TR-008, which say only that a trace begins with its
marker) judged an instance: the check is then unknown, never valid.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from conformance.engine import core_rules
from conformance.engine.rulesets import IMPORTED_MECHANISM, SIMULATED_ONLY
from model.registry import mechanisms
from spec.catalogue import require
from traces.verdict import Rule, Tally, rules_in

require("TR-001", "TR-002", "TR-004", "TR-005", "TR-009")

# the format rules: they say a trace is shaped as the format demands (TR-006 and TR-008: it begins with its
# marker), never how a mechanism behaved; a check judged by these alone has judged nothing (spec: TR-009)
FORMAT_REQUIREMENTS = frozenset({"TR-001", "TR-002", "TR-004", "TR-005", "TR-006", "TR-008"})
STATES = ("violated", "held", "not-judged", "not-applicable")
NO_INSTANCE = "no instance of the rule in this input"
UNCOUNTED = "its monitor does not count the instances its rules judge"
Key = tuple[str, str]  # (monitor, rule name)


class RuleCounts:
    """Judged and not-judged instances per (monitor, rule) over a whole check; plain dicts (it pickles)."""

    __slots__ = ("judged", "uncounted", "unjudged")

    def __init__(self) -> None:
        self.judged: dict[Key, int] = {}
        self.unjudged: dict[Key, list] = {}  # key -> [count, first reason]
        self.uncounted: set[str] = set()  # monitors that gave a result without a tally

    def add(self, monitor: str, tally: Tally | None) -> None:
        """One finished fold's tally (None: a monitor that does not count, said in the report)."""
        if tally is None:
            self.uncounted.add(monitor)
            return
        judged = self.judged
        for name, n in tally.judged.items():
            key = (monitor, name)
            judged[key] = judged.get(key, 0) + n
        for name, (n, reason) in tally.unjudged.items():
            self._unjudged((monitor, name), n, reason)

    def count(self, monitor: str, rule: str, n: int) -> None:
        """Instances judged by the engine itself (TR-002, TR-005)."""
        if n:
            key = (monitor, rule)
            self.judged[key] = self.judged.get(key, 0) + n

    def merge(self, other: RuleCounts) -> None:
        for key, n in other.judged.items():
            self.judged[key] = self.judged.get(key, 0) + n
        for key, (n, reason) in other.unjudged.items():
            self._unjudged(key, n, reason)
        self.uncounted |= other.uncounted

    def _unjudged(self, key: Key, n: int, reason: str) -> None:
        entry = self.unjudged.get(key)
        if entry is None:
            self.unjudged[key] = [n, reason]
        else:
            entry[0] += n

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RuleCounts):
            return NotImplemented
        return (self.judged, self.unjudged, self.uncounted) == (other.judged, other.unjudged, other.uncounted)


@dataclass(frozen=True)
class Table:
    """The rules of one monitor and which events it reads (`records`: a mechanism value; None: any event)."""

    monitor: str
    rules: tuple[Rule, ...]
    records: str | None


def tables(monitors: Iterable[str], reported: Iterable[dict[str, Any]] = ()) -> list[Table]:
    """The core rules, then the table of each monitor that ran, in the registry's order. A monitor registered
    without a rules module (`model/<name>/rules.py`) gets the rules its violations name (`reported`: the rows
    of `violations_by_rule`), so what it found is never left out of the rows."""
    specs = mechanisms()
    out = [Table("core", tuple(core_rules.RULES.values()), None)]
    for name in monitors:
        spec = specs.get(name)
        records = spec.records if spec is not None else (None if name == "skew" else name)
        try:
            rules = rules_in(importlib.import_module(f"model.{name}.rules"))
        except ModuleNotFoundError as exc:
            if exc.name not in (f"model.{name}", f"model.{name}.rules"):
                raise
            named = {(v["rule"], v.get("requirement", "")) for v in reported if v["mechanism"] == name}
            rules = tuple(Rule(rule, req, "always", "", (), name) for rule, req in sorted(named))
        out.append(Table(name, rules, records))
    return out


def rule_rows(
    counts: RuleCounts,
    violations_by_rule: list[dict[str, Any]],
    events_by_mechanism: dict[str, int],
    monitors: Iterable[str],
) -> list[dict[str, Any]]:
    """One row per rule of every monitor that ran (see the module for the four states)."""
    violated: Counter[tuple[str, str]] = Counter()
    for v in violations_by_rule:
        violated[(v["mechanism"], v["rule"])] += v["count"]
    seen = {m for m, n in events_by_mechanism.items() if n}
    simulated = bool(seen - {IMPORTED_MECHANISM})  # TR-008: the simulated-only core rules apply to these alone
    rows = []
    for t in tables(monitors, violations_by_rule):
        applicable = bool(seen) if t.records is None else t.records in seen
        for r in t.rules:
            here = applicable and (simulated or t.monitor != "core" or r.name not in SIMULATED_ONLY)
            rows.append(_row(t, r, counts, violated[(r.mechanism if r.table else t.monitor, r.name)], here))
    return rows


def _row(t: Table, r: Rule, counts: RuleCounts, violated: int, applicable: bool) -> dict[str, Any]:
    key = (t.monitor, r.name)
    judged = max(counts.judged.get(key, 0), violated)  # a violation is an instance judged
    skipped, why = counts.unjudged.get(key, (0, None))
    if violated:
        state, reason = "violated", None
    elif judged:
        state, reason = "held", None
    elif applicable:
        state = "not-judged"
        reason = why or (UNCOUNTED if t.monitor in counts.uncounted else NO_INSTANCE)
    elif t.monitor == "core":
        state, reason = "not-applicable", "the input holds only imported logs, to which it does not apply (TR-008)"
    else:
        state, reason = (
            "not-applicable",
            f"the input holds no {t.records} event" if t.records else "the input holds no event",
        )
    return {
        "rule": r.name,
        "requirement": r.requirement,
        "mechanism": t.monitor,
        "kind": r.kind,
        "state": state,
        "judged": judged,
        "held": judged - violated,
        "violated": violated,
        "not_judged": skipped,
        "reason": reason,
        "statement": r.statement,
    }


def by_state(rows: list[dict[str, Any]]) -> dict[str, int]:
    found = Counter(r["state"] for r in rows)
    return {s: found[s] for s in STATES}


def nothing_judged(rows: list[dict[str, Any]]) -> bool:
    """No rule beyond the format rules judged an instance (a monitor that gives no tally judged nothing it
    can show: its rules are not judged, `UNCOUNTED`)."""
    return not any(r["judged"] for r in rows if r["requirement"] not in FORMAT_REQUIREMENTS)


def nothing_judged_note(events_by_mechanism: dict[str, int]) -> str:
    seen = ", ".join(f"{m} ({n} events)" for m, n in sorted(events_by_mechanism.items()) if n) or "none"
    return (
        "nothing to judge: no rule beyond the format rules (TR-001, TR-002, TR-004, TR-005, TR-006, TR-008) "
        "judged an instance; "
        f"mechanisms seen: {seen}"
    )
