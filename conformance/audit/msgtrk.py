"""Read Exchange message tracking logs (`MSGTRK*.LOG`) line by line, by each file's `#Fields` line.

Formats (FIELD-NOTES, "The real formats a user has"): a header block (`#Software`, `#Version`, `#Log-type`,
`#Date`, `#Fields`) then CSV rows. The column set differs by version (2007: 21 columns; 2010: 26, adding
`directionality` .. `custom-data`; 2013: 27, adding `network-message-id`; 2016/2019: 30, adding
`transport-traffic-type, log-id, schema-version`), so columns are mapped by name from the most recent `#Fields`
line, never by position. Rows exported by log shippers and SIEMs come without the header: their layout is the
one given (`--layout`) or the one whose column count the file's first row has (a 30-column row's
`schema-version` cell must then read like a build number), and the output says which. Quirks handled:
UTF-8 byte-order mark, CRLF, double-quoted fields with commas and doubled quotes, empty fields, `;`-separated
multi-valued fields whose items may be wrapped in single quotes (and then contain `;`, commas or locale-formatted
times), reverse time order and exact duplicate rows (left to the importer).

A line that cannot be read is quarantined with the file, the line, the 1-based character column and the field
(requirement TR-005): never dropped, never fatal. The CSV tokenizer is written out because `csv` does not say
at which column a line breaks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from conformance.audit.sniff import Inputs, discover
from spec.catalogue import require
from traces.textfile import utf8_bytes

require("TR-005", "TR-007", "TR-008")

# Columns every layout has and the importer cannot do without.
REQUIRED_COLUMNS = ("date-time", "event-id", "internal-message-id", "server-hostname", "source-context")
# Multi-valued columns (`;`-separated); recipient-address and recipient-status stay aligned.
MULTI_COLUMNS = ("recipient-address", "recipient-status", "related-recipient-address", "reference", "custom-data")
_FIELDS_2013 = [
    "date-time",
    "client-ip",
    "client-hostname",
    "server-ip",
    "server-hostname",
    "source-context",
    "connector-id",
    "source",
    "event-id",
    "internal-message-id",
    "message-id",
    "network-message-id",
    "recipient-address",
    "recipient-status",
    "total-bytes",
    "recipient-count",
    "related-recipient-address",
    "reference",
    "message-subject",
    "sender-address",
    "return-path",
    "message-info",
    "directionality",
    "tenant-id",
    "original-client-ip",
    "original-server-ip",
    "custom-data",
]
_FIELDS_2010 = [c for c in _FIELDS_2013 if c != "network-message-id"]
# The documented layouts (FIELD-NOTES, "What real message tracking logs show"), by name and by column count.
LAYOUTS: dict[str, list[str]] = {
    "2007": _FIELDS_2010[:21],
    "2010": _FIELDS_2010,
    "2013": _FIELDS_2013,
    "2016/2019": [*_FIELDS_2013, "transport-traffic-type", "log-id", "schema-version"],
}
LAYOUT_NAMES = {"2007": "2007", "2010": "2010", "2013": "2013", "2016": "2016/2019", "2019": "2016/2019"}
BY_COUNT = {len(cols): name for name, cols in LAYOUTS.items()}
PROTOCOL_LAYOUTS = ("receive", "send")  # `--layout` for SMTP protocol-log rows without #Log-type (issue 31)
_SCHEMA_VERSION = re.compile(r"^\d{1,2}\.\d{1,2}\.\d{1,4}\.\d{1,4}$")
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
    layout_origin: dict[str, str] = field(default_factory=dict)  # file -> how its layout was known
    data_lines: int = 0  # non-header, non-blank lines: = rows + quarantined
    inputs: Inputs = field(default_factory=Inputs)  # the files read and the files not read, with reasons

    def reconciles(self) -> bool:
        return self.data_lines == len(self.rows) + len(self.quarantine)


class MalformedLine(ValueError):
    def __init__(self, column: int, reason: str) -> None:
        super().__init__(reason)
        self.column = column
        self.reason = reason


def split_csv(line: str) -> list[tuple[str, int]]:
    """Split one CSV line into (value, 1-based start column); double quotes quote, `""` is a quote."""
    if '"' not in line:  # the common case: no quoting at all
        out, col = [], 1
        for part in line.split(","):
            out.append((part, col))
            col += len(part) + 1
        return out
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


def _data_row(text: str, file: str, line: int, columns: list[str], layout: str, origin: str) -> LogRow:
    cells = split_csv(text)
    if len(cells) != len(columns):
        col = cells[len(columns)][1] if len(cells) > len(columns) else len(text) + 1
        theirs = f" (the {BY_COUNT[len(cells)]} layout)" if len(cells) in BY_COUNT else ""
        raise MalformedLine(col, f"{len(cells)} fields{theirs} where {origin} has {len(columns)} ({layout})")
    values = dict(zip(columns, (v for v, _ in cells), strict=True))
    starts = dict(zip(columns, (c for _, c in cells), strict=True))
    version = values.get("schema-version", "").strip()
    if not origin.startswith("the #Fields") and version and not _SCHEMA_VERSION.match(version):
        raise _FieldError(
            "schema-version",
            starts["schema-version"],
            f"{version[:40]!r} is not a build number: the row does not fit the {layout} layout",
        )
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


def log_lines(raw: bytes) -> Iterator[tuple[int, str | UnicodeDecodeError]]:
    """The non-blank lines of an Exchange W3C-style log (message tracking, SMTP protocol logs), numbered from 1:
    a byte-order mark on the first line and CR line ends dropped; a line that is not UTF-8 comes as the error,
    for the caller to quarantine with its column."""
    for number, chunk in enumerate(raw.split(b"\n"), start=1):
        if number == 1 and chunk.startswith(b"\xef\xbb\xbf"):
            chunk = chunk[3:]
        chunk = chunk.rstrip(b"\r")
        if not chunk.strip():
            continue
        try:
            yield number, chunk.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield number, exc


def parse_file(path: Path, label: str, result: ParseResult, layout_given: str | None = None) -> None:
    """Parse one log file into `result`; `label` is how the file is named in provenance.

    `layout_given` (`--layout`) is the layout of rows that come without a `#Fields` line; a file whose header
    names another layout is unusable (both are named)."""
    raw = utf8_bytes(path, label)  # by its byte-order mark: UTF-8, UTF-16 LE/BE (traces.textfile)
    columns: list[str] | None = None
    layout = origin = ""
    for number, text in log_lines(raw):
        if isinstance(text, UnicodeDecodeError):
            result.data_lines += 1
            result.quarantine.append(Quarantined(label, number, "", f"not UTF-8 ({text.reason})", text.start + 1))
            continue
        if text.startswith("#"):
            if text.startswith("#Fields:"):
                columns = [c.strip() for c in text[len("#Fields:") :].split(",")]
                layout, origin = layout_of(columns), f"the #Fields line (line {number})"
                if layout_given and LAYOUTS.get(layout) == columns and layout != layout_given:
                    raise LogFileError(
                        f"{label}:{number}: the #Fields line is the {layout} layout ({len(columns)} columns) "
                        f"but --layout {layout_given} was given"
                    )
                result.layouts[label], result.layout_origin[label] = layout, f"#Fields line {number}"
                missing = [c for c in REQUIRED_COLUMNS if c not in columns]
                if missing:
                    raise LogFileError(f"{label}:{number}: the #Fields line lacks {', '.join(missing)}")
            continue
        result.data_lines += 1
        if columns is None:
            try:
                columns, layout, origin, said = _headerless(text, layout_given)
            except MalformedLine as exc:
                result.quarantine.append(Quarantined(label, number, "", exc.reason, exc.column))
                continue
            result.layouts[label], result.layout_origin[label] = layout, said
        try:
            result.rows.append(_data_row(text, label, number, columns, layout, origin))
        except MalformedLine as exc:
            result.quarantine.append(Quarantined(label, number, "", exc.reason, exc.column))
        except _FieldError as exc:
            result.quarantine.append(Quarantined(label, number, exc.name, exc.reason, exc.column))


def _headerless(text: str, layout_given: str | None) -> tuple[list[str], str, str, str]:
    """The layout of rows without a `#Fields` line: the one given, or the one with this row's column count.
    Returns (columns, layout, how errors name it, how the output names it)."""
    if layout_given:
        return LAYOUTS[layout_given], layout_given, f"--layout {layout_given}", f"no header: --layout {layout_given}"
    count = len(split_csv(text))
    if count == 9:
        raise MalformedLine(
            1,
            "no #Fields line and 9 fields: header-less SMTP protocol-log rows whose content does not tell Receive "
            "from Send (no command or reply line): give --layout receive or --layout send",
        )
    if count not in BY_COUNT:
        known = ", ".join(f"{name}: {len(cols)}" for name, cols in LAYOUTS.items())
        raise MalformedLine(
            1, f"no #Fields line and {count} fields, a count no layout has ({known}; protocol logs: 9): give --layout"
        )
    name = BY_COUNT[count]
    return LAYOUTS[name], name, "the layout of the file's first row", f"no header: detected from {count} columns"


class LogFileError(ValueError):
    """A whole input is unusable (no log files, a #Fields line without the needed columns)."""


def parse_logs(paths: list[str], layout: str | Sequence[str] | None = None, *, protocol: bool = True) -> ParseResult:
    """Every message tracking log under `paths` (told by content, `sniff.discover`), parsed; the files not
    read are in `result.inputs.skipped` with their reasons, the SMTP protocol logs in `result.inputs.protocol`.
    `layout` (`--layout`, repeatable): a tracking layout for header-less tracking rows, and/or `receive`/`send`
    for protocol-log rows without #Log-type whose content does not tell (PROTOCOL_LAYOUTS); one of each at most."""
    given = [layout] if isinstance(layout, str) else list(layout or [])
    protos = [g for g in given if g in PROTOCOL_LAYOUTS]
    tracks = [g for g in given if g not in PROTOCOL_LAYOUTS]
    if len(set(protos)) > 1 or len(set(tracks)) > 1:
        raise LogFileError(f"--layout given as {', '.join(given)}: at most one tracking layout and one of receive/send")
    proto = protos[0] if protos else None
    layout = tracks[0] if tracks else None
    try:
        inputs = discover(paths, protocol=protocol, protocol_layout=proto)
    except FileNotFoundError as exc:
        raise LogFileError(str(exc)) from None
    if not inputs.tracking:
        skipped = "; ".join(inputs.skipped_lines()[:3])
        raise LogFileError(f"no message tracking logs under {', '.join(paths)}" + (f" ({skipped})" if skipped else ""))
    result = ParseResult(inputs=inputs)
    for path, label in inputs.tracking:
        parse_file(path, label, result, LAYOUT_NAMES.get(layout, layout) if layout else None)
    return result
