"""SMTP Receive/Send protocol logs written to the published format, with the quirks of real files.

Provenance of the line shapes: `tests/audit/data/README.md`. The sessions follow `logs.flow`: mbx1 receives
`<m1@contoso.com>` from client.fabrikam.com (internal-message-id 101), makes the shadow on mbx2
(InternalId 555) through a shadow session (XSHADOWREQUEST), then acknowledges the sender; mbx2 later opens a
session to mbx1 (heartbeat) that queries discard status (XQDISCARD).
"""

from __future__ import annotations

from pathlib import Path

from tests.audit.logs import MID

FIELDS = "date-time,connector-id,session-id,sequence-number,local-endpoint,remote-endpoint,event,data,context"
_BASE_MS = (18 * 3600 + 54 * 60) * 1000  # 18:54:00.000 on 2023-04-02, the `logs.t` origin


def t(ms: int) -> str:
    """A date-time `ms` milliseconds after 2023-04-02T18:54:00Z (negative allowed)."""
    total = _BASE_MS + ms
    h, rest = divmod(total, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"2023-04-02T{h:02d}:{m:02d}:{s:02d}.{milli:03d}Z"


def cell(value: str) -> str:
    if any(c in value for c in ',"'):
        return '"' + value.replace('"', '""') + '"'
    return value


def row(
    ms: int, connector: str, session: str, seq: int, local: str, remote: str, ev: str, data: str = "", ctx: str = ""
) -> tuple[int, str]:
    return ms, ",".join([t(ms), cell(connector), session, str(seq), local, remote, ev, cell(data), cell(ctx)])


def text(kind: str, rows: list[tuple[int, str]], *, crlf: bool = True) -> bytes:
    head = [
        "#Software: Microsoft Exchange Server",
        "#Version: 15.1.2507.23",
        f"#Log-type: SMTP {kind} Protocol Log",
        f"#Date: {t(-60_000)}",
        f"#Fields: {FIELDS}",
    ]
    body = [line for _, line in sorted(rows, key=lambda r: r[0])]  # sessions interleave by time
    nl = "\r\n" if crlf else "\n"
    return (nl.join(head + body) + nl).encode("utf-8")


def receive_session(ack_at: int = 20, *, code: str = "250", internal_id: str = "101") -> list[tuple[int, str]]:
    """mbx1's Receive log of the sender's session (08DB33A1C0FFEE01), DATA, and an interleaved second session."""
    c, sid, loc, rem = "MBX1\\Default MBX1", "08DB33A1C0FFEE01", "10.0.0.11:25", "203.0.113.5:51544"

    def r(ms: int, seq: int, ev: str, data: str = "", ctx: str = "") -> tuple[int, str]:
        return row(ms, c, sid, seq, loc, rem, ev, data, ctx)

    if code == "250":
        reply = f"250 2.6.0 {MID} [InternalId={internal_id}, Hostname=MBX1.contoso.com] Queued mail for delivery"
    else:
        reply = "451 4.4.0 Message failed to be made redundant"
    out = [
        r(-50, 0, "+"),
        r(-50, 1, ">", "220 MBX1.contoso.com Microsoft ESMTP MAIL Service ready at Sun, 2 Apr 2023 18:53:59 +0000"),
        r(-45, 2, "<", "EHLO client.fabrikam.com"),
        r(
            -45,
            3,
            ">",
            "250  MBX1.contoso.com Hello [203.0.113.5] SIZE 37748736 PIPELINING DSN ENHANCEDSTATUSCODES "
            "STARTTLS X-ANONYMOUSTLS AUTH NTLM X-EXPS GSSAPI NTLM 8BITMIME BINARYMIME CHUNKING XRDST",
        ),
        r(
            -44,
            4,
            "*",
            "SMTPSubmit SMTPAcceptAnySender SMTPAcceptAuthoritativeDomainSender AcceptRoutingHeaders",
            "Set Session Permissions",
        ),
        r(-30, 5, "<", "MAIL FROM:<al@fabrikam.com> SIZE=2048"),
        r(-30, 6, "<", "RCPT TO:<bob@contoso.com>"),
        r(-29, 7, ">", "250 2.1.0 Sender OK"),
        r(-29, 8, ">", "250 2.1.5 Recipient OK"),
        r(-20, 9, "<", "DATA"),
        r(-20, 10, ">", "354 Start mail input; end with <CRLF>.<CRLF>"),
        r(-2, 11, "*", "", "TLS protocol SP_PROT_TLS1_2_SERVER negotiation succeeded, using bulk encryption"),
        r(ack_at, 12, ">", reply),
        r(ack_at + 3, 13, "<", "QUIT"),
        r(ack_at + 3, 14, ">", "221 2.0.0 Service closing transmission channel"),
        r(ack_at + 3, 15, "-", "", "Local"),
    ]
    other = "08DB33A1C0FFEE02"
    out += [  # an unrelated session that only greets: its lines interleave with the first one's
        row(-40, c, other, 0, loc, "198.51.100.7:40001", "+"),
        row(
            -40, c, other, 1, loc, "198.51.100.7:40001", ">", "220 MBX1.contoso.com Microsoft ESMTP MAIL Service ready"
        ),
        row(-10, c, other, 2, loc, "198.51.100.7:40001", "-", "", "Remote(SocketError)"),
    ]
    return out


def shadow_session(reply_at: int = 4, *, announce: bool = True, internal_id: str = "555") -> list[tuple[int, str]]:
    """mbx1's Send log of the shadow session to mbx2 (pipelined MAIL/RCPT/BDAT)."""
    c, sid, loc, rem = "Intra-Organization SMTP Send Connector", "08DB33A1C0FFEE10", "10.0.0.11:40123", "10.0.0.12:2525"

    def r(ms: int, seq: int, ev: str, data: str = "", ctx: str = "") -> tuple[int, str]:
        return row(ms, c, sid, seq, loc, rem, ev, data, ctx)

    out = [
        r(-15, 0, "+"),
        r(-14, 1, "<", "220 MBX2.contoso.com Microsoft ESMTP MAIL Service ready at Sun, 2 Apr 2023 18:53:59 +0000"),
        r(-14, 2, ">", "EHLO MBX1.contoso.com"),
        r(
            -13,
            3,
            "<",
            "250  MBX2.contoso.com Hello [10.0.0.11] SIZE PIPELINING DSN ENHANCEDSTATUSCODES STARTTLS "
            "X-ANONYMOUSTLS AUTH NTLM X-EXPS GSSAPI NTLM 8BITMIME BINARYMIME CHUNKING XEXCH50 XRDST XSHADOWREQUEST",
        ),
    ]
    seq = 4
    if announce:
        out += [
            r(-12, 4, ">", "XSHADOWREQUEST MBX1.contoso.com 8b2c0d6e-5f41-4a0e-9d7c-2f1e0a3b4c5d"),
            r(-11, 5, "<", "250 4f6a1c2e-0d3b-4e8f-a9b7-6c5d4e3f2a1b"),
        ]
        seq = 6
    out += [
        r(-10, seq, ">", "MAIL FROM:<al@fabrikam.com> SIZE=2048"),
        r(-10, seq + 1, ">", "RCPT TO:<bob@contoso.com>"),
        r(-10, seq + 2, ">", "BDAT 2048 LAST"),
        r(-9, seq + 3, "<", "250 2.1.0 Sender OK"),
        r(-9, seq + 4, "<", "250 2.1.5 Recipient OK"),
        r(
            reply_at,
            seq + 5,
            "<",
            f"250 2.6.0 {MID} [InternalId={internal_id}, Hostname=MBX2.contoso.com] Queued mail for redundancy",
        ),
        r(reply_at + 1, seq + 6, ">", "QUIT"),
        r(reply_at + 1, seq + 7, "<", "221 2.0.0 Service closing transmission channel"),
        r(reply_at + 2, seq + 8, "-", "", "Local"),
    ]
    return out


def heartbeat_session(at: int = 3000, *, query: bool = True) -> list[tuple[int, str]]:
    """mbx2's Send log of a session to mbx1 (the shadow's heartbeat), with or without XQDISCARD."""
    c, sid, loc, rem = "Intra-Organization SMTP Send Connector", "08DB33A1C0FFEE20", "10.0.0.12:40999", "10.0.0.11:2525"

    def r(ms: int, seq: int, ev: str, data: str = "", ctx: str = "") -> tuple[int, str]:
        return row(ms, c, sid, seq, loc, rem, ev, data, ctx)

    out = [
        r(at, 0, "+"),
        r(at, 1, "<", "220 MBX1.contoso.com Microsoft ESMTP MAIL Service ready at Sun, 2 Apr 2023 18:54:03 +0000"),
        r(at + 1, 2, ">", "EHLO MBX2.contoso.com"),
        r(at + 1, 3, "<", "250-MBX1.contoso.com Hello [10.0.0.12] SIZE PIPELINING XSHADOWREQUEST"),
    ]
    if query:
        out += [r(at + 2, 4, ">", "XQDISCARD 100"), r(at + 3, 5, "<", "251 OK, no discard events")]
    out += [r(at + 4, 6, ">", "QUIT"), r(at + 4, 7, "<", "221 2.0.0 Service closing transmission channel")]
    out += [r(at + 5, 8, "-", "", "Local")]
    return out


def write_pair(
    root: Path,
    *,
    ack_at: int = 20,
    shadow_reply_at: int = 4,
    announce: bool = True,
    heartbeat_query: bool = True,
    recv_internal_id: str = "101",
) -> None:
    """Protocol logs next to the tracking logs of `logs.flow`: mbx1's RECV and SEND, mbx2's SEND."""
    recv = receive_session(ack_at, internal_id=recv_internal_id)
    (root / "mbx1").mkdir(parents=True, exist_ok=True)
    (root / "mbx2").mkdir(parents=True, exist_ok=True)
    (root / "mbx1" / "RECV2023040218-1.LOG").write_bytes(text("Receive", recv))
    (root / "mbx1" / "SEND2023040218-1.LOG").write_bytes(
        text("Send", shadow_session(shadow_reply_at, announce=announce))
    )
    (root / "mbx2" / "SEND2023040218-1.LOG").write_bytes(text("Send", heartbeat_session(query=heartbeat_query)))


def write_sample(root: Path, *, ack_at: int = 20) -> None:
    """The shipped sample (`tests/audit/data/`): mbx1's tracking log with its header, mbx2's rows as a SIEM
    exports them (no header, any name), both servers' protocol logs, and files the import does not read."""
    from tests.audit import logs

    p, s = logs.flow(send_at=5000, discard_at=9000)
    logs.write(root / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", p, bom=True, crlf=True)
    (root / "siem").mkdir(parents=True, exist_ok=True)
    (root / "siem" / "mbx2-msgtrk-export.csv").write_bytes(logs.text("2016", s, header=False))
    write_pair(root, ack_at=ack_at)
    (root / "README-from-the-customer.txt").write_text("Logs collected 2023-04-03 from MBX1, MBX2 and the SIEM.\n")


if __name__ == "__main__":  # regenerate the shipped sample: python3 -m tests.audit.smtplogs
    here = Path(__file__).parent / "data"
    write_sample(here / "pair")
    write_sample(here / "pair-early-ack", ack_at=2)
