"""The files haconform writes beside traces, told by their content so that `check` on a folder never reads them
as traces (issue 31, "Reading the output as input"; TR-005, TR-007).

What an import and a check write into a folder, and how each is told:

| file | written by | told by |
| --- | --- | --- |
| `<trace>.parquet` / `<trace>.jsonl` | `haconform import msgtrk` | the trace: read |
| `<trace>.quarantine.jsonl` | `haconform import msgtrk` | rows of file, line, column, field, reason; empty: its name |
| `<name>.json` (BCSS snapshot) | `haconform import copystatus --out` | not a trace file name (`.json`) |
| `summary.json` | `haconform check --out` | `"tool": "haconform check"` |
| `violations.jsonl` | `haconform check --out` | rows of rule, requirement, explanation; empty: its name |
| `quarantine.jsonl` | `haconform check --out` | rows of file, line, field, reason; empty: its name |
| `unknown.jsonl` | `haconform check --out` | rows of mechanism, note; empty: its name |
| `report.html`, JUnit `.xml`, `haconform-error.log` | `check --html/--junit`, internal errors | its name |

A row with an event's own fields (`_EVENT_FIELDS`) is never taken for one of these: a damaged trace is read and
its bad rows judged (TR-005). Each file not read is listed with the reason (`traces.io.discover`, TR-007).
"""

from __future__ import annotations

import json
import os
import re

# The JSON Lines files haconform writes beside traces, told by their first row's fields (issue 31): an import's
# quarantine (`<trace>.quarantine.jsonl`: file, line, column, field, reason), a check report's quarantine.jsonl
# (file, line, field, reason), violations.jsonl (rule, requirement, explanation, ...) and unknown.jsonl
# (mechanism, note). A trace row has an event's own fields (`_EVENT_FIELDS`); a row with none of them and the
# fields of one of these is one of ours, never read as events. Empty ones are told by their names.
_EVENT_FIELDS = frozenset({"event_id", "seq", "ts_ms", "kind", "node"})
_OUR_OUTPUTS = (
    ({"file", "line", "reason"}, {"file", "line", "column", "field", "reason"}, "a quarantine of unreadable lines"),
    ({"rule", "requirement", "explanation"}, None, "a check report's violations (violations.jsonl)"),
    ({"mechanism", "note"}, None, "a check report's unknown.jsonl"),
)
_OUR_EMPTY = {
    "quarantine.jsonl": "a check report's (empty) quarantine.jsonl",
    "violations.jsonl": "a check report's (empty) violations.jsonl",
    "unknown.jsonl": "a check report's (empty) unknown.jsonl",
}


def summary_reason(path: str) -> str | None:
    """Why a `.json` file is haconform's own summary (`"tool": "haconform ..."`), told by its content."""
    if not path.lower().endswith(".json"):
        return None
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return None
    found = re.search(rb'"tool"\s*:\s*"(haconform [a-z]+)"', head)
    return f"a summary {found.group(1).decode()} wrote, not a trace" if found else None


def output_of_ours(name: str, path: str, kind: str) -> str | None:
    """Why the file is one haconform wrote beside a trace (an import's quarantine, a check report's rows) and
    not a trace, told by its content; None when it may be a trace (then the reader judges every row)."""
    if kind != "jsonl":
        return None
    first = None
    try:
        with open(path, "rb") as handle:  # the first non-blank line only (a few blank lines at most are looked past)
            for _ in range(64):
                line = handle.readline(1 << 20)
                if not line or line.strip():
                    first = line if line.strip() else None
                    break
    except OSError:
        return None  # the reader names the file
    base = os.path.basename(name).lower()
    if first is None:
        if base.endswith(".quarantine.jsonl"):
            return "holds no rows and is named as haconform import's quarantine (<trace>.quarantine.jsonl), not a trace"
        return f"holds no rows and is named as {_OUR_EMPTY[base]}, not a trace" if base in _OUR_EMPTY else None
    try:
        row = json.loads(first.lstrip(b"\xef\xbb\xbf"))
    except ValueError:
        return None
    if not isinstance(row, dict) or set(row) & _EVENT_FIELDS:
        return None
    for needed, allowed, what in _OUR_OUTPUTS:
        if needed <= set(row) and (allowed is None or set(row) <= allowed):
            origin = " (written by haconform import or check)" if what.startswith("a quarantine") else ""
            return f"holds {what}{origin}, not trace events: its first row has the fields {', '.join(sorted(row))}"
    return None
