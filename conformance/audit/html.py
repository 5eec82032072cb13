"""One self-contained HTML page from a check report directory (`haconform report`, `check --html`).

The report, cause first: the run's facts (tool version, when it ran, engine, rule sets, the input
files with their SHA-256), the rules checked with their counts, then one card per violated entity, the
entity with the earliest violation first (`report_data.cause_first`). A card quotes the requirement's
statement and the seed's sentence, the seed named by its subject (`seedtext`), draws the entity's events on
a time axis (`page_assets`), marks every event its violations involve, and shows the model's state after
each event (`states`: the mechanism's fold replayed, `describe()`); the later violations of the entity
follow, collapsed. No network: the CSS, the script and the data are inline.

The report at any size: the first cause is on the first screen, right under the verdict
(`_first_cause`); the input files and the chain of custody of imported logs (`custody`) are collapsed; cards
of one cause are one card with "and N more like it", and only the first `cards.DRAWN` causes' cards are HTML,
the others wait as data and are drawn when asked for (`cards`).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from conformance.audit.cards import DRAWN, at_text, lazy_block, quote, render_cards
from conformance.audit.custody import import_starts, render_custody
from conformance.audit.page_assets import CSS, JS
from conformance.audit.report_data import (
    MAX_CARDS,
    STATES,
    Card,
    _jsonl,
    alike,
    by_rule,
    by_state,
    cause_first,
    rule_rows,
    states_line,
)
from conformance.audit.seedtext import cited
from conformance.audit.states import gather


def load_report(out_dir: Path, traces: list[str] | None = None, order: str = "cause") -> dict[str, Any]:
    """The report files of `out_dir` as cards (`order`: "cause", or "rule" for the test's twin only); the
    entities' events and states from `traces`, else from the summary's own files when they are at hand."""
    summary_path = out_dir / "summary.json"
    if not summary_path.is_file():
        raise ValueError(f"{summary_path} is missing: not a check report directory")
    summary = json.loads(summary_path.read_text(encoding="utf-8"))
    violations = _jsonl(out_dir / "violations.jsonl")
    cards = cause_first(violations) if order == "cause" else by_rule(violations)
    if traces is None:
        traces = [f for f in summary.get("files", []) if Path(f).exists()]
    drawn = cards[:MAX_CARDS]
    if traces and drawn:
        found = gather(drawn, traces)
    else:
        why = ["no trace file at hand: only the events the violations name, and no model state"] if drawn else []
        found = {"rows": {}, "t0": {}, "states": {}, "notes": why}
    if "imports" not in found:
        try:
            found["imports"] = import_starts(traces) if traces else None
        except (OSError, ValueError) as exc:  # a file check did not read: the page says so, never a verdict
            found["imports"], found["imports_error"] = None, str(exc)
    return {
        "summary": summary,
        "violations": violations,
        "cards": cards,
        "found": found,
        "quarantine": _jsonl(out_dir / "quarantine.jsonl"),
        "unknown": _jsonl(out_dir / "unknown.jsonl") if (out_dir / "unknown.jsonl").is_file() else [],
    }


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _sentence_counts(s: dict[str, Any]) -> str:
    read, checked, quarantined = s.get("rows_read"), s.get("rows_checked"), s.get("rows_quarantined")
    if s.get("counts_reconcile"):
        return f"Every one of the {read} rows read was either checked ({checked}) or quarantined ({quarantined})."
    return (
        f"The counts do not add up: {read} rows read, but {checked} checked and {quarantined} quarantined; "
        "the report may be missing rows."
    )


def _run_facts(s: dict[str, Any], custody: str = "", old: bool = False) -> str:
    run = s.get("run", {})
    rule_sets = s.get("rule_sets", {})
    sets = "".join(f"<li><b>{_e(k)}</b>: {_e(d)}</li>" for k, d in rule_sets.get("descriptions", {}).items())
    inputs = run.get("inputs") or [{"file": f, "bytes": None, "sha256": None} for f in s.get("files", [])]
    rows = "".join(
        f"<tr><td><code>{_e(i['file'])}</code></td><td>{_e(i['bytes'] if i['bytes'] is not None else '?')}</td>"
        f"<td class='hash'>{_e(i['sha256'] or 'not recorded')}</td></tr>"
        for i in inputs
    )
    return (
        "<h2 id='run'>The run</h2><div class='tbl'><table id='facts'>"
        f"<tr><th>tool</th><td>haconform check {_e(run.get('version', '(version not recorded)'))}</td></tr>"
        f"<tr><th>finished</th><td>{_e(run.get('finished_utc', '(time not recorded)'))}</td></tr>"
        f"<tr><th>engine</th><td>{_e(s.get('engine', '?'))}</td></tr>"
        f"<tr><th>monitors</th><td>{_e(', '.join(s.get('monitors', [])))}</td></tr></table></div>"
        f"<p>{_e(_sentence_counts(s))}</p>"
        f"<h3>Rule sets applied</h3><ul>{sets or '<li>not recorded</li>'}</ul>"
        + ("<h3>Input files</h3>" if old else f"<details id='inputs-box'><summary>{len(inputs)} input file(s) "
           "checked, with their size and SHA-256</summary>")
        + "<div class='tbl'><table id='inputs'><tr><th>file</th><th>bytes</th><th>SHA-256</th></tr>"
        f"{rows}</table></div>{'' if old else '</details>'}{custody}"
    )  # fmt: skip


RULE_STATES_TEXT = (
    "A rule held when it judged at least one instance and none was violated; it was not judged when events of its "
    "mechanism were in the input but no instance of it could be judged (the reason is given); it is not "
    "applicable when the input holds no event of its mechanism."
)
MAX_FIRST = 10  # unknown notes and not-judged rules named on the first screen of an UNKNOWN page


def _rules_table(rows: list[dict[str, Any]], first_card: dict[tuple[str, str], int], rank: dict) -> str:
    """The rules in their four states (TR-009), each with its own counts (judged, held, violated, instances it
    could not judge); the violated ones in the order of their first violation, cause first (`rank`)."""
    by = {state: [r for r in rows if r["state"] == state] for state in STATES}
    by["violated"].sort(key=lambda r: rank.get((r["requirement"], r["rule"]), len(rank)))
    out = [
        f"<h2 id='rules'>Rules checked</h2><p id='rule-states'><b>{_e(states_line(rows))}.</b> {RULE_STATES_TEXT}</p>"
    ]
    if by["violated"]:
        out.append(_rule_table("rules-violated", "rule violated", "first card", by["violated"], first_card))
    if by["not-judged"]:
        out.append(f"<h3>{len(by['not-judged'])} rules not judged</h3>")
        out.append(_rule_table("rules-not-judged", "rule not judged", "why", by["not-judged"], first_card))
    held = by["held"]
    out.append(
        f"<details id='rules-held'{'' if by['violated'] else ' open'}><summary>{len(held)} rules judged that held"
        f"</summary>{_rule_table('rules-table', 'rule', 'statement', held, first_card)}</details>"
    )
    if idle := by["not-applicable"]:
        mechs: dict[str, int] = {}
        for r in idle:
            mechs[r["mechanism"]] = mechs.get(r["mechanism"], 0) + 1
        listed = ", ".join(f"{m} ({n} rules)" for m, n in sorted(mechs.items()))
        out.append(
            f"<details id='rules-not-applicable'><summary>{len(idle)} rules not applicable, no events of their "
            f"mechanism in the input: {_e(listed)}</summary>"
            f"{_rule_table('rules-idle', 'rule', 'why', idle, first_card)}</details>"
        )
    return "".join(out)


def _rule_table(
    tid: str, head: str, last: str, rows: list[dict[str, Any]], first_card: dict[tuple[str, str], int]
) -> str:
    cells = "".join(
        f"<th>{h}</th>"
        for h in (head, "requirement", "mechanism", "kind", "judged", "held", "violated", "could not judge", last)
    )
    body = "".join(_rule_row(r, first_card, last) for r in rows)
    return f"<div class='tbl'><table id='{tid}'><tr>{cells}</tr>{body}</table></div>"


def _rule_row(r: dict[str, Any], first_card: dict[tuple[str, str], int], last: str) -> str:
    card = first_card.get((r["requirement"], r["rule"]))
    if last == "statement":
        said = _e(r.get("statement") or (c.statement if (c := cited(r["requirement"])) else ""))
    elif last == "why":
        said = _e(r.get("reason") or "")
    else:
        said = f"<a href='#v{card}'>#v{card}</a>" if card is not None else ""
    name = f"<a href='#v{card}'>{_e(r['rule'])}</a>" if card is not None else _e(r["rule"])
    return (
        f"<tr class='{_e(r['state'])}'><td>{name}</td><td>{_e(r['requirement'])}</td><td>{_e(r['mechanism'])}</td>"
        f"<td>{_e(r.get('kind') or '')}</td><td>{r['judged']}</td><td>{r['held']}</td><td>{r['violated']}</td>"
        f"<td>{r.get('not_judged', 0)}</td>"
        f"<td>{said}</td></tr>"
    )


def _lead(verdict: str, total: int, cards: int, rows: list[dict[str, Any]]) -> str:
    """The sentence beside the badge: never that rules held that were not judged."""
    if total:
        return (
            f"{total} violation(s) in {cards} entit{'y' if cards == 1 else 'ies'}, the earliest first: each card "
            "opens with an entity's first violation, the later ones follow from it."
        )
    n = by_state(rows)
    applied = n["held"] + n["not-judged"]
    if verdict == "unknown":
        return (
            f"No violation found, but not everything could be judged ({n['held']} rules held): what was not is below."
        )
    if n["not-judged"]:
        return f"No violation: {n['held']} of the {applied} rules that applied held; {n['not-judged']} were not judged."
    if not rows:
        return "No violation."
    return f"No violation: every rule that applied to this input ({applied}) was judged and held."


def _first_screen(report: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    """On an UNKNOWN page, right under the badge: why (the unknown notes) and the rules not judged."""
    if report["summary"].get("verdict") != "unknown":
        return ""
    notes, idle = report["unknown"], [r for r in rows if r["state"] == "not-judged"]
    out = ["<div class='why' id='not-judged-first'><b>Not judged:</b><ul>"]
    out += [f"<li><b>{_e(u.get('mechanism'))}</b>: {_e(u.get('note'))}</li>" for u in notes[:MAX_FIRST]]
    if len(notes) > MAX_FIRST:
        out.append(f"<li>... and {len(notes) - MAX_FIRST} more under <a href='#unknown'>could not be judged</a></li>")
    why: dict[str, list[dict[str, Any]]] = {}
    for r in idle:  # the rules not judged, grouped by their reason
        why.setdefault(r.get("reason") or "", []).append(r)
    for reason, group in list(why.items())[:MAX_FIRST]:
        named = ", ".join(f"<b>{_e(r['requirement'])} {_e(r['rule'])}</b>" for r in group)
        out.append(f"<li>{len(group)} rule(s) not judged, {_e(reason)}: {named}</li>")
    if len(why) > MAX_FIRST:
        left = sum(len(g) for g in list(why.values())[MAX_FIRST:])
        out.append(f"<li>... and {left} more rules in <a href='#rules'>the rules table</a></li>")
    return "".join(out) + "</ul></div>"


def _first_cause(cards: list[Card], found: dict[str, Any]) -> str:
    """Right under the badge: the earliest violation (the first card's head), its requirement and rule, where
    and when, and how many other entities break the same rule first (issue 31: on the first screen)."""
    if not cards:
        return ""
    c = cards[0]
    head = c.head[1]
    t0 = found["t0"].get(c.trace_id)
    if t0 is None:
        t0 = min((r["ts_ms"] for r in head.get("events", [])), default=0)
    group = alike(cards)[0]
    more = f" It is one of {len(group)} entities whose first violation breaks this rule." if len(group) > 1 else ""
    return (
        f"<div class='first-cause' id='first-cause'><b>First cause: [{_e(head['requirement'])} {_e(head['rule'])}]"
        f"</b> in <b>{_e(c.entity)}</b> <span class='muted small'>({_e(c.trace_id)})</span>{_e(at_text(head, t0))}: "
        f"<span class='explanation'>{_e(head['explanation'])}</span>{_e(more)} <a href='#c0'>Its card</a>."
        f"{quote(head['requirement'])}</div>"
    )


def render_html(report: dict[str, Any], drawn: int = DRAWN) -> str:
    """The page (module docstring). `drawn`: the causes whose card is in the page as HTML (`cards.DRAWN`);
    -1 builds the page as it was before issue 31 (every card inline, none grouped, no first cause box, the
    input files open), kept for the tests' twins only."""
    old = drawn < 0
    s, found = report["summary"], report["found"]
    verdict = s.get("verdict", "unknown")
    cards: list[Card] = report["cards"]
    first_card: dict[tuple[str, str], int] = {}
    rank: dict[tuple[str, str], int] = {}
    for c in cards:
        for i, v in c.all():
            first_card.setdefault((v["requirement"], v["rule"]), i)
            rank.setdefault((v["requirement"], v["rule"]), len(rank))
    total = len(report["violations"])
    rows = rule_rows(s)
    lead = _lead(verdict, total, len(cards), rows)
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>haconform check: {_e(verdict)}</title>",
        f"<meta name='viewport' content='width=device-width'><style>{CSS}</style></head><body>",
        f"<h1>haconform check</h1><p><span class='verdict {_e(verdict)}' id='verdict'>{_e(verdict.upper())}</span>"
        f" &nbsp;{_e(lead)}</p>",
        "" if old else _first_cause(cards, report["found"]),
        _first_screen(report, rows),
        _run_facts(s, "" if old else render_custody(found.get("imports"), found.get("imports_error")), old),
        _rules_table(rows, first_card, rank),
        f"<h2 id='violations'>Violations ({total} written, {len(cards)} entities"
        + ("" if old else f", {len(alike(cards))} causes")
        + ")</h2>",
    ]
    for note in report["found"].get("notes", []):
        parts.append(f"<p class='muted small'>{_e(note)}</p>")
    body, store = render_cards(cards, report["found"], drawn)
    parts += body
    parts.append(f"<h2>Quarantine ({len(report['quarantine'])})</h2>")
    if report["quarantine"]:
        parts.append("<div class='tbl'><table><tr><th>file</th><th>line</th><th>field</th><th>reason</th></tr>")
        parts += [
            f"<tr><td>{_e(q.get('file'))}</td><td>{_e(q.get('line'))}</td><td>{_e(q.get('field'))}</td>"
            f"<td>{_e(q.get('reason'))}</td></tr>"
            for q in report["quarantine"]
        ]
        parts.append("</table></div>")
    parts.append(f"<h2>Could not be judged ({len(report['unknown'])})</h2><ul id='unknown'>")
    parts += [f"<li><b>{_e(u.get('mechanism'))}</b>: {_e(u.get('note'))}</li>" for u in report["unknown"]]
    parts.append(
        f"</ul>{lazy_block(store)}<noscript>The timelines are drawn by the page's inline script.</noscript>"
        f"<script>{JS}</script>"
        "</body></html>"
    )
    return "\n".join(parts)
