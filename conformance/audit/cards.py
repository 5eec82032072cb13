"""The report's cards at any size (issue 31): one card per cause, the rest rendered on demand.

A card is one violated entity (`report_data.cause_first`): its first violation, the requirement's statement and
the seed's quoted sentence (`seedtext`), its timeline (drawn by `page_assets.JS` from the card's JSON), the later
violations of the entity collapsed under it, and its events. Cards whose first violation breaks the same rule
(requirement and rule) are one cause (`report_data.alike`): the earliest is shown, the others are listed under
it, "and N more like it", collapsed. Only the first `DRAWN` causes' cards are in the page as HTML; every other
card is kept as a string in one inert JSON block (`#lazy-cards`, with `#lazy-anchors` mapping each violation's
anchor `v<i>` to its card) and put into the page by the script when it is asked for (its "show" button, or a
link to one of its violations). A card's JSON stores each distinct model state once (`states`, events refer to
them by index) and each distinct value of a state's key once (`parts`), so a state or a part of one repeated
over many events costs its bytes once.
"""

from __future__ import annotations

import html
import json
from typing import Any

from conformance.audit.report_data import MAX_CARDS, Card, alike, judged_event
from conformance.audit.seedtext import HOW_TEXT, cited

DRAWN = 10  # causes whose first card is in the page as HTML (and drawn on load); the rest on demand
FAULT_KINDS = frozenset(
    {"CRASH", "RESTART", "PARTITION", "HEAL", "NET_DROP", "HAREDIRECTFAIL", "FAIL", "RESUBMIT", "RESUBMITFAIL",
     "DEFER", "MOUNT_FAIL"}
)  # fmt: skip


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def _blob(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


BLOB_OPEN = "<script type='application/json'>"


def rel(ms: float) -> str:
    """A time relative to the trace's start, as the timeline's axis writes it."""
    s = abs(ms) / 1000
    sign = "-" if ms < 0 else "+"
    if s < 600:
        return f"{sign}{s:.3f} s"
    m = int(s // 60)
    return f"{sign}{m} min {s - 60 * m:.3f} s" if m < 60 else f"{sign}{m // 60} h {m % 60} min {s - 60 * m:.1f} s"


def quote(req: str) -> str:
    """The requirement's statement and, per source, the seed's subject, section and quoted sentence."""
    c = cited(req)
    if c is None:
        return f"<p class='muted'>{_e(req)} is not in the catalogue.</p>"
    parts = [f"<blockquote class='req'><b>{_e(req)}</b>: {_e(c.statement)}</blockquote>"]
    for q in c.quotes:
        said = f"\u201c{_e(q.sentence)}\u201d" if q.sentence else "(the catalogue records no quote of this source)"
        how = f" ({_e(HOW_TEXT[q.how])})" if q.how in HOW_TEXT else ""
        parts.append(
            f"<blockquote class='seed'>{said}<br><span class='small muted'>\u2014 {_e(q.subject)}, section "
            f"\u201c{_e(q.section)}\u201d{how}</span></blockquote>"
        )
    return "".join(parts)


def at_text(v: dict[str, Any], t0: int) -> str:
    e = judged_event(v)
    return f" at {rel(e['ts_ms'] - t0)} on {e['node']} (#{e['seq']} {e['kind']})" if e else ""


def events(c: Card, found: dict[str, Any]) -> tuple[list[dict[str, Any]], int, list[Any]]:
    """The card's events for its timeline (role: judged, involved, follows), the trace's first timestamp and
    the distinct model states the events refer to by index: `{"states": [{key: part index}], "parts": [value]}`,
    each distinct value of a state's key stored once (a deployment's configuration repeats in every state)."""
    head = c.head[1]
    judged = judged_event(head)
    roles: dict[str, str] = {}
    for _, v in c.follows:
        roles.update(dict.fromkeys(v.get("event_ids", []), "follows"))
    roles.update(dict.fromkeys(head.get("event_ids", []), "involved"))
    if judged is not None:
        roles[judged["event_id"]] = "judged"
    rows = found["rows"].get(c.key) or sorted(
        {r["event_id"]: r for _, v in c.all() for r in v.get("events", [])}.values(), key=lambda r: r["seq"]
    )
    t0 = found["t0"].get(c.trace_id, min((r["ts_ms"] for r in rows), default=0))
    states = found["states"].get(c.key, {})
    distinct: list[Any] = []
    index: dict[str, int] = {}
    parts: list[Any] = []
    part_index: dict[str, int] = {}

    def part(value: Any) -> int:
        key = json.dumps(value, sort_keys=True)
        if key not in part_index:
            part_index[key] = len(parts)
            parts.append(value)
        return part_index[key]

    out = []
    for r in rows:
        attrs = r.get("attrs", {})
        state = states.get(r["event_id"])
        k = None
        if state is not None:
            key = json.dumps(state, sort_keys=True)
            if key not in index:
                index[key] = len(distinct)
                distinct.append({name: part(value) for name, value in state.items()})
            k = index[key]
        out.append(
            {
                "id": r["event_id"],
                "seq": r["seq"],
                "ts": r["ts_ms"],
                "node": r["node"],
                "kind": r["kind"],
                "role": roles.get(r["event_id"], ""),
                "fault": r["kind"] in FAULT_KINDS,
                "where": f"{attrs['src_file']}:{attrs['src_line']}" if "src_file" in attrs else "",
                "attrs": ", ".join(f"{k}={attrs[k]}" for k in sorted(attrs) if k not in ("src_file", "src_line"))[:400],
                "state": k,
            }
        )
    return out, t0, {"states": distinct, "parts": parts}


def card(k: int, c: Card, found: dict[str, Any]) -> str:
    """Card `k` in full: heading, first violation, quotes, timeline box (with its JSON), follows, events."""
    if k >= MAX_CARDS:
        return card_plain(k, c)
    head_i, head = c.head
    evs, t0, states = events(c, found)
    judged = judged_event(head)
    no_state = "; ".join(n for n in found.get("notes", []) if c.trace_id in n) or "no state was recorded for it"
    blob = _blob({"events": evs, "t0": t0, **states, "no_state": no_state})
    scope = "the entity's events from the trace" if c.key in found.get("complete", ()) else "the events named"
    follows = "".join(_follow(i, v, t0) for i, v in c.follows)
    return (
        f"<section class='card' id='c{k}' data-trace='{_e(c.trace_id)}' data-entity='{_e(c.entity)}' "
        f"data-head-seq='{judged['seq'] if judged else ''}' data-head-ts='{judged['ts_ms'] if judged else ''}'>"
        f"<h3 id='v{head_i}'><span class='rank'>{k + 1}.</span>{_e(c.entity)} <span class='muted small'>"
        f"({_e(c.trace_id)})</span></h3>"
        f"<p><b>First violation: [{_e(head['requirement'])} {_e(head['rule'])}]</b>{_e(at_text(head, t0))}: "
        f"{_e(head['explanation'])}</p>{quote(head['requirement'])}"
        f"<div class='timeline-box' data-card='{k}'>{BLOB_OPEN}{blob}</script>"
        "<div class='tl-bar'><span class='legend'><span><i class='sw' style='background:#c62828'></i>judged</span>"
        "<span><i class='sw' style='background:#ef6c00'></i>also involved</span><span><i class='sw' "
        "style='background:#7b1fa2'></i>later violations</span><span>&#9632; fault</span></span>"
        "<button data-zoom='0.5' title='zoom out'>&minus;</button><button data-zoom='fit'>fit</button>"
        f"<button data-zoom='2' title='zoom in'>+</button><span class='muted'>{_e(scope)}; time from the trace's "
        "first event; hover an event for its time (UTC) and attributes, click it for the model's state</span>"
        "</div><div class='state'><div class='state-head'></div><pre></pre></div></div>"
        + (
            f"<details class='follows'><summary>{len(c.follows)} later violation(s) of {_e(c.entity)} follow "
            f"from it</summary><ol>{follows}</ol></details>"
            if c.follows
            else ""
        )
        + f"<details class='events'><summary>{len(evs)} events (the table is built from the timeline's data when "
        "opened)</summary></details></section>"
    )


def _follow(i: int, v: dict[str, Any], t0: int) -> str:
    e = judged_event(v)
    at = f" at {rel(e['ts_ms'] - t0)} (#{e['seq']} {e['kind']} on {e['node']})" if e else ""
    c = cited(v["requirement"])
    return (
        f"<li id='v{i}' data-ts='{e['ts_ms'] if e else ''}' data-seq='{e['seq'] if e else ''}' "
        f"title='{_e(c.statement if c else '')}'><b>[{_e(v['requirement'])} {_e(v['rule'])}]</b>"
        f"{_e(at)}: {_e(v['explanation'])}</li>"
    )


def card_plain(k: int, c: Card) -> str:
    """A card past `MAX_CARDS`: its violations listed, no timeline and no state (none was gathered)."""
    items = "".join(
        f"<li id='v{i}'>[{_e(v['requirement'])} {_e(v['rule'])}] {_e(v['explanation'])}</li>" for i, v in c.all()
    )
    return (
        f"<section class='card' id='c{k}'><h3>{k + 1}. {_e(c.entity)} ({_e(c.trace_id)})</h3><ul>{items}</ul></section>"
    )


def _line(k: int, c: Card, found: dict[str, Any]) -> str:
    """One card as a line of a list (entity, first violation, when) with the placeholder it is shown in."""
    head = c.head[1]
    t0 = found["t0"].get(c.trace_id)
    if t0 is None:
        t0 = min((r["ts_ms"] for _, v in c.all() for r in v.get("events", [])), default=0)
    at = at_text(head, t0)
    return (
        f"<li class='alike-card'><b>{_e(c.entity)}</b> <span class='muted small'>({_e(c.trace_id)})</span>"
        f"{_e(at)}: {_e(head['explanation'])}{' (and ' + str(len(c.follows)) + ' later)' if c.follows else ''}"
        f"<div class='lazy' id='c{k}' data-card='{k}'><button class='show' data-card='{k}'>show card {k + 1}"
        "</button></div></li>"
    )


def render_cards(cards: list[Card], found: dict[str, Any], drawn: int = DRAWN) -> tuple[list[str], dict[str, Any]]:
    """The violations section's HTML, cause by cause, and the lazy store (`{"cards": {k: html}, "anchors":
    {"v<i>": k}}`) for every card not in the page. `drawn` < 0: every card in the page, nothing grouped (the
    page as it was before issue 31; kept for the tests' twin)."""
    if drawn < 0:
        return [card(k, c, found) for k, c in enumerate(cards)], {"cards": {}, "anchors": {}}
    parts: list[str] = []
    store: dict[str, Any] = {"cards": {}, "anchors": {}}

    def later(k: int) -> None:
        page = card(k, cards[k], found)  # its timeline's JSON kept as data, not as a string inside a string
        start = page.find(BLOB_OPEN)
        if start < 0:
            store["cards"][str(k)] = [page, None]
        else:
            end = page.index("</script>", start)
            data = json.loads(page[start + len(BLOB_OPEN) : end].replace("<\\/", "</"))
            store["cards"][str(k)] = [page[: start + len(BLOB_OPEN)] + page[end:], data]
        for i, _ in cards[k].all():
            store["anchors"][f"v{i}"] = k

    for g, group in enumerate(alike(cards)):
        first, rest = group[0], group[1:]
        head = cards[first].head[1]
        cause = f"[{_e(head['requirement'])} {_e(head['rule'])}]"
        parts.append(f"<div class='cause' id='cause{g}' data-cards='{len(group)}'>")
        if g < drawn:
            parts.append(card(first, cards[first], found))
        else:
            later(first)
            parts.append(f"<h3 class='cause-head'>{g + 1}. {cause}</h3><ul class='cause-first'>")
            parts.append(_line(first, cards[first], found) + "</ul>")
        if rest:
            parts.append(
                f"<details class='alike'><summary>and {len(rest)} more like it: the same first violation {cause} "
                f"in other entities</summary><ol>"
            )
            for k in rest:
                later(k)
                parts.append(_line(k, cards[k], found))
            parts.append("</ol></details>")
        parts.append("</div>")
    return parts, store


def lazy_block(store: dict[str, Any]) -> str:
    """The inert JSON blocks of the cards rendered on demand (parsed by the script only when one is asked for)."""
    return (
        f"<script type='application/json' id='lazy-cards'>{_blob(store['cards'])}</script>"
        f"<script type='application/json' id='lazy-anchors'>{_blob(store['anchors'])}</script>"
    )
