"""What the audit monitor judges of the replies to the sender: on SMTP protocol logs, the acknowledgement to the
sender after the shadow's (SR-031), the shadow session announcing itself (SR-030), the shadow server querying
discard status in every session it opens to the primary (SR-054), and the acknowledgement despite a failed
shadow (SR-021); on the tracking log, the accept or reject after HAREDIRECTFAIL (SR-019, SR-020, SR-021).

Seed 000, "How shadow messages are created" (steps 2-4), "Shadow redundancy is enabled by default" and "How
shadow messages are maintained"; interpretation SR-I29. Orders are compared only on one server's clock (the
primary's Receive log, its Send log and its tracking log are all written by the primary); a tie in the same
millisecond is unknown, not a verdict. Rows are joined by identifiers at import (`conformance.audit.smtpjoin`);
what is not joined, or joined ambiguously, is a note with the reason. Every violation names the protocol-log
lines (TR-007). Its rule rows are in `model.msgtrk.rules` (`smtp-*`).

What each rule judged goes to the monitor's `Tally`: SR-031 per acknowledgement to the sender judged against the
shadow's (a tie in one millisecond, or no record of a shadow, is skipped), SR-021 per acknowledgement after a failed
shadow with RejectMessageOnShadowFailure on, SR-030 per shadow session's reply, SR-054 per closed Send session that
queried discard status or was opened while holding the peer's shadow; on the tracking log SR-019 or SR-021 per
HAREDIRECTFAIL and SR-020 per rejection text found.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from model.msgtrk import rules as R
from model.msgtrk.events import NEXT_HOP, REPLY, SESSION
from spec.catalogue import require
from traces.schema import Event
from traces.verdict import Rule, Tally

require("SR-019", "SR-020")  # its rules are rows of `model.msgtrk.rules` (smtp-*)


class Bad(Protocol):
    """The monitor's violation sink (`model.msgtrk.judging.Judge.bad`): the rule, the entity, the events, why,
    and the structured values compared."""

    def __call__(self, rule: Rule, entity: str, evs: Sequence[Event], why: str, **data: Any) -> None: ...


def _where(e: Event) -> str:
    return f"{e.attrs.get('src_file', '?')}:{e.attrs.get('src_line', '?')}"


def judge_protocol(
    bad: Bad, notes: list[str], tally: Tally, reject: bool, by_entity: dict[str, list[Event]], ours: list[Event]
) -> set[str]:
    """Judge the protocol-log events; returns the entities whose acknowledgement to the sender was judged."""
    judged: set[str] = set()
    for entity, evs in sorted(by_entity.items()):
        if _judge_ack(bad, notes, tally, reject, entity, evs):
            judged.add(entity)
    for e in ours:
        if e.kind == REPLY and e.attrs.get("join_problem"):
            notes.append(f"{_where(e)}: SMTP reply not joined to a tracking message: {e.attrs['join_problem']}")
        if e.kind == REPLY and e.attrs.get("redundancy") and e.attrs.get("direction") == "send":
            tally.judge(R.SMTP_SHADOW_SESSION_ANNOUNCED)
            _judge_announced(bad, e)
    _judge_discard_queries(bad, notes, tally, by_entity, [e for e in ours if e.kind == SESSION])
    return judged


def _judge_ack(bad: Bad, notes: list[str], tally: Tally, reject: bool, entity: str, evs: list[Event]) -> bool:
    primary = entity.split("/", 1)[0]
    mine = [e for e in evs if e.node == primary]
    acks = [
        e
        for e in mine
        if e.kind == REPLY
        and e.attrs.get("direction") == "receive"
        and not e.attrs.get("redundancy")
        and str(e.attrs.get("code", "")).startswith("2")
    ]
    if not acks:
        return False
    shadow = [
        e
        for e in mine
        if e.kind == "HAREDIRECT"
        or (e.kind == REPLY and e.attrs.get("direction") == "send" and e.attrs.get("redundancy"))
    ]
    shadow = [e for e in shadow if e.kind == "HAREDIRECT" or str(e.attrs.get("code", "")).startswith("2")]
    failed = [e for e in mine if e.kind == "HAREDIRECTFAIL"]
    for ack in acks:
        if shadow:
            first = min(shadow, key=lambda e: (e.ts_ms, e.seq))
            if ack.ts_ms == first.ts_ms:
                tally.skip(R.SMTP_ACK_AFTER_SHADOW, "logged in the same millisecond as the shadow's acknowledgement")
            else:
                tally.judge(R.SMTP_ACK_AFTER_SHADOW)
            if ack.ts_ms < first.ts_ms:
                bad(
                    R.SMTP_ACK_AFTER_SHADOW,
                    entity,
                    [ack, first],
                    f"{primary} acknowledged the message to the sender ({ack.attrs.get('reply', '')[:60]!r}) "
                    f"{first.ts_ms - ack.ts_ms} ms before its first record of the shadow's acknowledgement "
                    f"({_label(first)}), both on {primary}'s clock",
                    ack_ms=ack.ts_ms,
                    shadow_ack_ms=first.ts_ms,
                    gap_ms=first.ts_ms - ack.ts_ms,
                )
            elif ack.ts_ms == first.ts_ms:
                notes.append(
                    f"{entity}: SR-031 unknown: the acknowledgement to the sender ({_where(ack)}) and the shadow's "
                    f"({_where(first)}) are logged in the same millisecond on {primary}, whose order is not kept"
                )
        elif failed and reject:
            tally.judge(R.SMTP_ACK_DESPITE_SHADOW_FAILURE)
            bad(
                R.SMTP_ACK_DESPITE_SHADOW_FAILURE,
                entity,
                [failed[0], ack],
                f"RejectMessageOnShadowFailure is true and {primary} could not make the shadow (HAREDIRECTFAIL), "
                f"yet it acknowledged the message to the sender ({ack.attrs.get('reply', '')[:60]!r})",
            )
        elif not failed:
            tally.skip(R.SMTP_ACK_AFTER_SHADOW, "no record of the shadow's acknowledgement on the primary")
            notes.append(
                f"{entity}: SR-031 not judged: the acknowledgement to the sender ({_where(ack)}) has no record "
                f"of a shadow's acknowledgement on {primary} (no HAREDIRECT, no shadow session in its Send log)"
            )
    return True


def _label(e: Event) -> str:
    if e.kind == "HAREDIRECT":
        return f"HAREDIRECT at {_where(e)}"
    return f"the shadow session's {e.attrs.get('code', '')} at {_where(e)}"


def _judge_announced(bad: Bad, reply: Event) -> None:
    if reply.attrs.get("shadow_commands_before"):
        return
    bad(
        R.SMTP_SHADOW_SESSION_ANNOUNCED,
        reply.entity,
        [reply],
        f"{reply.node} got 'Queued mail for redundancy' from {reply.attrs.get('peer') or 'its peer'} in a session "
        f"that sent no XSHADOWREQUEST (2013 and later) or XSHADOW (2010) before MAIL FROM "
        f"({reply.attrs.get('mail_from_line', '?')}): not a shadow session",
    )


def _judge_discard_queries(
    bad: Bad, notes: list[str], tally: Tally, by_entity: dict[str, list[Event]], sessions: list[Event]
) -> None:
    """A session the shadow server opens to the primary while it holds the primary's shadow must query discard
    status (SR-054); held = HARECEIVE on the shadow before the session and no HADISCARD before it. Judged: a Send
    session that queried, or a closed one opened while holding the peer's shadow; skipped: a session without the
    peer's name, or one the log ends inside."""
    unnamed = 0
    for s in sessions:
        if s.attrs.get("direction") != "send" or s.attrs.get("not_applicable"):
            continue  # a Send session that never got an answer opened no session (counted at import, issue 31)
        if s.attrs.get("discard_queries"):
            tally.judge(R.SMTP_SHADOW_SESSION_DISCARD_QUERY)
            continue
        peer, shadow = s.attrs.get("peer", ""), s.node
        if not peer:
            tally.skip(R.SMTP_SHADOW_SESSION_DISCARD_QUERY, "a Send session without the peer's name")
            unnamed += 1
            continue
        if not s.attrs.get("closed"):
            tally.skip(R.SMTP_SHADOW_SESSION_DISCARD_QUERY, "the log ends inside the session")
            continue  # the log ends inside the session: the query may still come
        for entity, evs in sorted(by_entity.items()):
            if entity.split("/", 1)[0] != peer:
                continue
            held = [e for e in evs if e.kind == "HARECEIVE" and e.node == shadow and e.ts_ms <= s.ts_ms]
            gone = [e for e in evs if e.kind == "HADISCARD" and e.node == shadow and e.ts_ms <= s.ts_ms]
            if held and not gone:
                tally.judge(R.SMTP_SHADOW_SESSION_DISCARD_QUERY)
                bad(
                    R.SMTP_SHADOW_SESSION_DISCARD_QUERY,
                    entity,
                    [s, held[0]],
                    f"{shadow} opened an SMTP session to {peer} ({_where(s)} .. {s.attrs.get('last_line', '?')}) "
                    f"while holding the shadow of {peer}'s message (HARECEIVE at {_where(held[0])}), and the "
                    "session issued no XQDISCARD/XQUERYDISCARD",
                )
                break
    if unnamed:
        notes.append(
            f"{unnamed} SMTP Send session(s) without the peer's name (no EHLO answer logged): the discard "
            "query (SR-054) is not judged for them"
        )


_REJECT = re.compile(r"\b4\d\d[ -]4\.\d{1,3}\.\d{1,3}\b")


def _statuses(e: Event) -> list[str]:
    texts = list(e.attrs.get("recipient_status", []))
    if e.attrs.get("source_context"):
        texts.append(e.attrs["source_context"])
    return [t for t in texts if _REJECT.search(t)]


def judge_failure(
    bad: Bad, notes: list[str], tally: Tally, config: tuple[bool, bool], entity: str, f: Event, prim: list[Event]
) -> None:
    """After the primary's HAREDIRECTFAIL, from its tracking rows: the configured accept or reject (SR-019,
    SR-020, SR-021; interpretation SR-I28). `config`: (RejectMessageOnShadowFailure, AcceptRejectionVariant)."""
    reject, variant = config
    after = [e for e in prim if e.seq > f.seq and e.kind != "HAREDIRECT"]
    rejections = [(e, t) for e in after for t in _statuses(e)]
    if not reject:
        tally.judge(R.SHADOW_FAILURE_ACCEPT)
        for e, text in rejections[:1]:
            bad(
                R.SHADOW_FAILURE_ACCEPT,
                entity,
                [f, e],
                f"RejectMessageOnShadowFailure is false, yet after the failed shadow the message was refused "
                f"({text!r}) instead of accepted without redundancy",
                observed=text,
            )
        return
    hops = [e for e in after if e.kind in NEXT_HOP]
    tally.judge(R.SHADOW_FAILURE_REJECT, max(1, len(hops)))
    for s in hops:
        bad(
            R.SHADOW_FAILURE_REJECT,
            entity,
            [f, s],
            f"RejectMessageOnShadowFailure is true, yet the message without a shadow went on ({s.kind})",
        )
    for e, text in rejections:
        tally.judge(R.REJECTION_TEXT)
        if not ("451 4.4.0" in text or (variant and "450 4.5.1" in text)):
            bad(
                R.REJECTION_TEXT,
                entity,
                [f, e],
                f"the rejection reads {text!r}, not '451 4.4.0 Message failed to be made redundant'",
                observed=text,
                expected=["451 4.4.0", *(["450 4.5.1"] if variant else [])],
            )
    if not rejections and not hops:
        tally.skip(R.REJECTION_TEXT, "the rejection is given in the SMTP session, not in the tracking log")
        notes.append(
            f"{entity}: HAREDIRECTFAIL at {_where(f)}: the rejection is given in the SMTP session and "
            "is not in the tracking log (SR-I28)"
        )
