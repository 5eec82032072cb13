"""Message tracking log rows -> one imported trace (mechanism `msgtrk`), paired across servers.

FIELD-NOTES, "What real message tracking logs show about shadow redundancy"; seed 000, "How shadow messages
are created" (interpretation SR-I26). The trace begins with an `IMPORT_START` event (the imported-log marker
of TR-008) that records what was read and the configuration the monitor judges by. Every other event is one
log row, in time order (ties by server, file, line), with its provenance (`src_file`, `src_line`, TR-007).

Entities are built from the logs' own identifiers, never from timing: a row belongs to `<server>/<internal-id>`
of the server that wrote it; a TRANSFER's `reference` joins a bifurcated child to its parent; the primary's
HAREDIRECT names the shadow server and the shadow's InternalId in its source-context, and the shadow's rows
with that internal-message-id (HARECEIVE, HADISCARD, RESUBMIT) join the primary's entity. Server names are
case-folded and never cut; a fully qualified name is read as the short name only where the short name is seen too
(`conformance.audit.servernames`, issue 31).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from conformance.audit.msgtrk import LogRow, ParseResult, Quarantined, split_multi
from conformance.audit.servernames import Names, parse_redirect
from conformance.audit.smtpjoin import REPLY, SESSION, Placed, names_in, protocol_events
from conformance.audit.smtplog import SmtpParse
from model.msgtrk.events import IMPORT_KIND, MECHANISM, NEXT_HOP_SEND
from model.msgtrk.replication import not_judged
from spec.catalogue import catalogue, param_default, require
from traces.schema import KIND_PATTERN, Event
from traces.textfile import custody

require("TR-007", "TR-008", "SR-P02", "SR-P14", "SR-P20")

IMPORT_NODE = "import"
# Event IDs of the documented list (FIELD-NOTES); anything else is kept, marked unknown and counted.
KNOWN_EVENTS = frozenset(
    {
        "HAREDIRECT",
        "HARECEIVE",
        "HADISCARD",
        "HAREDIRECTFAIL",
        "RESUBMIT",
        "RESUBMITDEFER",
        "RESUBMITFAIL",
        "DUPLICATEDELIVER",
        "DUPLICATEEXPAND",
        "DUPLICATEREDIRECT",
        "RECEIVE",
        "SEND",
        "DELIVER",
        "AGENTINFO",
        "DEFER",
        "DSN",
        "EXPAND",
        "FAIL",
        "NOTIFYMAPI",
        "NOTIFYSHADOW",
        "SUBMIT",
        "TRANSFER",
        "BADMAIL",
        "DROP",
        "POISONMESSAGE",
        "PROCESS",
        "REDIRECT",
        "RESOLVE",
        "ROUTING",
        "SUBMITDEFER",
        "SUBMITFAIL",
        "SUBMITDROP",
        "HATRANSFER",
        "INITMESSAGECREATED",
        "MODERATORAPPROVE",
        "MODERATORREJECT",
        "MODERATOREXPIRE",
    }
)
_KIND_RE = re.compile(KIND_PATTERN)
CAP = 1000  # at most this many entries per list in IMPORT_START (the counts are always complete)


@dataclass(frozen=True)
class ImportConfig:
    """The configuration the monitor judges imported logs by (recorded in IMPORT_START)."""

    boundaries: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # name -> servers (any spelling)
    reject_on_shadow_failure: bool | None = None  # None: the catalogue default (SR-P02)
    accept_rejection_variant: bool | None = None  # None: the catalogue default (SR-P20)
    shadow_resubmit_ms: int | None = None  # None: the catalogue default (SR-P14)
    trace_id: str | None = None


def _custom(row: LogRow) -> tuple[list[str], str | None]:
    items = split_multi(row.get("custom-data"))
    repl = next((i.split("=", 1)[1] for i in items if i.lower().startswith("s:replication=")), None)
    return items, repl


def _server_names(rows: list[LogRow]) -> set[str]:
    seen: set[str] = set()
    for r in rows:
        seen.update((r.get("server-hostname"), r.get("client-hostname")))
        repl = _custom(r)[1]
        if repl and repl.lower() not in ("failed", "disabled"):
            seen.add(repl)
        if r.get("event-id").upper() == "HAREDIRECT":
            shadow, _, _ = parse_redirect(r.get("source-context"))
            if shadow:
                seen.add(shadow)
    return seen


def _file_servers(rows: list[LogRow]) -> dict[str, str]:
    """The server that wrote each file: the most common server-hostname in it (for rows that leave it empty)."""
    counts: dict[str, Counter[str]] = {}
    for r in rows:
        if r.get("server-hostname") and r.get("event-id").strip().upper() not in NEXT_HOP_SEND:
            counts.setdefault(r.file, Counter())[r.get("server-hostname")] += 1
    return {f: c.most_common(1)[0][0] for f, c in counts.items()}


def _logging_server(r: LogRow, names: Names, by_file: dict[str, str]) -> str:
    """The server that wrote a row. For SEND rows `server-hostname` is the remote next hop and
    `client-hostname` the local server; a HAREDIRECT naming its own shadow as server is read the same way."""
    event = r.get("event-id").strip().upper()
    server, client = r.get("server-hostname"), r.get("client-hostname")
    if event in NEXT_HOP_SEND and client:
        server = client
    elif event == "HAREDIRECT" and client:
        shadow, _, _ = parse_redirect(r.get("source-context"))
        if shadow and names.norm(shadow) == names.norm(server):
            server = client
    return names.norm(server or by_file.get(r.file, "")) or f"unknown-server:{r.file}"


def _dedupe(rows: list[LogRow]) -> tuple[list[LogRow], list[str]]:
    """Drop exact duplicate rows (log shippers repeat rows), keeping the first; say which lines were dropped."""
    first: dict[tuple, LogRow] = {}
    kept, dropped = [], []
    for r in sorted(rows, key=lambda r: (r.file, r.line)):
        key = tuple(sorted(r.cells.items()))
        if key in first:
            dropped.append(f"{r.file}:{r.line} repeats {first[key].file}:{first[key].line}")
        else:
            first[key] = r
            kept.append(r)
    return kept, dropped


def _attrs(r: LogRow, node: str, names: Names) -> dict[str, Any]:
    event = r.get("event-id").strip().upper()
    a: dict[str, Any] = {
        "src_file": r.file,
        "src_line": r.line,
        "layout": r.layout,
        "event": event,
        "known": event in KNOWN_EVENTS,
    }
    for col, key in (
        ("source", "source"),
        ("internal-message-id", "internal_id"),
        ("message-id", "message_id"),
        ("network-message-id", "network_message_id"),
        ("source-context", "source_context"),
        ("connector-id", "connector"),
        ("sender-address", "sender"),
        ("date-time", "logged_time"),
    ):
        if r.get(col):
            a[key] = r.get(col)
    if r.get("client-hostname"):
        a["client"] = names.norm(r.get("client-hostname"))
    for col, key in (
        ("recipient-address", "recipients"),
        ("recipient-status", "recipient_status"),
        ("reference", "reference"),
    ):
        items = split_multi(r.get(col))
        if items:
            a[key] = items
    custom, repl = _custom(r)
    if custom:
        a["custom"] = custom
    if repl is not None:
        a["replication"] = repl if repl.lower() in ("failed", "disabled") else names.norm(repl)
    if event == "HAREDIRECT":
        shadow, iid, problem = parse_redirect(r.get("source-context"))
        if shadow:
            a["shadow"] = names.norm(shadow)
        if iid:
            a["shadow_internal_id"] = iid
        if problem:
            a["pair_problem"] = problem
    return a


def _entities(rows: list[tuple[LogRow, str, dict[str, Any]]]) -> tuple[list[str], dict[tuple[str, str], str]]:
    """The entity of every row, from internal-message-ids, TRANSFER references and HAREDIRECT pairing; and the
    entity of every (server, internal-message-id) the rows name (the shadow's too, for the protocol-log join)."""
    parent: dict[tuple[str, str], tuple[str, str]] = {}

    def root(k: tuple[str, str]) -> tuple[str, str]:
        seen = set()
        while k in parent and k not in seen:
            seen.add(k)
            k = parent[k]
        return k

    for _, node, a in rows:
        iid = a.get("internal_id")
        if iid is None:
            continue
        if a["event"] == "TRANSFER" and a.get("reference"):
            parent.setdefault((node, iid), (node, a["reference"][0]))
        if a["event"] == "HAREDIRECT" and a.get("shadow") and a.get("shadow_internal_id"):
            parent.setdefault((a["shadow"], a["shadow_internal_id"]), (node, iid))
    out = []
    ids: dict[tuple[str, str], str] = {}
    for r, node, a in rows:
        iid = a.get("internal_id")
        if iid is None:
            out.append(f"row:{r.file}:{r.line}")
            continue
        top = root((node, iid))
        a["primary"] = top[0]
        a["role"] = "primary" if top[0] == node else "shadow"
        out.append(f"{top[0]}/{top[1]}")
        ids[(node, iid)] = out[-1]
    for key in parent:
        top = root(key)
        ids.setdefault(key, f"{top[0]}/{top[1]}")
    return out, ids


def build_trace(
    parsed: ParseResult, config: ImportConfig, files: list[str], smtp: SmtpParse | None = None
) -> tuple[list[Event], dict[str, Any]]:
    """The imported trace and its IMPORT_START attributes (also returned, for the command's own report).
    `smtp`: SMTP protocol-log sessions, joined to the tracking rows by identifiers (`smtpjoin`)."""
    rows, dropped = _dedupe(parsed.rows)
    smtp = smtp or SmtpParse()
    names = Names(_server_names(rows) | names_in(smtp) | {s for b in config.boundaries.values() for s in b})
    by_file = _file_servers(rows)
    placed = []
    for r in rows:
        node = _logging_server(r, names, by_file)
        a = _attrs(r, node, names)
        if a["event"] in NEXT_HOP_SEND and r.get("server-hostname"):
            a["next_hop"] = names.norm(r.get("server-hostname"))
        placed.append((r, node, a))
    placed.sort(key=lambda p: (p[0].ts_ms, p[1], p[0].file, p[0].line))
    entities, ids = _entities(placed)
    received: dict[tuple[str, str], set[str]] = {}
    for (_, node, a), entity in zip(placed, entities, strict=True):
        if a["event"] == "RECEIVE" and a.get("message_id"):
            received.setdefault((node, a["message_id"]), set()).add(entity)
    proto, join_problems, not_applicable = protocol_events(smtp, names.norm, ids, received)
    rows_placed = [
        (r.ts_ms, n, r.file, r.line, a["event"], e, a) for (r, n, a), e in zip(placed, entities, strict=True)
    ]
    merged: list[Placed] = sorted([*rows_placed, *proto], key=lambda p: (p[0], p[1], p[2], p[3]))
    trace = config.trace_id or f"msgtrk-{_digest(merged, [*parsed.quarantine, *smtp.quarantine], dropped)}"
    counts = Counter(a["event"] for _, _, a in placed)
    unknown = sorted((e, n) for e, n in counts.items() if e not in KNOWN_EVENTS)
    coverage: dict[str, list[int]] = {}
    for r, node, _ in placed:
        lo_hi = coverage.setdefault(node, [r.ts_ms, r.ts_ms])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], r.ts_ms), max(lo_hi[1], r.ts_ms)
    reject = config.reject_on_shadow_failure
    reject_on = bool(param_default("RejectMessageOnShadowFailure") if reject is None else reject)
    replication = Counter(a["replication"] for _, _, a in placed if a["event"] == "RECEIVE" and "replication" in a)
    variant = config.accept_rejection_variant
    span = config.shadow_resubmit_ms
    start_attrs: dict[str, Any] = {
        "origin": "Exchange message tracking log",
        "files": files[:CAP],
        "layouts": [f"{f}: {lay}" for f, lay in sorted(parsed.layouts.items())][:CAP],
        "lines_read": parsed.data_lines,
        "rows_imported": len(placed),
        "duplicates_dropped": len(dropped),
        "duplicate_lines": dropped[:CAP],
        "lines_quarantined": len(parsed.quarantine) + len(smtp.quarantine),
        "quarantine": [str(q) for q in [*parsed.quarantine, *smtp.quarantine][:CAP]],
        "layout_origin": [f"{f}: {how}" for f, how in sorted(parsed.layout_origin.items())][:CAP],
        "files_skipped": parsed.inputs.skipped_lines()[:CAP],
        "files_skipped_total": len(parsed.inputs.skipped),
        "protocol_files": smtp.files[:CAP],
        "protocol_lines_read": smtp.data_lines,
        "protocol_duplicates_dropped": smtp.duplicates,
        "protocol_sessions": len(smtp.sessions),
        "protocol_replies_joined": sum(1 for p in proto if p[4] == REPLY and "join" in p[6]),
        "protocol_join_problems": join_problems[:CAP],
        "protocol_not_applicable_total": len(not_applicable),
        "protocol_not_applicable": not_applicable[:CAP],
        "protocol_layout_origin": _origins(parsed.inputs.protocol_origin, smtp.layout_origin)[:CAP],
        "protocol_session_splits": smtp.splits[:CAP],
        "server_name_conflicts": [*names.conflicts, *smtp.name_conflicts][:CAP],
        "replication_values": [f"{v}={n}" for v, n in sorted(replication.items())],
        "fields_not_judged": not_judged(replication, reject_on),
        "event_counts": [f"{e}={n}" for e, n in sorted(counts.items())],
        "unknown_event_ids": [f"{e}={n}" for e, n in unknown],
        "unknown_events_total": sum(n for _, n in unknown),
        "servers": sorted(coverage),
        "server_aliases": sorted(f"{k}={v}" for k, v in names.aliases.items() if k != v),
        "coverage": [f"{n}={lo}..{hi}" for n, (lo, hi) in sorted(coverage.items())],
        "boundaries": [
            f"{b}=" + ",".join(sorted({names.norm(s) for s in servers}))
            for b, servers in sorted(config.boundaries.items())
        ],
        "reject_on_shadow_failure": param_default("RejectMessageOnShadowFailure") if reject is None else reject,
        "reject_on_shadow_failure_from": "catalogue default (SR-P02)" if reject is None else "import option",
        "accept_rejection_variant": param_default("AcceptRejectionVariant") if variant is None else variant,
        "shadow_resubmit_ms": _span_default() if span is None else span,
    }
    start_attrs |= _custody(parsed, smtp)
    first_ts = merged[0][0] if merged else 0
    events = [Event(trace, 0, f"{trace}:0", first_ts, IMPORT_NODE, MECHANISM, trace, IMPORT_KIND, start_attrs)]
    for seq, (ts, node, file, line, event, entity, a) in enumerate(merged, start=1):
        kind = event if _KIND_RE.match(event) else "UNREADABLE_EVENT_ID"
        eid = f"{trace}:{file}:{line}" if kind != SESSION else f"{trace}:{file}:{line}:session"
        events.append(Event(trace, seq, eid, ts, node, MECHANISM, entity, kind, a))
    return events, start_attrs


def _origins(*told: dict[str, str]) -> list[str]:
    """How each protocol log's direction and columns were known, where not by its header (file: how; how)."""
    files = sorted({f for t in told for f in t})
    return [f"{f}: " + "; ".join(t[f] for t in told if f in t) for f in files]


def _digest(merged: list[Placed], quarantine: list[Quarantined], dropped: list[str]) -> str:
    """The trace ID's hash: of everything imported, each event's line, server, time, kind and entity, the
    quarantined lines with their reasons and the duplicate lines dropped (issue 31: two imports differing only
    in their quarantine get different IDs)."""
    digest = hashlib.sha256()
    for ts, node, file, line, kind, entity, _ in merged:
        digest.update(f"{file}\0{line}\0{node}\0{ts}\0{kind}\0{entity}\n".encode())
    for q in sorted(quarantine, key=lambda q: (q.file, q.line, q.column, q.field)):
        digest.update(f"Q\0{q}\n".encode())
    for d in dropped:
        digest.update(f"D\0{d}\n".encode())
    return digest.hexdigest()[:12]


def _custody(parsed: ParseResult, smtp: SmtpParse) -> dict[str, list]:
    """Chain of custody (issue 31, TR-007): each raw file read, tracking and protocol alike, with its name as
    given, size, SHA-256 of its bytes on disk, line count and encoding (`traces.textfile.custody`), as parallel
    lists."""
    read_protocol = set(smtp.files)
    files = [*parsed.inputs.tracking, *((p, label) for p, label, _ in parsed.inputs.protocol if label in read_protocol)]
    return custody(files)


def _span_default() -> int:

    for req in catalogue().requirements.values():
        if req.parameter is not None and req.parameter.name == "ShadowResubmitTimeSpan":
            return req.parameter.default_ms
    raise KeyError("ShadowResubmitTimeSpan is not in the catalogue")


def quarantine_rows(items: list[Quarantined]) -> list[dict[str, object]]:
    return [q.to_json() for q in sorted(items, key=lambda q: (q.file, q.line))]
