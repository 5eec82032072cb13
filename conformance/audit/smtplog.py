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

Logs as they come: rows without any header (SIEM exports, forum posts) are read in the nine published
columns when a row has nine fields (`sniff` tells Receive from Send by content, or `--layout receive|send`).
Sessions are keyed the way Exchange numbers them: session-id and connector (a Receive connector names its
server), never the local address, so a Send session's rows written before the connection opens (empty local
endpoint, `attempting to connect`) join it. One session id seen from several remote endpoints is not merged: it
is read as one session per remote endpoint and the split is reported with the files and first lines. The logging
server is named by the most specific source: the connector's `SERVER\\Name`, else the full banner (Receive) or
EHLO (Send) name, case-folded, never cut; a disagreement, and one public name used by several servers, is
reported (`SmtpParse.name_conflicts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from conformance.audit.msgtrk import MalformedLine, Quarantined, log_lines, parse_time, split_csv
from conformance.audit.servernames import clean, reply_ids, same_host
from spec.catalogue import require
from traces.textfile import utf8_bytes

require("TR-005", "TR-007", "SR-031")

REQUIRED = ("date-time", "session-id", "sequence-number", "event", "data")
FIELDS = [
    "date-time",
    "connector-id",
    "session-id",
    "sequence-number",
    "local-endpoint",
    "remote-endpoint",
    "event",
    "data",
    "context",
]
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
    server: str = ""  # the logging server: the connector's SERVER\Name, else the banner (receive) or EHLO (send)
    said: str = ""  # the name the logging server gave itself (banner or EHLO), full, case-folded
    peer: str = ""  # the other side, from its EHLO (receive) or its EHLO answer (send)
    problem: str = ""
    conflict: str = ""  # the connector and the banner/EHLO name different servers (the connector is taken)
    connected: bool = False  # the other side answered (a Send session that never got a 220 opened none)
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
    layout_origin: dict[str, str] = field(default_factory=dict)  # file -> how its columns were known
    splits: list[str] = field(default_factory=list)  # one session id from several remote endpoints, read apart
    name_conflicts: list[str] = field(default_factory=list)  # server names that disagree, with file:line


def parse_protocol(files: list[tuple[Path, str, str]]) -> SmtpParse:
    """Parse the protocol logs (path, label, "receive"|"send") into sessions."""
    out = SmtpParse(files=[label for _, label, _ in files])
    groups: dict[tuple[str, str, str], list[ProtoLine]] = {}
    seen: set[tuple] = set()
    for path, label, direction in files:
        for pl in _lines(path, label, out):
            key = (direction, pl.session, pl.connector.strip().lower())
            dup = (key, pl.local, pl.remote, pl.seq, pl.event, pl.data, pl.context, pl.ts_ms)
            if dup in seen:
                out.duplicates += 1
                continue
            seen.add(dup)
            out.lines_kept += 1
            groups.setdefault(key, []).append(pl)
    for key in sorted(groups):
        for lines in _split(key, groups[key], out):
            s = Session(key[0], key[1], lines)
            s.lines.sort(key=lambda p: (p.seq, p.ts_ms, p.file, p.line))
            _walk(s)
            out.sessions.append(s)
    _shared_names(out)
    return out


def _split(key: tuple[str, str, str], lines: list[ProtoLine], out: SmtpParse) -> list[list[ProtoLine]]:
    """One session per remote endpoint under one session id; lines without a remote endpoint join the first."""
    by_remote: dict[str, list[ProtoLine]] = {}
    for pl in sorted(lines, key=lambda p: (p.ts_ms, p.file, p.line)):
        by_remote.setdefault(pl.remote.strip(), []).append(pl)
    named = [r for r in by_remote if r]
    if len(named) <= 1:
        return [lines]
    parts = [by_remote[r] for r in named]
    parts[0] = [*by_remote.get("", []), *parts[0]]
    files = sorted({p.file for p in lines})
    out.splits.append(
        f"session id {key[1]} (connector {key[2] or 'none'}, {key[0]}) is logged from {len(named)} remote "
        f"endpoints ({', '.join(named[:6])}{', ...' if len(named) > 6 else ''}) in {len(files)} file(s) "
        f"({', '.join(files[:3])}): read as {len(named)} sessions, one per remote endpoint, not merged "
        f"(first lines {', '.join(part[0].where for part in parts[:6])})"
    )
    return parts


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
        try:
            cells = split_csv(text)
        except MalformedLine as exc:
            out.quarantine.append(Quarantined(label, number, "", exc.reason, exc.column))
            continue
        if columns is None:  # rows without a header (SIEM exports): the nine published columns, in order
            columns = FIELDS
            out.layout_origin[label] = f"no header: the {len(FIELDS)} protocol-log columns in published order"
        if len(cells) != len(columns):
            where = "the #Fields line has" if columns is not FIELDS else "a header-less protocol-log row has"
            out.quarantine.append(
                Quarantined(label, number, "", f"{len(cells)} fields where {where} {len(columns)}", 1)
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
    s.connected = any(p.event == "<" for p in s.lines)  # the other side said something: a session was opened
    _identify(s, names)


def _answer(txn: Transaction, reply: ProtoLine, code: str) -> None:
    txn.reply, txn.code = reply, code
    txn.internal_id, txn.hostname, _ = reply_ids(reply.data)
    mid = _MID.search(reply.data)
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
    """The logging server from the most specific source: a connector's `SERVER\\Name`, else the name the server
    gave itself (the 220 banner of a Receive session, the EHLO of a Send session), full and case-folded. A banner
    or EHLO naming another host than the connector is a conflict, reported; the connector is taken."""
    s.said = names.get("self", "")
    prefix = next((clean(p.connector.split("\\", 1)[0]) for p in s.lines if "\\" in p.connector), "")
    s.server = prefix or s.said
    if prefix and s.said and not same_host(prefix, s.said):
        what = "banner" if s.direction == "receive" else "EHLO"
        s.conflict = (
            f"{s.lines[0].where}: session {s.session_id}: the connector names server {prefix}, the {what} "
            f"{s.said}: the server is taken from the connector"
        )
    s.peer = names.get("peer", "")
    if not s.server:
        s.problem = "the logging server is not named (no banner, connector server or EHLO)"


def _shared_names(out: SmtpParse) -> None:
    """Every conflict of names, and each banner/EHLO name used by several servers (connectors) or, without a
    connector naming the server, from several local addresses: reported, never merged silently."""
    out.name_conflicts.extend(s.conflict for s in out.sessions if s.conflict)
    users: dict[str, dict[str, str]] = {}
    for s in out.sessions:
        if not s.said:
            continue
        local = next((p.local.rsplit(":", 1)[0] for p in s.lines if p.local.strip()), "")
        who = s.server if s.server != s.said else (f"local address {local}" if local else "")
        if who:
            users.setdefault(s.said, {}).setdefault(who, s.lines[0].where)
    for name, who in sorted(users.items()):
        servers = [w for w in who if not w.startswith("local address")]
        addresses = [w for w in who if w.startswith("local address")]
        if len(servers) > 1:
            out.name_conflicts.append(
                f"the name {name} is given by {len(servers)} servers ({', '.join(sorted(servers))}; first at "
                f"{', '.join(who[w] for w in sorted(servers))}): a shared public name, kept apart by their connectors"
            )
        if len(addresses) > 1:
            out.name_conflicts.append(
                f"the name {name} is used from {len(addresses)} local addresses ({', '.join(sorted(addresses))}; "
                f"first at {', '.join(who[w] for w in sorted(addresses))}): possibly distinct servers behind one "
                f"public name; no connector names them, so their sessions are read as server {name}"
            )
