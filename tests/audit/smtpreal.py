"""SMTP protocol-log rows as real organisations' logs have them (issue 31), anonymised, in the shape of
`tests/audit/smtplogs.py` (whose README gives the provenance of the line shapes): header-less rows as SIEM
exports and forum posts carry them, a Send session's rows written before the connection opens (empty local
endpoint, `attempting to connect`), a Send to a Postfix relay (`250 ok <epoch> <queue id>`), Internet-facing
connectors greeting with one public name, and one session id seen from several remote endpoints.
"""

from __future__ import annotations

from tests.audit.smtplogs import row


def send_with_preconnect(
    ehlo: str = "MBX1.contoso.com", sid: str = "08DB33A1C0FFEE30", at: int = 6000
) -> list[tuple[int, str]]:
    """mbx1's Send log of a session to mbx2 (a heartbeat) whose first row precedes the connection."""
    c, rem = "Intra-Organization SMTP Send Connector", "10.0.0.12:25"
    loc = "10.0.0.11:41011"

    def r(ms: int, seq: int, ev: str, data: str = "", ctx: str = "", local: str = loc) -> tuple[int, str]:
        return row(at + ms, c, sid, seq, local, rem, ev, data, ctx)

    return [
        r(0, 0, "*", "", "attempting to connect", local=""),
        r(2, 1, "+"),
        r(3, 2, "<", "220 MBX2.contoso.com Microsoft ESMTP MAIL Service ready at Sun, 2 Apr 2023 18:54:06 +0000"),
        r(4, 3, ">", f"EHLO {ehlo}"),
        r(5, 4, "<", "250-MBX2.contoso.com Hello [10.0.0.11] SIZE PIPELINING XSHADOWREQUEST"),
        r(6, 5, ">", "QUIT"),
        r(7, 6, "<", "221 2.0.0 Service closing transmission channel"),
        r(8, 7, "-", "", "Local"),
    ]


def send_to_postfix(at: int = 7000, *, answered: bool = True) -> list[tuple[int, str]]:
    """mbx1 delivers a message to a Postfix relay outside the organisation (no InternalId in its answer)."""
    c, sid, rem, loc = "Outbound to Internet", "08DB33A1C0FFEE40", "198.51.100.25:25", "10.0.0.11:41200"

    def r(ms: int, seq: int, ev: str, data: str = "", ctx: str = "", local: str = loc) -> tuple[int, str]:
        return row(at + ms, c, sid, seq, local, rem, ev, data, ctx)

    out = [r(0, 0, "*", "", "attempting to connect", local="")]
    if not answered:
        return [*out, r(21_000, 1, "*", "", "Failed to connect. Winsock error code: 10060", local="")]
    return [
        *out,
        r(20, 1, "+"),
        r(40, 2, "<", "220 relay.fabrikam.example ESMTP Postfix"),
        r(41, 3, ">", "EHLO mail.contoso.com"),
        r(60, 4, "<", "250-relay.fabrikam.example PIPELINING SIZE 10240000 VRFY ETRN STARTTLS 8BITMIME DSN"),
        r(61, 5, ">", "MAIL FROM:<bob@contoso.com> SIZE=2048"),
        r(61, 6, ">", "RCPT TO:<carol@fabrikam.example>"),
        r(62, 7, ">", "BDAT 2048 LAST"),
        r(80, 8, "<", "250 2.1.0 Ok"),
        r(80, 9, "<", "250 2.1.5 Ok"),
        r(95, 10, "<", "250 ok 1666169082 30910"),
        r(96, 11, ">", "QUIT"),
        r(97, 12, "<", "221 2.0.0 Bye"),
        r(98, 13, "-", "", "Local"),
    ]


def frontend_greeting(server: str, banner: str, sid: str, at: int = 8000) -> list[tuple[int, str]]:
    """A Receive session on an Internet-facing connector that greets with a public name."""
    c, loc, rem = f"{server}\\Default Frontend {server}", "10.0.0.21:25", "203.0.113.77:50123"
    return [
        row(at, c, sid, 0, loc, rem, "+"),
        row(at + 1, c, sid, 1, loc, rem, ">", f"220 {banner} Microsoft ESMTP MAIL Service ready"),
        row(at + 2, c, sid, 2, loc, rem, "<", "EHLO scanner.example"),
        row(at + 3, c, sid, 3, loc, rem, "-", "", "Remote(SocketError)"),
    ]


def one_id_many_endpoints(sid: str = "08DB33A1C0FFEE50", at: int = 9000) -> list[list[tuple[int, str]]]:
    """Six short Receive sessions logged under one session id from six remote endpoints, as two files."""
    c, loc = "MBX1\\Default MBX1", "10.0.0.11:25"
    files: list[list[tuple[int, str]]] = [[], []]
    for i in range(6):
        rem = f"192.0.2.{10 + i}:{50000 + i}"
        ms = at + 100 * i
        files[i // 3] += [
            row(ms, c, sid, 0, loc, rem, "+"),
            row(ms + 1, c, sid, 1, loc, rem, ">", "220 MBX1.contoso.com Microsoft ESMTP MAIL Service ready"),
            row(ms + 2, c, sid, 2, loc, rem, "-", "", "Remote(SocketError)"),
        ]
    return files


def headerless(rows: list[tuple[int, str]]) -> bytes:
    """Rows as a SIEM exports them: no header block, LF line ends."""
    return "".join(line + "\n" for _, line in sorted(rows, key=lambda r: r[0])).encode("utf-8")
