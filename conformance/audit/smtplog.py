"""Read SMTP Receive and Send protocol logs (`RECV*.LOG`, `SEND*.LOG`) into sessions and message transactions.

Format (FIELD-NOTES, "The real formats a user has"; `tests/audit/data/README.md` for the public samples it
follows): the header block (`#Software`, `#Version`, `#Log-type: SMTP Receive|Send Protocol Log`, `#Date`,
`#Fields: date-time,connector-id,session-id,sequence-number,local-endpoint,remote-endpoint,event,data,context`)
then CSV rows, mapped by name from `#Fields`. `event` is `+` (connect), `-` (disconnect), `>` (sent by this
server), `<` (received) or `*` (information). Lines of many sessions are interleaved; a session's lines are
put back in `sequence-number` order; exact repeats of a line are dropped and counted; quoted fields with commas
and doubled quotes are read by the tracking reader's tokenizer.

In a Receive log the client's commands are `<` and this server's replies `>`; in a Send log the other way
round. Replies answer pending commands in order (pipelining); a `354` to DATA leaves the end of the data
pending, whose reply is the message's acknowledgement (or refusal); `BDAT n LAST` is answered the same way.
The reply text `250 2.6.0 <message-id> [InternalId=N, Hostname=H] Queued mail for delivery|redundancy` names
the accepting server's internal-message-id: that is how transactions are joined to tracking rows (seed 000,
"How shadow messages are created"; interpretation SR-I29). A line that cannot be read is quarantined with
file, line, column and field (TR-005).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from conformance.audit.msgtrk import MalformedLine, Quarantined, log_lines, parse_time, split_csv
from spec.catalogue import require
from traces.textfile import utf8_bytes

require("TR-005", "TR-007", "SR-031")

REQUIRED = ("date-time", "session-id", "sequence-number", "event", "data")
_IDS = re.compile(r"\[\s*InternalId\s*=\s*(\d+)\s*(?:,\s*Hostname\s*=\s*([A-Za-z0-9][A-Za-z0-9.\-]*))?\s*\]", re.I)
_MID = re.compile(r"<([^<>\s]+@[^<>\s]+)>")
_CODE = re.compile(r"^(\d{3})[ -]")
SHADOW_COMMANDS = ("XSHADOWREQUEST", "XSHADOW")
DISCARD_COMMANDS = ("XQDISCARD", "XQUERYDISCARD")
_PLAIN = ("EHLO", "HELO", "MAIL", "RCPT", "DATA", "BDAT", "RSET", "NOOP", "QUIT", "STARTTLS", "AUTH", "VRFY")
VERBS = frozenset((*_PLAIN, "EXPN", "HELP", "X-ANONYMOUSTLS", "XEXPS", "XEXCH50", *SHADOW_COMMANDS, *DISCARD_COMMANDS))


@dataclass(frozen=True, slots=True)
class ProtoLine:
    file: str
    line: int
    ts_ms: int
    session: str
    seq: int
    event: str
    data: str
    context: str
    connector: str
    local: str
    remote: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Transaction:
    """One message in a session: MAIL FROM .. the reply to the end of its data."""

    mail_from: ProtoLine
    reply: ProtoLine | None = None
    code: str = ""
    message_id: str = ""
    internal_id: str = ""
    hostname: str = ""
    redundancy: bool = False


@dataclass
class Session:
    direction: str  # "receive" | "send"
    session_id: str
    lines: list[ProtoLine] = field(default_factory=list)
    server: str = ""  # the logging server, from the banner/connector (receive) or EHLO (send)
    peer: str = ""  # the other side, from its EHLO (receive) or its EHLO answer (send)
    problem: str = ""
    transactions: list[Transaction] = field(default_factory=list)
    commands: list[tuple[ProtoLine, ProtoLine | None]] = field(default_factory=list)  # shadow/discard + reply
    closed: ProtoLine | None = None


@dataclass
class SmtpParse:
    sessions: list[Session] = field(default_factory=list)
    quarantine: list[Quarantined] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    data_lines: int = 0
    lines_kept: int = 0
    duplicates: int = 0


def parse_protocol(files: list[tuple[Path, str, str]]) -> SmtpParse:
    """Parse the protocol logs (path, label, "receive"|"send") into sessions."""
    out = SmtpParse(files=[label for _, label, _ in files])
    by_key: dict[tuple[str, str, str], Session] = {}
    seen: set[tuple] = set()
    for path, label, direction in files:
        for pl in _lines(path, label, out):
            key = (direction, pl.session, pl.local.rsplit(":", 1)[0])
            dup = (key, pl.seq, pl.event, pl.data, pl.context, pl.ts_ms)
            if dup in seen:
                out.duplicates += 1
                continue
            seen.add(dup)
            out.lines_kept += 1
            by_key.setdefault(key, Session(direction, pl.session)).lines.append(pl)
    for key in sorted(by_key):
        s = by_key[key]
        s.lines.sort(key=lambda p: (p.seq, p.ts_ms, p.file, p.line))
        _walk(s)
        out.sessions.append(s)
    return out


def _lines(path: Path, label: str, out: SmtpParse):  # type: ignore[no-untyped-def]
    columns: list[str] | None = None
    for number, text in log_lines(utf8_bytes(path, label)):  # UTF-8, UTF-16 LE/BE by byte-order mark
        if isinstance(text, UnicodeDecodeError):
            out.data_lines += 1
            out.quarantine.append(Quarantined(label, number, "", f"not UTF-8 ({text.reason})", text.start + 1))
            continue
        if text.startswith("#"):
            if text.startswith("#Fields:"):
                columns = [c.strip() for c in text[len("#Fields:") :].split(",")]
                missing = [c for c in REQUIRED if c not in columns]
                if missing:
                    raise ValueError(f"{label}:{number}: the #Fields line lacks {', '.join(missing)}")
            continue
        out.data_lines += 1
        if columns is None:
            out.quarantine.append(Quarantined(label, number, "", "data before any #Fields line", 1))
            continue
        try:
            cells = split_csv(text)
        except MalformedLine as exc:
            out.quarantine.append(Quarantined(label, number, "", exc.reason, exc.column))
            continue
        if len(cells) != len(columns):
            out.quarantine.append(
                Quarantined(label, number, "", f"{len(cells)} fields where the #Fields line has {len(columns)}", 1)
            )
            continue
        v = {c: val for c, (val, _) in zip(columns, cells, strict=True)}
        at = _Columns(columns, cells)
        try:
            ts = _time(v["date-time"].strip())
        except ValueError as exc:
            out.quarantine.append(Quarantined(label, number, "date-time", str(exc), at["date-time"]))
            continue
        if not v["sequence-number"].strip().isdigit():
            q = Quarantined(label, number, "sequence-number", "not a number", at["sequence-number"])
            out.quarantine.append(q)
            continue
        if v["event"].strip() not in ("+", "-", ">", "<", "*") or not v["session-id"].strip():
            bad = "event" if v["session-id"].strip() else "session-id"
            out.quarantine.append(Quarantined(label, number, bad, f"{v[bad]!r} is not a protocol log {bad}", at[bad]))
            continue
        yield ProtoLine(
            label,
            number,
            ts,
            v["session-id"].strip(),
            int(v["sequence-number"]),
            v["event"].strip(),
            v["data"],
            v.get("context", ""),
            v.get("connector-id", ""),
            v.get("local-endpoint", ""),
            v.get("remote-endpoint", ""),
        )


@lru_cache(maxsize=8192)
def _time(text: str) -> int:
    return parse_time(text)  # many lines share a millisecond


class _Columns:
    """The 1-based start column of a named field, looked up only when a line is quarantined."""

    def __init__(self, columns: list[str], cells: list[tuple[str, int]]) -> None:
        self.columns, self.cells = columns, cells

    def __getitem__(self, name: str) -> int:
        return self.cells[self.columns.index(name)][1]


def _walk(s: Session) -> None:
    """Commands, replies and transactions of one session, in sequence order."""
    client, server = ("<", ">") if s.direction == "receive" else (">", "<")
    pending: list[tuple[str, ProtoLine]] = []
    txn: Transaction | None = None
    names: dict[str, str] = {}
    asked: list[ProtoLine] = []
    answers: dict[int, ProtoLine] = {}
    for p in s.lines:
        if p.event == "-":
            s.closed = p
        if p.event == client:
            verb = p.data.strip().split(" ", 1)[0].upper()
            if pending and pending[0][0] == "AUTH*" and verb not in VERBS:  # the client's part of an AUTH
                pending[0] = ("AUTH", p)
                continue
            if verb == "MAIL":
                txn = Transaction(p)
                s.transactions.append(txn)
            elif verb in ("EHLO", "HELO") and s.direction == "receive":
                names.setdefault("peer", _arg(p.data))
            elif verb in ("EHLO", "HELO"):
                names.setdefault("self", _arg(p.data))
            elif verb in SHADOW_COMMANDS + DISCARD_COMMANDS:
                asked.append(p)
            if verb == "BDAT" and p.data.strip().upper().endswith(" LAST"):
                verb = "END"
            pending.append((verb, p))
        elif p.event == server:
            m = _CODE.match(p.data.strip())
            code = m.group(1) if m else ""
            if not pending:
                if code == "220" and s.direction == "receive":
                    names.setdefault("self", _arg(p.data))
                continue
            if pending[0][0] == "AUTH*":  # a reply while the client's AUTH part was not logged
                if code != "334":
                    pending.pop(0)  # the exchange ended
                continue
            verb, cmd = pending.pop(0)
            if verb in ("EHLO", "HELO") and s.direction == "send":
                names.setdefault("peer", _arg(p.data))
            if verb == "DATA" and code == "354":
                pending.insert(0, ("END", cmd))
            elif verb == "AUTH" and code == "334":
                pending.insert(0, ("AUTH*", cmd))
            elif verb == "END" and txn is not None:
                _answer(txn, p, code)
                txn = None
            elif verb in SHADOW_COMMANDS + DISCARD_COMMANDS:
                answers[id(cmd)] = p
    s.commands = [(c, answers.get(id(c))) for c in asked]
    _identify(s, names)


def _answer(txn: Transaction, reply: ProtoLine, code: str) -> None:
    txn.reply, txn.code = reply, code
    ids = _IDS.search(reply.data)
    mid = _MID.search(reply.data)
    txn.internal_id = ids.group(1) if ids else ""
    txn.hostname = (ids.group(2) or "") if ids else ""
    txn.message_id = f"<{mid.group(1)}>" if mid else ""
    txn.redundancy = "for redundancy" in reply.data.lower()


def _arg(data: str) -> str:
    """The host name a greeting or EHLO names: `EHLO host`, `220 host ...`, `250-host Hello [...]`."""
    parts = data.strip().split()
    if len(parts) < 2:
        return ""
    host = parts[1].lstrip("-")
    if parts[0][:3].isdigit() and parts[0][3:4] == "-":
        host = parts[0][4:] or host
    return "" if host.startswith("[") else host.lower().rstrip(".")


def _identify(s: Session, names: dict[str, str]) -> None:
    """The logging server: a Receive connector's `SERVER\\Name` and the 220 banner must agree (short names)."""
    self_name = names.get("self", "")
    prefix = next((p.connector.split("\\", 1)[0].lower() for p in s.lines if "\\" in p.connector), "")
    if prefix and self_name and prefix.split(".")[0] != self_name.split(".")[0]:
        s.problem = f"the connector names server {prefix} but the session greets as {self_name}"
    s.server = self_name or prefix
    s.peer = names.get("peer", "")
    if not s.server:
        s.problem = s.problem or "the logging server is not named (no banner, connector server or EHLO)"
