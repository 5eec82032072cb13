"""What the HTML report shows, gathered from a check report directory: violations cause first, run facts, rules.

Reads what both engines write (summary.json, violations.jsonl with the events involved, quarantine.jsonl,
unknown.jsonl) and, when the trace files are at hand (given, or the summary's own `files`), the other events
of each violated entity and the model's state after each of them (`conformance.audit.states`).

Cause first (issue 21): violations are grouped by entity (trace and entity), the groups ordered by the time of
their earliest violation; within a group the earliest violation is the card's head and the later ones follow
from it (collapsed under it): they were judged on the state the earlier one left behind. A violation's time is
its judged event's: the involved event with the highest sequence number (a fold reports a breach when it
meets the last event the rule needed, never ahead of it). Violations with no event go last.
`in_cause_order` flattens the cards for every other output that lists violations (the terminal, JUnit).

What each rule judged (TR-009, issue 29): summary.json `rules`, one row per rule in one of four states
(`conformance.engine.tally.STATES`): violated, held (judged at least once, nothing violated), not judged (its
mechanism's events were there, no instance was judged: `reason` says why), not applicable (no event of its
mechanism). `check_rule_rows` refuses rows that break this (a rule judged 0 times shown as held, counts that do
not add up): every renderer reads the rows through it (`rule_rows`), so an inconsistent summary is an internal
error of `check` (exit 3) or an unusable input of `report` (exit 2), never a page that says a rule held. A
summary written before the rows existed gets rows that say no rule held (`rules_checked`: what its monitors ran).
"""

from __future__ import annotations

import hashlib
import importlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import conformance
from conformance.engine.core_fold import CORE_RULES
from conformance.engine.rulesets import SIMULATED_ONLY
from conformance.engine.tally import STATES, by_state
from model.msgtrk.rules import RULES as MSGTRK_RULES
from model.registry import mechanisms

MAX_CARDS = 200  # cards drawn with a timeline (the rest are listed)
MAX_ENTITY_EVENTS = 60  # events on one timeline: the involved ones and their nearest neighbours
_LAST = (float("inf"), float("inf"))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise ValueError(f"{path} is missing: not a complete check report directory")
    out = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not JSON ({exc.msg})") from None
    return out


def judged_event(v: dict[str, Any]) -> dict[str, Any] | None:
    """The event a violation was judged at: its involved event with the highest sequence number."""
    events = [e for e in v.get("events", []) if e.get("event_id") in set(v.get("event_ids", []))]
    return max(events, key=lambda e: (e["seq"], e["event_id"])) if events else None


def when(v: dict[str, Any]) -> tuple[float, float]:
    e = judged_event(v)
    return (e["ts_ms"], e["seq"]) if e is not None else _LAST


@dataclass
class Card:
    """One entity's violations: `head` (the earliest, the cause) and `follows` (later, collapsed under it).
    Each violation is `(index in violations.jsonl, violation)`."""

    trace_id: str
    entity: str
    head: tuple[int, dict[str, Any]]
    follows: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.trace_id}\x1f{self.entity}"

    def all(self) -> list[tuple[int, dict[str, Any]]]:
        return [self.head, *self.follows]


def cause_first(violations: list[dict[str, Any]]) -> list[Card]:
    """The violations as cards, cause first (module docstring)."""
    groups: dict[tuple[str, str], list[tuple[int, dict[str, Any]]]] = defaultdict(list)
    for i, v in enumerate(violations):
        groups[(v.get("trace_id", ""), v.get("entity", ""))].append((i, v))
    cards = []
    for (trace, entity), items in groups.items():
        items.sort(key=lambda iv: (*when(iv[1]), iv[1]["requirement"], iv[0]))
        cards.append(Card(trace, entity, items[0], items[1:]))
    cards.sort(key=lambda c: (*when(c.head[1]), c.trace_id, c.entity))
    return cards


def alike(cards: list[Card]) -> list[list[int]]:
    """The cards' indices grouped by cause: the first violation's requirement and rule; the groups in the order
    of their earliest card, each group's cards in card order (issue 31: one card shown, "N more like it")."""
    groups: dict[tuple[str, str], list[int]] = {}
    for k, c in enumerate(cards):
        groups.setdefault((c.head[1].get("requirement", ""), c.head[1].get("rule", "")), []).append(k)
    return list(groups.values())


def by_rule(violations: list[dict[str, Any]]) -> list[Card]:
    """The old order (one card per violation, sorted by rule): kept for the report test's twin only."""
    order = sorted(enumerate(violations), key=lambda iv: (iv[1]["requirement"], iv[1]["rule"], iv[0]))
    return [Card(v.get("trace_id", ""), v.get("entity", ""), (i, v)) for i, v in order]


def in_cause_order(violations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The violations in the report's order (`cause_first`): each entity's cause, then what followed from it."""
    return [v for c in cause_first(violations) for _, v in c.all()]


STATE_TEXT = {"violated": "violated", "held": "held", "not-judged": "not judged", "not-applicable": "not applicable"}
ROW_KEYS = ("rule", "requirement", "mechanism", "state", "judged", "held", "violated")
NO_COUNTS = "summary.json holds no per-rule counts (written before haconform counted what each rule judged)"


class RuleRowError(ValueError):
    """summary.json `rules` rows that contradict themselves (`check_rule_rows`)."""


def row_problems(r: dict[str, Any]) -> list[str]:
    """What is inconsistent in one rule row (module docstring): empty when the row may be shown."""
    missing = [k for k in ROW_KEYS if k not in r]
    if missing:
        return [f"missing {', '.join(missing)}"]
    counts = {k: r[k] for k in ("judged", "held", "violated", "not_judged") if k in r}
    bad = [k for k, n in counts.items() if not isinstance(n, int) or isinstance(n, bool) or n < 0]
    if bad:
        return [f"{', '.join(bad)} not a count"]
    out = []
    state, judged, violated = r["state"], r["judged"], r["violated"]
    if state not in STATES:
        out.append(f"state {state!r} is none of {', '.join(STATES)}")
    if r["held"] != max(judged - violated, 0):
        out.append(f"held {r['held']} is not judged {judged} - violated {violated}")
    must = "violated" if violated else "held" if judged else None
    if must is not None and state != must:
        out.append(f"state {state!r} with {judged} judged and {violated} violated: it is {must!r}")
    if must is None and state in ("violated", "held"):
        out.append(f"state {state!r} with 0 judged and 0 violated: a rule judged 0 times is never {state}")
    if state in ("not-judged", "not-applicable") and not r.get("reason"):
        out.append(f"state {state!r} without a reason")
    return out


def check_rule_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`rows` unchanged when every row is consistent, else RuleRowError naming each bad row."""
    problems = [f"{r.get('requirement')} {r.get('rule')}: {p}" for r in rows for p in row_problems(r)]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise RuleRowError(f"inconsistent rule rows in summary.json: {'; '.join(problems[:5])}{more}")
    return rows


def states_line(rows: list[dict[str, Any]]) -> str:
    """`N violated, N held, N not judged, N not applicable`: the four states' counts, as every output says it."""
    return ", ".join(f"{n} {STATE_TEXT[state]}" for state, n in by_state(rows).items())


def rule_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The rules' rows the outputs show: summary.json `rules`, checked (`check_rule_rows`, and `rules_by_state`
    must count them); a summary written before the rows existed gets rows that claim no held rule."""
    if "rules" not in summary:
        return _rows_without_counts(summary)
    rows = check_rule_rows(list(summary["rules"]))
    if (said := summary.get("rules_by_state")) is not None and dict(said) != by_state(rows):
        raise RuleRowError(f"rules_by_state {dict(said)} does not count the rows: {by_state(rows)}")
    return rows


def _rows_without_counts(summary: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for r in rules_checked(summary):
        n = r["violations"]
        state = "violated" if n else "not-judged" if r["events"] else "not-applicable"
        why = None if n else NO_COUNTS if r["events"] else f"no event of mechanism {r['mechanism']} in the input"
        out.append({"rule": r["rule"], "requirement": r["requirement"], "mechanism": r["mechanism"], "kind": None,
                    "state": state, "judged": n, "held": 0, "violated": n, "not_judged": 0, "reason": why,
                    "statement": r["statement"]})  # fmt: skip
    return out


def shown_events(rows: list[dict[str, Any]], involved: set[str]) -> list[dict[str, Any]]:
    """At most `MAX_ENTITY_EVENTS` of an entity's events (seq order): the involved ones, then their nearest
    neighbours, so a long entity never hides the events the card is about."""
    rows = sorted(rows, key=lambda r: (r["seq"], r["event_id"]))
    if len(rows) <= MAX_ENTITY_EVENTS:
        return rows
    keep = {i for i, r in enumerate(rows) if r["event_id"] in involved}
    seeds = sorted(keep) or [0]
    distance = 1
    while len(keep) < MAX_ENTITY_EVENTS and distance < len(rows):
        for i in seeds:
            for j in (i - distance, i + distance):
                if 0 <= j < len(rows) and len(keep) < MAX_ENTITY_EVENTS:
                    keep.add(j)
        distance += 1
    return [rows[i] for i in sorted(keep)]


def tool_version() -> str:
    """The project's version (`conformance.__version__`, pyproject.toml's)."""
    return conformance.__version__


def run_facts(files: list[str]) -> dict[str, Any]:
    """What `haconform check` adds to summary.json for the report: the tool's version, when the run ended
    (UTC; a report is a file output, so a timestamp of the run belongs there) and each input's SHA-256."""
    inputs = []
    for name in files:
        p = Path(name)
        if p.is_file():
            digest = hashlib.sha256()
            with p.open("rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(block)
            inputs.append({"file": name, "bytes": p.stat().st_size, "sha256": digest.hexdigest()})
        else:
            inputs.append({"file": name, "bytes": None, "sha256": None})
    return {
        "tool": "haconform",
        "version": tool_version(),
        "finished_utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "inputs": inputs,
    }


def _rules_of(package: str) -> dict[str, Any]:
    try:
        return dict(importlib.import_module(f"model.{package}.rules").RULES)
    except (ModuleNotFoundError, AttributeError):
        return {}


def rules_checked(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """Every rule the check applied, with the events its monitor judged and its violations: only for a summary
    written before summary.json had `rules` (`rule_rows`), which says no rule of it held.

    A rule is exercised when its monitor folded events of its mechanism (the core rules: every row checked);
    a mechanism with no events in the input is listed with 0 and no rule of it was exercised.
    """
    counts = {(r["requirement"], r["rule"]): r["count"] for r in summary.get("violations_by_rule", [])}
    by_mech = summary.get("events_by_mechanism", {})
    applied = summary.get("rule_sets", {}).get("applied", ["core", "simulated"])
    rows_checked = summary.get("rows_checked", 0) or 0
    out = []
    for name, req in CORE_RULES.items():
        if name in SIMULATED_ONLY and "simulated" not in applied:
            continue
        out.append(_row("core", name, getattr(req, "requirement", req), "", rows_checked, counts))
    out.append(_row("core", "schema-conformance", "TR-005", "", summary.get("rows_read", 0) or 0, counts))
    for spec in mechanisms().values():
        if spec.name == "net" or spec.records not in summary.get("monitors", [spec.records]):
            continue
        events = by_mech.get(spec.records, 0)
        for rule in _rules_of(spec.name).values():
            out.append(_row(spec.records, rule.name, rule.requirement, rule.statement, events, counts))
    if "msgtrk" in applied:
        for rule in MSGTRK_RULES.values():
            out.append(_row("msgtrk", rule.name, rule.requirement, rule.statement, by_mech.get("msgtrk", 0), counts))
    known = {(r["requirement"], r["rule"]) for r in out}
    for (req, name), n in sorted(counts.items()):  # a rule the tables above do not list (never dropped)
        if (req, name) not in known:
            out.append({"mechanism": "?", "rule": name, "requirement": req, "statement": "", "events": None,
                        "violations": n})  # fmt: skip
    return out


def _row(mech: str, name: str, req: str, statement: str, events: int, counts: dict) -> dict[str, Any]:
    return {
        "mechanism": mech,
        "rule": name,
        "requirement": req,
        "statement": statement,
        "events": events,
        "violations": counts.get((req, name), 0),
    }
