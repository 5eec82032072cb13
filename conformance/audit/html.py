"""One self-contained HTML page from a check report directory (`haconform report`, `check --html`).

Reads what both engines write (summary.json, violations.jsonl with the events involved, quarantine.jsonl,
unknown.jsonl) and, when the trace files are at hand, the other events of each violated entity. No network:
the CSS, the script and the data are inline; the script draws each violation's timeline as SVG (one lane per
server or node, events in recording order, the violation's own events and faults marked, each event's recorded
attributes, including an imported row's log line, on hover). Requirement IDs link to their seed section from the
catalogue (`spec/requirements/*.toml`).
"""

from __future__ import annotations

import html
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from spec.catalogue import catalogue
from traces.io import expand_paths, read_events

FAULT_KINDS = frozenset(
    {
        "CRASH",
        "RESTART",
        "PARTITION",
        "HEAL",
        "NET_DROP",
        "HAREDIRECTFAIL",
        "FAIL",
        "RESUBMIT",
        "RESUBMITFAIL",
        "DEFER",
        "MOUNT_FAIL",
    }
)
MAX_TIMELINES = 200
MAX_ENTITY_EVENTS = 60


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


def load_report(out_dir: Path, traces: list[str] | None = None) -> dict[str, Any]:
    """The report files of `out_dir`; with `traces`, the events of every violated entity are added."""
    summary_path = out_dir / "summary.json"
    if not summary_path.is_file():
        raise ValueError(f"{summary_path} is missing: not a check report directory")
    report = {
        "summary": json.loads(summary_path.read_text(encoding="utf-8")),
        "violations": _jsonl(out_dir / "violations.jsonl"),
        "quarantine": _jsonl(out_dir / "quarantine.jsonl"),
        "unknown": _jsonl(out_dir / "unknown.jsonl") if (out_dir / "unknown.jsonl").is_file() else [],
        "entity_events": {},
    }
    if traces:
        report["entity_events"] = _entity_events(report["violations"][:MAX_TIMELINES], traces)
    return report


def _entity_events(violations: list[dict[str, Any]], traces: list[str]) -> dict[str, list[dict[str, Any]]]:

    wanted = {(v["trace_id"], v["entity"]) for v in violations if v.get("entity")}
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for path in expand_paths(traces):
        for e in read_events(path).events:
            if (e.trace_id, e.entity) in wanted:
                found[f"{e.trace_id}\x1f{e.entity}"].append(e.to_row())
    return {k: sorted(v, key=lambda r: r["seq"])[:MAX_ENTITY_EVENTS] for k, v in found.items()}


def _sources(requirement: str) -> str:
    try:
        cat = catalogue()
        req = cat.requirements.get(requirement) or cat.interpretations.get(requirement)
    except Exception:  # the page is still useful without the catalogue
        return ""
    if req is None:
        return ""
    return "; ".join(f"{s.seed}, \u201c{s.section}\u201d" for s in req.sources)


def _timeline_data(v: dict[str, Any], entity_events: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    involved = set(v.get("event_ids", []))
    rows = {r["event_id"]: r for r in v.get("events", [])}
    for r in entity_events.get(f"{v['trace_id']}\x1f{v['entity']}", []):
        rows.setdefault(r["event_id"], r)
    events = sorted(rows.values(), key=lambda r: (r["seq"], r["event_id"]))
    out = []
    for r in events:
        attrs = r.get("attrs", {})
        where = f"{attrs['src_file']}:{attrs['src_line']}" if "src_file" in attrs else ""
        state = ", ".join(f"{k}={attrs[k]}" for k in sorted(attrs) if k not in ("src_file", "src_line"))[:300]
        out.append(
            {
                "id": r["event_id"],
                "seq": r["seq"],
                "ts": r["ts_ms"],
                "node": r["node"],
                "kind": r["kind"],
                "hit": r["event_id"] in involved,
                "fault": r["kind"] in FAULT_KINDS,
                "where": where,
                "state": state,
            }
        )
    return {"events": out, "complete": f"{v['trace_id']}\x1f{v['entity']}" in entity_events}


_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{margin-bottom:.2em}.verdict{display:inline-block;padding:.3em .8em;border-radius:4px;color:#fff;font-weight:bold}
.valid{background:#2e7d32}.invalid{background:#c62828}.unknown{background:#ef6c00}
table{border-collapse:collapse;margin:.6em 0;width:100%}td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;
vertical-align:top}th{background:#f3f3f3}.viol{border:1px solid #ddd;border-radius:6px;padding:.6em 1em;margin:1em 0}
code{background:#f6f6f6;padding:0 .2em}.muted{color:#666}svg.timeline{border:1px solid #eee;background:#fcfcfc}
"""

_JS = """
(function(){
  var NS='http://www.w3.org/2000/svg';
  function el(n,a,t){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);
    if(t!==undefined)e.textContent=t;return e;}
  document.querySelectorAll('div.timeline-box').forEach(function(box){
    var data=JSON.parse(box.querySelector('script[type="application/json"]').textContent);
    var evs=data.events, lanes=[];
    evs.forEach(function(e){if(lanes.indexOf(e.node)<0)lanes.push(e.node);});
    var W=150+Math.max(evs.length,1)*90, H=30+lanes.length*56;
    var svg=el('svg',{'class':'timeline',width:W,height:H,viewBox:'0 0 '+W+' '+H,role:'img',
      'aria-label':'timeline of '+evs.length+' events on '+lanes.length+' lanes'});
    lanes.forEach(function(n,i){var y=30+i*56;
      svg.appendChild(el('line',{x1:140,y1:y,x2:W-10,y2:y,stroke:'#bbb','class':'lane'}));
      svg.appendChild(el('text',{x:6,y:y+4,'font-size':12,'class':'lane-label'},n));});
    var prev=null;
    evs.forEach(function(e,i){var x=170+i*90,y=30+lanes.indexOf(e.node)*56;
      if(prev)svg.appendChild(el('line',{x1:prev[0],y1:prev[1],x2:x,y2:y,stroke:'#ddd'}));prev=[x,y];
      var g=el('g',{'class':'event'+(e.hit?' hit':'')+(e.fault?' fault':'')});
      if(e.fault){g.appendChild(el('rect',{x:x-7,y:y-7,width:14,height:14,fill:e.hit?'#c62828':'#ef6c00'}));}
      else{g.appendChild(el('circle',{cx:x,cy:y,r:e.hit?8:5,fill:e.hit?'#c62828':'#1565c0'}));}
      g.appendChild(el('text',{x:x-30,y:y+22,'font-size':10},e.kind));
      g.appendChild(el('title',{},'#'+e.seq+' '+e.kind+' on '+e.node+' at '+e.ts+' ms'+
        (e.where?' ('+e.where+')':'')+'\\n'+e.state));
      svg.appendChild(g);});
    box.insertBefore(svg, box.firstChild);
  });
})();
"""


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def render_html(report: dict[str, Any]) -> str:
    s = report["summary"]
    verdict = s.get("verdict", "unknown")
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>haconform check: {_e(verdict)}</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>haconform check</h1><p><span class='verdict {_e(verdict)}' id='verdict'>{_e(verdict.upper())}</span>"
        f" &nbsp;engine {_e(s.get('engine', '?'))}</p>",
        "<table><tr><th>rows read</th><th>checked</th><th>quarantined</th><th>violations</th><th>unknown</th>"
        "<th>counts reconcile</th></tr>",
        f"<tr><td>{_e(s.get('rows_read'))}</td><td>{_e(s.get('rows_checked'))}</td>"
        f"<td>{_e(s.get('rows_quarantined'))}</td><td>{_e(s.get('violations_total'))}</td>"
        f"<td>{_e(s.get('unknown_total'))}</td><td>{_e(s.get('counts_reconcile'))}</td></tr></table>",
        f"<p class='muted'>files: {_e(', '.join(s.get('files', [])))}<br>monitors: "
        f"{_e(', '.join(s.get('monitors', [])))}</p>",
    ]
    rule_sets = s.get("rule_sets")
    if rule_sets:
        items = "".join(f"<li><b>{_e(k)}</b>: {_e(d)}</li>" for k, d in rule_sets.get("descriptions", {}).items())
        parts.append(f"<h2>Rule sets applied</h2><ul>{items}</ul>")
    parts.append(
        "<h2>Violations by rule</h2><table id='rules'><tr><th>rule</th><th>requirement</th><th>mechanism</th>"
        "<th>count</th><th>seed section</th></tr>"
    )
    for r in s.get("violations_by_rule", []):
        parts.append(
            f"<tr><td>{_e(r['rule'])}</td><td>{_e(r['requirement'])}</td><td>{_e(r['mechanism'])}</td>"
            f"<td>{_e(r['count'])}</td><td>{_e(_sources(r['requirement']))}</td></tr>"
        )
    parts.append("</table>" + ("" if s.get("violations_by_rule") else "<p>None.</p>"))
    parts.append(f"<h2>Violations ({len(report['violations'])} written)</h2>")
    for i, v in enumerate(report["violations"]):
        parts.append(_violation(i, v, report["entity_events"]))
    parts.append(f"<h2>Quarantine ({len(report['quarantine'])})</h2>")
    if report["quarantine"]:
        parts.append("<table><tr><th>file</th><th>line</th><th>field</th><th>reason</th></tr>")
        parts += [
            f"<tr><td>{_e(q.get('file'))}</td><td>{_e(q.get('line'))}</td><td>{_e(q.get('field'))}</td>"
            f"<td>{_e(q.get('reason'))}</td></tr>"
            for q in report["quarantine"]
        ]
        parts.append("</table>")
    parts.append(f"<h2>Could not be judged ({len(report['unknown'])})</h2><ul id='unknown'>")
    parts += [f"<li><b>{_e(u.get('mechanism'))}</b>: {_e(u.get('note'))}</li>" for u in report["unknown"]]
    parts.append(
        f"</ul><noscript>The timelines are drawn by the page's inline script.</noscript><script>{_JS}</script>"
        "</body></html>"
    )
    return "\n".join(parts)


def _violation(i: int, v: dict[str, Any], entity_events: dict[str, list[dict[str, Any]]]) -> str:
    data = _timeline_data(v, entity_events) if i < MAX_TIMELINES else {"events": [], "complete": False}
    blob = json.dumps(data).replace("</", "<\\/")
    scope = "the entity's events from the trace" if data["complete"] else "the events the violation names"
    rows = "".join(
        f"<tr><td>{e['seq']}</td><td>{_e(e['node'])}</td><td>{_e(e['kind'])}</td><td>{e['ts']}</td>"
        f"<td>{_e(e['where'])}</td><td>{'&#9888;' if e['hit'] else ''}</td></tr>"
        for e in data["events"]
    )
    return (
        f"<div class='viol' id='v{i}'><b>[{_e(v['requirement'])} {_e(v['rule'])}]</b> "
        f"{_e(v['trace_id'])} / {_e(v['entity'])}<p>{_e(v['explanation'])}</p>"
        f"<p class='muted'>seed: {_e(_sources(v['requirement']))}</p>"
        f"<div class='timeline-box' data-violation='{i}'><script type='application/json'>{blob}</script>"
        f"<p class='muted'>Timeline: {scope}; red = involved, squares = faults; hover for recorded attributes "
        "(the monitor's internal state is not part of the report).</p></div>"
        f"<details><summary>events</summary><table><tr><th>seq</th><th>node</th><th>kind</th><th>ts (ms)</th>"
        f"<th>log line</th><th>involved</th></tr>{rows}</table></details></div>"
    )
