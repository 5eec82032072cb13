"""SMTP protocol-log sessions -> trace events joined to the message tracking entities by identifiers.

Seed 000, "How shadow messages are created" (steps 2-4: the primary opens a simultaneous session to the
shadow server, the shadow acknowledges, then the primary acknowledges the sender); interpretation SR-I29.
Joins use the identifiers the logs share, never timing:
- the reply to the end of a message's data names the accepting server's internal-message-id
  (`[InternalId=N, Hostname=H]`): a Receive-log reply on server S joins the tracking entity of (S, N); a
  shadow session's reply `Queued mail for redundancy` joins the entity of (H, N), which the primary's
  HAREDIRECT already joined to the primary's message;
- a reply without an InternalId (2010 and older builds) joins by message-id among the tracking RECEIVE rows of
  that server, only when exactly one message matches; several matches are UNKNOWN with the reason (a sender
  re-delivering after a time-out gives two sessions with one message-id: seed 000, "SMTP timeouts").
Every event keeps the protocol-log file and line (TR-007).

Not applicable (issue 31), counted and listed, never a join problem: a message sent in a Send session that is not a
shadow session (no XSHADOWREQUEST/XSHADOW, no `Queued mail for redundancy`): a delivery to the next hop, Exchange
or not (a Postfix `250 ok 1666169082 30910` names no InternalId), which no shadow redundancy rule reads; and a
Send session that never got an answer (no connection was opened, so no session to judge for SR-054).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from conformance.audit.smtplog import DISCARD_COMMANDS, SHADOW_COMMANDS, Session, SmtpParse, Transaction
from model.msgtrk.events import REPLY, SESSION, SHADOW_CMD
from spec.catalogue import require

require("TR-007", "SR-031", "SR-054")

Placed = tuple[int, str, str, int, str, str, dict[str, Any]]  # ts, node, file, line, kind, entity, attrs


def names_in(smtp: SmtpParse) -> set[str]:
    """Every server name the sessions mention (for short/fully-qualified normalisation)."""
    seen: set[str] = set()
    for s in smtp.sessions:
        seen.update((s.server, s.said, s.peer))
        seen.update(t.hostname for t in s.transactions)
    return {n for n in seen if n}


def protocol_events(
    smtp: SmtpParse,
    norm: Callable[[str], str],
    ids: dict[tuple[str, str], str],
    received: dict[tuple[str, str], set[str]],
) -> tuple[list[Placed], list[str], list[str]]:
    """Events for the sessions, the join problems and what shadow redundancy does not concern (`file:line: why`).

    `ids`: (server, internal-message-id) -> entity of the tracking rows; `received`: (server, message-id) ->
    entities whose RECEIVE rows on that server carry the message-id."""
    out: list[Placed] = []
    problems: list[str] = []
    not_applicable: list[str] = []
    for s in smtp.sessions:
        node = norm(s.server) or f"unknown-server:{s.lines[0].file}"
        base = {"direction": s.direction, "session": s.session_id, "server": node, "peer": norm(s.peer)}
        entities: set[str] = set()
        shadow_session = any(_verb(c.data) in SHADOW_COMMANDS for c, _ in s.commands)
        for t in s.transactions:
            if t.reply is None:
                continue
            na = s.direction == "send" and not shadow_session and not t.redundancy
            if na:
                why = "a message sent to the next hop, not in a shadow session: no shadow redundancy rule reads it"
                not_applicable.append(f"{t.reply.where}: {why}")
                entity, how, problem = f"smtp:{t.reply.file}:{t.reply.line}", "", ""
            else:
                entity, how, problem = _join(s, t, node, norm, ids, received)
            attrs = {
                **base,
                "src_file": t.reply.file,
                "src_line": t.reply.line,
                "event": REPLY,
                "code": t.code,
                "reply": t.reply.data.strip()[:300],
                "redundancy": t.redundancy,
                "mail_from_line": t.mail_from.where,
                "mail_from_seq": t.mail_from.seq,
                "shadow_commands_before": [
                    c.where for c, _ in s.commands if c.seq < t.mail_from.seq and _verb(c.data) not in DISCARD_COMMANDS
                ],
            }
            for key, value in (("message_id", t.message_id), ("internal_id", t.internal_id)):
                if value:
                    attrs[key] = value
            if t.hostname:
                attrs["hostname"] = norm(t.hostname)
            if na:
                attrs["not_applicable"] = "a message sent to the next hop, not in a shadow session"
            if how:
                attrs["join"] = how
            if problem:
                attrs["join_problem"] = problem
                problems.append(f"{t.reply.where}: {problem}")
            entities.add(entity)
            out.append((t.reply.ts_ms, node, t.reply.file, t.reply.line, REPLY, entity, attrs))
        joined = sorted(e for e in entities if not e.startswith("smtp:"))
        session_entity = joined[0] if len(joined) == 1 else f"smtp-session:{node}:{s.session_id}"
        for cmd, reply in s.commands:
            verb = _verb(cmd.data)
            attrs = {**base, "src_file": cmd.file, "src_line": cmd.line, "event": SHADOW_CMD, "command": verb}
            attrs["arguments"] = cmd.data.strip()[len(verb) :].strip()[:200]
            if reply is not None:
                attrs["reply"], attrs["reply_line"] = reply.data.strip()[:200], reply.where
            out.append((cmd.ts_ms, node, cmd.file, cmd.line, SHADOW_CMD, session_entity, attrs))
        first, last = s.lines[0], s.lines[-1]
        attrs = {
            **base,
            "src_file": first.file,
            "src_line": first.line,
            "event": SESSION,
            "last_line": last.where,
            "closed": s.closed is not None,
            "last_ms": max(p.ts_ms for p in s.lines),
            "discard_queries": [
                c.where for c, _ in s.commands if c.data.strip().split(" ")[0].upper() in DISCARD_COMMANDS
            ],
            "messages": [t.reply.where for t in s.transactions if t.reply is not None],
        }
        if s.problem:
            attrs["session_problem"] = s.problem
        if s.direction == "send" and not s.connected:
            attrs["not_applicable"] = "the other side never answered: no SMTP session was opened"
            not_applicable.append(f"{first.where}: Send session {s.session_id}: {attrs['not_applicable']}")
        out.append((min(p.ts_ms for p in s.lines), node, first.file, first.line, SESSION, session_entity, attrs))
    return out, problems, not_applicable


def _join(
    s: Session,
    t: Transaction,
    node: str,
    norm: Callable[[str], str],
    ids: dict[tuple[str, str], str],
    received: dict[tuple[str, str], set[str]],
) -> tuple[str, str, str]:
    """(entity, how it was joined, problem): an unjoined reply gets an entity of its own, `smtp:<file>:<line>`."""
    assert t.reply is not None
    alone = f"smtp:{t.reply.file}:{t.reply.line}"
    if s.problem:
        return alone, "", f"not joined: {s.problem}"
    if not t.code.startswith("2"):
        return alone, "", ""  # a refusal names no internal-message-id; judged with its session
    acceptor = norm(t.hostname) if t.hostname else (node if s.direction == "receive" else norm(s.peer))
    if s.direction == "receive" and t.hostname and acceptor != node:
        return alone, "", f"the reply names Hostname {t.hostname}, not the logging server {node}"
    if t.internal_id:
        entity = ids.get((acceptor, t.internal_id))
        if entity is not None:
            return entity, "internal-message-id", ""
        return alone, "", f"no imported tracking row of {acceptor} has internal-message-id {t.internal_id}"
    if s.direction == "receive" and t.message_id:
        matches = sorted(received.get((node, t.message_id), set()))
        if len(matches) == 1:
            return matches[0], "message-id", ""
        if matches:
            return (
                alone,
                "",
                (
                    f"ambiguous: message-id {t.message_id} matches {len(matches)} messages received by {node} "
                    f"({', '.join(matches[:5])}) and the reply names no InternalId"
                ),
            )
        return alone, "", f"no imported RECEIVE row of {node} has message-id {t.message_id}"
    return alone, "", "the reply names neither an InternalId nor a message-id"


def _verb(data: str) -> str:
    return data.strip().split(" ", 1)[0].upper()
