"""Which of the given files are logs the importer reads, told by their content, never by their names.

FIELD-NOTES, "The real formats a user has": message tracking logs carry `#Log-type: Message Tracking Log`
and a `#Fields` line with `event-id` and `internal-message-id`; SMTP protocol logs carry
`#Log-type: SMTP Receive Protocol Log` or `SMTP Send Protocol Log` and the nine-column `#Fields` line
(`date-time, connector-id, session-id, sequence-number, local-endpoint, remote-endpoint, event, data, context`).
Rows exported by log shippers and SIEMs come without any header: a first line that starts with an ISO 8601
time and has the column count of a tracking layout (21, 26, 27 or 30) is read as header-less tracking rows; one
with nine columns as header-less SMTP protocol-log rows. A protocol log without `#Log-type` (header-less, or a
`#Fields` line alone) is told Receive or Send by its content (issue 31): a `<` line (received by the logging
server) that is an SMTP command, or a `>` line that is a reply code, is a Receive log; the other way round a Send
log. Where no line tells, `--layout receive|send` does; otherwise the file is listed as not read, with the reason.
Text is decoded by its byte-order mark (UTF-8, UTF-16 LE/BE: `traces.textfile`); UTF-16 without one and binary
data are named as such, never read: listed with that reason in a directory, an unusable input (exit 2, the file
named) when named on the command line.

A file named on the command line is read whatever its name (one that looks like no log is read as message
tracking, so each of its lines is quarantined with the reason: nothing silent). In a directory every file is
looked at; each one not read is listed with the reason, in the output and in `IMPORT_START` (TR-007).
"""

from __future__ import annotations

import csv
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from spec.catalogue import require
from traces.io import trace_kind
from traces.textfile import head_text

require("TR-007")

TRACKING_COUNTS = (21, 26, 27, 30)
PROTOCOL_COUNT = 9
PROTOCOL_FIELDS = "date-time,connector-id,session-id,sequence-number,local-endpoint,remote-endpoint,event,data,context"
_REPLY = re.compile(r"^\d{3}([ -]|$)")
_COMMANDS = frozenset(("EHLO", "HELO", "MAIL", "RCPT", "DATA", "BDAT", "QUIT", "RSET", "NOOP", "STARTTLS", "AUTH"))
_HEAD = 65536
_ISO_START = re.compile(r"^\ufeff?\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")


@dataclass
class Inputs:
    """What discovery found: tracking logs, protocol logs (with their direction) and the files not read."""

    tracking: list[tuple[Path, str]] = field(default_factory=list)
    protocol: list[tuple[Path, str, str]] = field(default_factory=list)  # path, label, "receive" | "send"
    skipped: list[tuple[str, str]] = field(default_factory=list)  # label, reason
    protocol_origin: dict[str, str] = field(default_factory=dict)  # label -> how a protocol log's direction was told

    def skipped_lines(self) -> list[str]:
        return [f"{label}: {reason}" for label, reason in self.skipped]


def sniff(path: Path, protocol_layout: str | None = None) -> tuple[str | None, str]:
    """(kind, why): kind is "msgtrk", "receive", "send" or None (then `why` says what the file is).
    `protocol_layout` ("receive" | "send", `--layout`): the direction of protocol-log rows without #Log-type."""
    text, encoding = head_text(path, _HEAD)
    if text is None:
        return None, encoding  # why the bytes are not text (UTF-16 without a byte-order mark, binary)
    if not text.strip():
        return None, "empty file"
    text = text.lstrip("\ufeff")
    lines = [x.rstrip("\r") for x in text.split("\n") if x.strip()]
    log_type = next((x.split(":", 1)[1].strip() for x in lines if x.lower().startswith("#log-type:")), None)
    fields = next((x.split(":", 1)[1] for x in lines if x.startswith("#Fields:")), None)
    columns = {c.strip() for c in fields.split(",")} if fields is not None else set()
    if log_type is not None:
        kind = {
            "message tracking log": "msgtrk",
            "smtp receive protocol log": "receive",
            "smtp send protocol log": "send",
        }.get(log_type.lower())
        return (kind, log_type) if kind else (None, f"a {log_type!r} log (#Log-type), not one this import reads")
    if fields is not None:
        if {"event-id", "internal-message-id"} <= columns:
            return "msgtrk", "#Fields line of message tracking"
        if {"session-id", "sequence-number", "event"} <= columns:
            order = [c.strip() for c in fields.split(",")]
            return _direction(text, order, protocol_layout, "SMTP protocol log without #Log-type")
        return None, f"#Fields line of another log ({fields.strip()[:60]!r})"
    first = next((x for x in lines if not x.startswith("#")), "")
    count = len(next(csv.reader([first]), []))
    if _ISO_START.match(first) and count in TRACKING_COUNTS:
        return "msgtrk", f"header-less rows with {count} columns"
    if _ISO_START.match(first) and count == PROTOCOL_COUNT:
        return _direction(text, PROTOCOL_FIELDS.split(","), protocol_layout, "header-less SMTP protocol log rows")
    return None, f"not a message tracking or SMTP protocol log (first line {first[:60]!r})"


def _direction(text: str, order: list[str], given: str | None, what: str) -> tuple[str | None, str]:
    """Receive or Send told by content: the first `<` or `>` line that is a command or a reply code decides
    (`text`: the file's head, its lines numbered from 1 as the file's)."""
    if "event" not in order or "data" not in order:
        return None, f"{what}: no event and data columns"
    ev, data = order.index("event"), order.index("data")
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        try:
            cells = next(csv.reader([line.rstrip("\r")]))
        except csv.Error:
            continue
        if len(cells) != len(order) or cells[ev] not in ("<", ">"):
            continue
        said = cells[data].strip()
        word = said.split(" ", 1)[0].upper()
        reply = bool(_REPLY.match(said))
        if not reply and word not in _COMMANDS:
            continue
        kind = "receive" if (cells[ev] == "<") != reply else "send"
        how = f"{what}, told {kind} by content (line {number}: {cells[ev]} {said[:30]!r})"
        if given and given != kind:
            return None, f"{how}, but --layout {given} was given: not read"
        return kind, how
    if given:
        return given, f"{what}, {given} by --layout {given} (no command or reply line tells)"
    return None, f"{what}: Receive or Send cannot be told (no command or reply line): give --layout receive|send"


def discover(paths: list[str], *, protocol: bool = True, protocol_layout: str | None = None) -> Inputs:
    """Every file under `paths` sorted into read (tracking, protocol) and skipped-with-reason.

    Labels are the paths as given (joined for files found in a directory), so an auditor can open them.
    `protocol=False` lists SMTP protocol logs as skipped instead of reading them; `protocol_layout` is the
    direction of protocol-log rows without #Log-type that their content does not tell (`--layout receive|send`)."""
    found = Inputs()
    for given in paths:
        p = Path(given)
        if p.is_file():
            _place(found, p, given, explicit=True, proto=(protocol, protocol_layout))
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file():
                    label = str(Path(given) / f.relative_to(p))
                    _place(found, f, label, explicit=False, proto=(protocol, protocol_layout))
        else:
            raise FileNotFoundError(f"{given}: no such file or directory")
    return found


def _place(found: Inputs, path: Path, label: str, *, explicit: bool, proto: tuple[bool, str | None]) -> None:
    protocol, given = proto
    try:
        kind, why = sniff(path, given)
    except OSError as exc:
        found.skipped.append((label, f"cannot be read ({exc.strerror or exc})"))
        return
    if kind == "msgtrk" or (kind is None and explicit):
        found.tracking.append((path, label))
    elif kind in ("receive", "send") and protocol:
        found.protocol.append((path, label, kind))
        if "protocol log" in why:  # told by content or --layout, not by #Log-type
            found.protocol_origin[label] = why
    elif kind in ("receive", "send"):
        found.skipped.append((label, f"SMTP {kind} protocol log, not read (--no-protocol-logs)"))
    else:
        found.skipped.append((label, why))


def unaccounted(paths: list[str], inputs: Inputs) -> list[str]:
    """Files under `paths` that discovery neither read nor listed as skipped (must be none: TR-007)."""
    known = {label for _, label in inputs.tracking}
    known |= {label for _, label, _ in inputs.protocol} | {label for label, _ in inputs.skipped}
    missing = []
    for given in paths:
        p = Path(given)
        files = [p] if p.is_file() else sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else []
        for f in files:
            label = given if f == p else str(Path(given) / f.relative_to(p))
            if label not in known:
                missing.append(label)
    return missing


_WHAT = {
    "msgtrk": "an Exchange message tracking log",
    "receive": "an SMTP Receive protocol log",
    "send": "an SMTP Send protocol log",
    "protocol": "SMTP protocol log rows",
    "copystatus": "a Get-MailboxDatabaseCopyStatus export",
    "logs": "a folder of Exchange logs",
}


def import_hint(paths: list[str]) -> str | None:
    """One line for `haconform check` given raw logs instead of a trace (issue 31, newcomer paths): what the
    first raw input is and the `haconform import` command that makes a trace of them; None when no path is a
    raw log (a trace, or a file that is neither: `check` then says why it is unusable)."""
    raw: list[tuple[str, str]] = []
    for given in paths:
        p = Path(given)
        if p.is_file() and trace_kind(given) is None:
            try:
                kind, why = sniff(p)
            except OSError:
                return None
            if kind is None and _copy_status(p):
                kind = "copystatus"
            elif kind is None and why.startswith(("header-less SMTP protocol log", "SMTP protocol log without")):
                kind = "protocol"
            if kind is None:
                return None
            raw.append((given, kind))
        elif p.is_dir():
            if _holds_trace_names(given):
                continue
            try:
                found = discover([given])
            except OSError:
                return None
            if found.tracking or found.protocol:
                raw.append((given, "logs"))
    if not raw:
        return None
    given, kind = raw[0]
    names = " ".join(shlex.quote(g) for g, k in raw if k != "copystatus")
    if kind == "copystatus":
        return (
            f"{given} is {_WHAT[kind]}, not a trace: ask which copy BCSS picks with "
            f"haconform explain {shlex.quote(given)} (or haconform import copystatus {shlex.quote(given)})"
        )
    more = "" if kind in ("msgtrk", "logs") else " (with the message tracking logs of the same servers)"
    return (
        f"{given} is {_WHAT[kind]}, not a trace: import first with haconform import msgtrk {names}{more} "
        "--out trace.parquet, then run haconform check trace.parquet"
    )


def _holds_trace_names(top: str) -> bool:
    """Whether a file under `top` has a trace file's name (the walk stops at the first: `check` reads them).
    Symbolic links are followed once, as `check` follows them (a loop is walked once)."""
    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(top, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:
            dirs[:] = []
            continue
        seen.add((st.st_dev, st.st_ino))
        if any(trace_kind(f) for f in files):
            return True
    return False


def _copy_status(path: Path) -> bool:
    text, _ = head_text(path, 8192)
    return text is not None and "CopyQueueLength" in text and "ReplayQueueLength" in text
