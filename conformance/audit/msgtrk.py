"""Read Exchange message tracking logs (`MSGTRK*.LOG`) line by line, by each file's `#Fields` line.

Formats (FIELD-NOTES, "The real formats a user has"): a header block (`#Software`, `#Version`, `#Log-type`,
`#Date`, `#Fields`) then CSV rows. The column set differs by version (2010: 26 columns, no
`network-message-id`; 2013: 27; 2016/2019: 30, adding `transport-traffic-type, log-id, schema-version`), so
columns are always mapped by name from the most recent `#Fields` line, never by position. Quirks handled:
UTF-8 byte-order mark, CRLF, double-quoted fields with commas and doubled quotes, empty fields, `;`-separated
multi-valued fields whose items may be wrapped in single quotes (and then contain `;`, commas or locale-formatted
times), reverse time order and exact duplicate rows (left to the importer).

A line that cannot be read is quarantined with the file, the line, the 1-based character column and the field
(requirement TR-005): never dropped, never fatal. The CSV tokenizer is written out because `csv` does not say
at which column a line breaks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from spec.catalogue import require

require("TR-005", "TR-007", "TR-008")

LOG_GLOB = "MSGTRK*.LOG"
# Columns every layout has and the importer cannot do without.
REQUIRED_COLUMNS = ("date-time", "event-id", "internal-message-id", "server-hostname", "source-context")
# Multi-valued columns (`;`-separated); recipient-address and recipient-status stay aligned.
MULTI_COLUMNS = ("recipient-address", "recipient-status", "related-recipient-address", "reference", "custom-data")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?(Z|[+-]\d{2}:\d{2})?$")


@dataclass(frozen=True, slots=True)
class Quarantined:
    """One log line that could not be read: same shape as `haconform check`'s quarantine, plus the column."""

    file: str
    line: int
    field: str
    reason: str
    column: int = 0  # 1-based character column; 0 when the line as a whole is at fault

    def to_json(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "column": self.column, "field": self.field, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: field {self.field!r}: {self.reason}"


@dataclass(frozen=True, slots=True)
class LogRow:
    """One data row: its provenance, the layout of its file and its cells by column name."""

    file: str
    line: int
    layout: str
    cells: dict[str, str]
    ts_ms: int

    def get(self, column: str) -> str:
        return self.cells.get(column, "")


@dataclass
class ParseResult:
    rows: list[LogRow] = field(default_factory=list)
    quarantine: list[Quarantined] = field(default_factory=list)
    layouts: dict[str, str] = field(default_factory=dict)  # file -> layout name
    data_lines: int = 0  # non-header, non-blank lines: = rows + quarantined

    def reconciles(self) -> bool:
        return self.data_lines == len(self.rows) + len(self.quarantine)


class MalformedLine(ValueError):
    def __init__(self, column: int, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


def split_csv(line: str) -> list[tuple[str, int]]:
    """Split one CSV line into (value, 1-based start column); double quotes quote, `""` is a quote."""
    out: list[tuple[str, int]] = []
    i, n = 0, len(line)
    while True:
        start = i
        if i < n and line[i] == '"':
            buf: list[str] = []
            i += 1
            while True:
                j = line.find('"', i)
                if j < 0:
                    raise MalformedLine(start + 1, "quoted field is not closed")
                buf.append(line[i:j])
                if j + 1 < n and line[j + 1] == '"':
                    buf.append('"')
                    i = j + 2
                    continue
                i = j + 1
                break
            if i < n and line[i] != ",":
                raise MalformedLine(i + 1, "text after the closing quote of a field")
            out.append(("".join(buf), start + 1))
        else:
            j = line.find(",", i)
            j = n if j < 0 else j
            out.append((line[i:j], start + 1))
            i = j
        if i >= n:
            return out
        i += 1  # the comma
        if i == n:
            out.append(("", n + 1))
            return out


def split_multi(value: str) -> list[str]:
    """Split a `;`-separated cell; items wrapped in single quotes may contain `;` (FIELD-NOTES, quirks)."""
    if value == "":
        return []
    items: list[str] = []
    buf: list[str] = []
    quoted = False
    for ch in value:
        if ch == "'" and (quoted or not buf):
            quoted = not quoted
            buf.append(ch)
        elif ch == ";" and not quoted:
            items.append("".join(buf))
            buf = []
        else:
            buf.append(ch)
    items.append("".join(buf))
    return [i[1:-1] if len(i) >= 2 and i[0] == i[-1] == "'" else i for i in items]


def parse_time(text: str) -> int:
    """An ISO 8601 time (UTC when no offset is given) as integer milliseconds since the epoch."""
    if not _ISO.match(text):
        raise ValueError(f"{text!r} is not an ISO 8601 time (tracking logs record UTC ISO 8601)")
    t = text.replace("Z", "+00:00")
    frac = re.search(r"\.(\d+)", t)
    if frac and len(frac.group(1)) > 6:  # Exchange may print 7 digits; Python reads at most 6
        t = t.replace(frac.group(0), "." + frac.group(1)[:6])
    dt = datetime.fromisoformat(t)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return (dt - _EPOCH) // timedelta(milliseconds=1)


def layout_of(columns: list[str]) -> str:
    if "schema-version" in columns and "log-id" in columns:
        return "2016/2019"
    if "network-message-id" in columns:
        return "2013"
    if "custom-data" in columns:
        return "2010"
    return "2007"


def _data_row(text: str, file: str, line: int, columns: list[str], layout: str) -> LogRow:
    cells = split_csv(text)
    if len(cells) != len(columns):
        col = cells[len(columns)][1] if len(cells) > len(columns) else len(text) + 1
        raise MalformedLine(col, f"{len(cells)} fields where the #Fields line has {len(columns)}")
    values = dict(zip(columns, (v for v, _ in cells), strict=True))
    starts = dict(zip(columns, (c for _, c in cells), strict=True))
    if not values["event-id"].strip():
        raise _FieldError("event-id", starts["event-id"], "empty event ID")
    try:
        ts = parse_time(values["date-time"].strip())
    except ValueError as exc:
        raise _FieldError("date-time", starts["date-time"], str(exc)) from None
    rec, status = split_multi(values.get("recipient-address", "")), split_multi(values.get("recipient-status", ""))
    if status and rec and len(status) != len(rec):
        raise _FieldError(
            "recipient-status",
            starts["recipient-status"],
            f"{len(status)} statuses for {len(rec)} recipients: they must stay aligned",
        )
    return LogRow(file, line, layout, values, ts)


class _FieldError(ValueError):
    def __init__(self, name: str, column: int, reason: str) -> None:
        super().__init__(reason)
        self.name, self.column, self.reason = name, column, reason


def parse_file(path: Path, label: str, result: ParseResult) -> None:
    """Parse one log file into `result`; `label` is how the file is named in provenance."""
    raw = path.read_bytes()
    columns: list[str] | None = None
    layout = ""
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if number == 1 and chunk.startswith(b"\xef\xbb\xbf"):
            chunk = chunk[3:]
        chunk = chunk.rstrip(b"\r")
        if not chunk.strip():
            continue
        try:
            text = chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            result.data_lines += 1
            result.quarantine.append(Quarantined(label, number, "", f"not UTF-8 ({exc.reason})", exc.start + 1))
            continue
        if text.startswith("#"):
            if text.startswith("#Fields:"):
                columns = [c.strip() for c in text[len("#Fields:") :].split(",")]
                layout = layout_of(columns)
                result.layouts[label] = layout
                missing = [c for c in REQUIRED_COLUMNS if c not in columns]
                if missing:
                    raise LogFileError(f"{label}:{number}: the #Fields line lacks {', '.join(missing)}")
            continue
        result.data_lines += 1
        if columns is None:
            result.quarantine.append(Quarantined(label, number, "", "data before any #Fields line", 1))
            continue
        try:
            result.rows.append(_data_row(text, label, number, columns, layout))
        except MalformedLine as exc:
            result.quarantine.append(Quarantined(label, number, "", exc.reason, exc.column))
        except _FieldError as exc:
            result.quarantine.append(Quarantined(label, number, exc.name, exc.reason, exc.column))


class LogFileError(ValueError):
    """A whole input is unusable (no log files, a #Fields line without the needed columns)."""


def expand_logs(paths: list[str]) -> list[tuple[Path, str]]:
    """Every MSGTRK*.LOG under the paths (any prefix: MSGTRK, MSGTRKMS, MSGTRKMD, MSGTRKMA), with labels.

    A file named directly is taken whatever its name; directories are searched recursively, case-insensitively.
    Labels are the paths as given (joined for files found in a directory), so an auditor can open them.
    """
    found: list[tuple[Path, str]] = []
    for given in paths:
        p = Path(given)
        if p.is_file():
            found.append((p, given))
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and f.name.upper().startswith("MSGTRK") and f.name.upper().endswith(".LOG"):
                    found.append((f, str(Path(given) / f.relative_to(p))))
        else:
            raise LogFileError(f"{given}: no such file or directory")
    if not found:
        raise LogFileError(f"no message tracking logs ({LOG_GLOB}) under {', '.join(paths)}")
    return found


def parse_logs(paths: list[str]) -> ParseResult:
    result = ParseResult()
    for path, label in expand_logs(paths):
        parse_file(path, label, result)
    return result
