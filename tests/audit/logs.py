"""Small message tracking logs written to the published formats (FIELD-NOTES, "The real formats a user has")."""

from __future__ import annotations

from pathlib import Path

FIELDS_2016 = [
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
    "transport-traffic-type",
    "log-id",
    "schema-version",
]
FIELDS_2013 = FIELDS_2016[:27]
FIELDS_2010 = [f for f in FIELDS_2013 if f != "network-message-id"]
FIELDS_2007 = FIELDS_2010[:21]  # ends at message-info: no directionality .. custom-data
LAYOUTS = {"2007": FIELDS_2007, "2010": FIELDS_2010, "2013": FIELDS_2013, "2016": FIELDS_2016}
VERSIONS = {"2007": "08.03.0083.006", "2010": "14.03.0513.000", "2013": "15.00.1497.002", "2016": "15.01.2507.023"}


def cell(value: str) -> str:
    if any(c in value for c in ',"\n'):
        return '"' + value.replace('"', '""') + '"'
    return value


def line(layout: str, **cells: str) -> str:
    cols = LAYOUTS[layout]
    data = {k.replace("_", "-"): v for k, v in cells.items()}
    if layout == "2007":  # 2007 has no custom-data (S:Replication=...) column: those cells are not written
        data = {k: v for k, v in data.items() if k in cols}
    unknown = set(data) - set(cols)
    assert not unknown, unknown
    return ",".join(cell(data.get(c, "")) for c in cols)


def text(layout: str, lines: list[str], *, bom: bool = False, crlf: bool = False, header: bool = True) -> bytes:
    head = [
        "#Software: Microsoft Exchange Server",
        f"#Version: {VERSIONS[layout]}",
        "#Log-type: Message Tracking Log",
        "#Date: 2023-04-02T00:00:00.000Z",
        "#Fields: " + ",".join(LAYOUTS[layout]),
    ]
    nl = "\r\n" if crlf else "\n"
    body = nl.join((head if header else []) + lines) + nl
    return (b"\xef\xbb\xbf" if bom else b"") + body.encode("utf-8")


def write(path: Path, layout: str, lines: list[str], **kw: bool) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text(layout, lines, **kw))
    return path


def t(ms: int) -> str:
    """A date-time `ms` milliseconds after 2023-04-02T18:54:00Z."""
    s, m = divmod(ms, 1000)
    mm, ss = divmod(s, 60)
    return f"2023-04-02T18:{54 + mm:02d}:{ss:02d}.{m:03d}Z"


MID = "<m1@contoso.com>"


def redirect_context(shadow: str, iid: str) -> str:
    return f"{shadow}=250 2.6.0 {MID} [InternalId={iid}, Hostname={shadow}] Queued mail for redundancy"


def flow(
    layout: str = "2016",
    *,
    send_at: int = 100,
    discard_at: int = 200,
    receive_at: int = 3,
    redirect_at: int = 5,
    shadow: str = "mbx2.contoso.com",
    shadow_skew: int = 0,
    hop: str = "SEND",
) -> tuple[list[str], list[str]]:
    """A full HAREDIRECT -> HARECEIVE -> HADISCARD flow: (lines of mbx1, the primary; lines of the shadow)."""
    extra = {"network_message_id": "a1b2c3"} if layout not in ("2007", "2010") else {}
    p = [
        line(
            layout,
            date_time=t(0),
            client_hostname="client.fabrikam.com",
            server_hostname="MBX1",
            source="SMTP",
            event_id="RECEIVE",
            internal_message_id="101",
            message_id=MID,
            recipient_address="bob@contoso.com",
            sender_address="al@fabrikam.com",
            custom_data="S:Replication=MBX2",
            **extra,
        ),
        line(
            layout,
            date_time=t(redirect_at),
            server_hostname="mbx1.contoso.com",
            source_context=redirect_context(shadow, "555"),
            source="SMTP",
            event_id="HAREDIRECT",
            internal_message_id="101",
            message_id=MID,
            recipient_address="bob@contoso.com",
            **extra,
        ),
    ]
    if hop == "SEND":
        p.append(
            line(
                layout,
                date_time=t(send_at),
                client_hostname="MBX1.contoso.com",
                server_hostname="edge.fabrikam.com",
                source="SMTP",
                event_id="SEND",
                internal_message_id="101",
                message_id=MID,
                recipient_address="bob@contoso.com",
                recipient_status="250 2.6.0 Queued mail for delivery",
                **extra,
            )
        )
    else:
        p.append(
            line(
                layout,
                date_time=t(send_at),
                server_hostname="MBX1",
                source="STOREDRIVER",
                event_id="DELIVER",
                internal_message_id="101",
                message_id=MID,
                recipient_address="bob@contoso.com",
                **extra,
            )
        )
    s = [
        line(
            layout,
            date_time=t(receive_at + shadow_skew),
            client_hostname="MBX1.contoso.com",
            server_hostname=shadow,
            source_context="08DB3390B4D0B1C2",
            source="SMTP",
            event_id="HARECEIVE",
            internal_message_id="555",
            message_id=MID,
            custom_data="S:DeliveryPriority=Low;S:PrioritizationReason=ShadowRedundancy",
            **extra,
        ),
        line(
            layout,
            date_time=t(discard_at + shadow_skew),
            server_hostname=shadow,
            source_context="ExplicitlyDiscarded;08DB3390B4D0B1C2",
            source="REDUNDANCY",
            event_id="HADISCARD",
            internal_message_id="555",
            message_id=MID,
            **extra,
        ),
    ]
    return p, s
