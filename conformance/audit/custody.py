"""The chain of custody of an imported log in the HTML report (issue 31): what was read from which raw file.

`haconform import msgtrk` records in its trace's `IMPORT_START` (`conformance.audit.importer.build_trace`) the raw
files it read as parallel lists, one entry per file: `raw_files`, `raw_bytes`, `raw_sha256`, `raw_lines`,
`raw_encodings`; and what it did not import: `files_skipped` (each "file: reason", `files_skipped_total` the
count), `duplicates_dropped` with `duplicate_lines`, `lines_quarantined` with `quarantine` (the lists capped,
the counts complete). The report shows them per import in a collapsed section; an import written before the
raw files were recorded says so ("not recorded") instead of showing the hashes of the imported trace as if
they were the logs'. Lists that do not line up are shown as they are, with a note, never realigned.
"""

from __future__ import annotations

import html
from collections.abc import Iterable
from typing import Any

from model.msgtrk.events import IMPORT_KIND
from traces.io import expand_paths, read_events

RAW = ("raw_files", "raw_bytes", "raw_sha256", "raw_lines", "raw_encodings")
NOT_RECORDED = "not recorded"


def _e(x: object) -> str:
    return html.escape(str(x), quote=True)


def import_starts(paths: Iterable[str]) -> list[dict[str, Any]]:
    """Every IMPORT_START row of the trace files (trace ID and attributes), in file order."""
    out = []
    for path in expand_paths(list(paths)):
        for e in read_events(path).events:
            if e.kind == IMPORT_KIND:
                out.append({"trace_id": e.trace_id, "attrs": dict(e.attrs)})
    return out


def _cell(values: Any, i: int) -> str:
    if not isinstance(values, list) or i >= len(values) or values[i] is None:
        return NOT_RECORDED
    return str(values[i])


def _one(start: dict[str, Any]) -> str:
    a = start["attrs"]
    out = [f"<h4>Import <code>{_e(start['trace_id'])}</code></h4>"]
    if isinstance(a.get("raw_files"), list):
        lengths = {k: len(a[k]) for k in RAW if isinstance(a.get(k), list)}
        if len(set(lengths.values())) > 1 or len(lengths) < len(RAW):
            said = ", ".join(f"{k} {n}" for k, n in lengths.items())
            out.append(f"<p class='why'>The raw-file lists do not line up ({_e(said)}): shown as recorded.</p>")
        rows = "".join(
            f"<tr><td><code>{_e(f)}</code></td>"
            + "".join(f"<td{' class=hash' if k == 'raw_sha256' else ''}>{_e(_cell(a.get(k), i))}</td>" for k in RAW[1:])
            + "</tr>"
            for i, f in enumerate(a["raw_files"])
        )
        out.append(
            f"<div class='tbl'><table class='raw-files'><tr><th>raw file read</th><th>bytes</th><th>SHA-256</th>"
            f"<th>lines</th><th>encoding</th></tr>{rows}</table></div>"
        )
    else:
        files = ", ".join(f"<code>{_e(f)}</code>" for f in a.get("files", [])) or "none named"
        out.append(
            "<p class='raw-not-recorded'>The raw files' sizes, SHA-256, line counts and encodings: <b>not recorded"
            f"</b> (this import was written before haconform recorded them). Paths imported: {files}.</p>"
        )
    skipped = a.get("files_skipped", [])
    total = a.get("files_skipped_total", len(skipped))
    out.append(f"<p>Files not read: <b class='n-skipped'>{_e(total)}</b>{':' if skipped else '.'}</p>")
    if skipped:
        more = f"<li class='muted'>... and {total - len(skipped)} more</li>" if total > len(skipped) else ""
        out.append("<ul class='skipped'>" + "".join(f"<li>{_e(x)}</li>" for x in skipped) + more + "</ul>")
    out.append(_counted("Exact duplicate rows dropped", a.get("duplicates_dropped"), a.get("duplicate_lines", []),
                        "dup"))  # fmt: skip
    out.append(_counted("Lines quarantined (not imported)", a.get("lines_quarantined"), a.get("quarantine", []),
                        "quarantined"))  # fmt: skip
    return "".join(out)


def _counted(title: str, n: Any, items: list[Any], cls: str) -> str:
    if n is None:
        return f"<p>{_e(title)}: {NOT_RECORDED}.</p>"
    listed = "".join(f"<li>{_e(x)}</li>" for x in items)
    more = f"<li class='muted'>... and {n - len(items)} more</li>" if isinstance(n, int) and n > len(items) else ""
    body = f"<ul class='{cls}'>{listed}{more}</ul>" if listed else ""
    return f"<p>{_e(title)}: <b class='n-{cls}'>{_e(n)}</b>{'.' if not body else ':'}</p>{body}"


def render_custody(starts: list[dict[str, Any]] | None, error: str | None = None) -> str:
    """The collapsed "chain of custody" section: one block per import; "" when no input is an imported log;
    a sentence when the trace files were not at hand (`starts` None) or could not be read again (`error`)."""
    if starts is None:
        why = f"the trace files could not be read again ({error})" if error else "the trace files are not at hand"
        return (
            f"<details id='custody'><summary>Chain of custody: {_e(why)}, so the imports' raw files cannot be "
            "shown</summary></details>"
        )
    if not starts:
        return ""
    n = sum(len(s["attrs"].get("raw_files", [])) for s in starts)
    said = f"{n} raw file(s) read" if n else "raw files not recorded"
    return (
        f"<details id='custody'><summary>Chain of custody: {len(starts)} import(s), {said}, the files not read, "
        f"duplicates dropped and lines quarantined</summary>{''.join(_one(s) for s in starts)}</details>"
    )
