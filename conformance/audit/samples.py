"""Sample inputs for every command of the README's "Audit real logs" block (`haconform samples`).

Written deterministically into `traces/samples/audit/` (shipped with the package):
- `logs/clean/` and `logs/violation/`: message tracking logs of two servers of one DAG, mbx1 (primary, 2016
  layout) and mbx2 (shadow, 2013 layout), each holding three messages that go RECEIVE -> HAREDIRECT on the
  primary, HARECEIVE on the shadow, the next hop (SEND to an edge, or DELIVER to a mailbox) on the primary,
  HADISCARD on the shadow. In `violation/` the shadow discards message 2 before the primary's next hop
  (SR-052, seed 000 "discard status"); everything else is the same. The formats are the published ones
  (FIELD-NOTES, "The real formats a user has"; the test helpers `tests/audit/logs.py` write the same);
- `status.csv`, `status.txt`, `status.json`: one `Get-MailboxDatabaseCopyStatus` export of database DB01 in
  its three forms (`Export-Csv`, `Format-List`, `ConvertTo-Json`), for `import copystatus` and `explain`;
- `deploy.toml` (valid) and `deploy-broken.toml` (a shadow heartbeat slower than the resubmit window allows,
  constraint `sr.heartbeat_below_resubmit`), for `validate-config`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conformance.audit.msgtrk import LAYOUTS as MSGTRK_LAYOUTS

FIELDS_2016 = MSGTRK_LAYOUTS["2016/2019"]  # the importer's own layouts (conformance.audit.msgtrk)
LAYOUTS = {"2016": FIELDS_2016, "2013": MSGTRK_LAYOUTS["2013"]}
VERSIONS = {"2013": "15.00.1497.002", "2016": "15.01.2507.023"}
PRIMARY, SHADOW = "mbx1.contoso.com", "mbx2.contoso.com"
MESSAGES = 3
LATE_DISCARD = 2  # the message the shadow discards early in logs/violation/


def _cell(value: str) -> str:
    return '"' + value.replace('"', '""') + '"' if any(c in value for c in ',"\n') else value


def _line(layout: str, **cells: str) -> str:
    data = {k.replace("_", "-"): v for k, v in cells.items()}
    return ",".join(_cell(data.get(c, "")) for c in LAYOUTS[layout])


def _log(layout: str, lines: list[str]) -> bytes:
    head = [
        "#Software: Microsoft Exchange Server",
        f"#Version: {VERSIONS[layout]}",
        "#Log-type: Message Tracking Log",
        "#Date: 2023-04-02T00:00:00.000Z",
        "#Fields: " + ",".join(LAYOUTS[layout]),
    ]
    return ("\r\n".join(head + lines) + "\r\n").encode("utf-8")


def _t(ms: int) -> str:
    """A date-time `ms` milliseconds after 2023-04-02T18:54:00Z (within the hour)."""
    s, m = divmod(ms, 1000)
    mm, ss = divmod(s, 60)
    return f"2023-04-02T18:{54 + mm:02d}:{ss:02d}.{m:03d}Z"


def _message(n: int, early_discard: bool) -> tuple[list[str], list[str]]:
    """One message's rows: (on the primary, on the shadow)."""
    at, mid, iid, sid = (n - 1) * 20_000, f"<m{n}@contoso.com>", str(100 + n), str(500 + n)
    net, rcpt = {"network_message_id": f"a1b2c3{n:02d}"}, f"user{n}@contoso.com"
    hop_at, discard_at = at + 4_000, at + (2_000 if early_discard else 6_000)
    common = {"internal_message_id": iid, "message_id": mid, "recipient_address": rcpt, **net}
    redirect = f"{SHADOW}=250 2.6.0 {mid} [InternalId={sid}, Hostname={SHADOW}] Queued mail for redundancy"
    primary = [
        _line(
            "2016",
            date_time=_t(at),
            client_hostname="client.fabrikam.com",
            server_hostname="MBX1",
            source="SMTP",
            event_id="RECEIVE",
            sender_address="al@fabrikam.com",
            custom_data="S:Replication=MBX2",
            **common,
        ),
        _line(
            "2016",
            date_time=_t(at + 5),
            server_hostname=PRIMARY,
            source_context=redirect,
            source="SMTP",
            event_id="HAREDIRECT",
            **common,
        ),
    ]
    if n % 2:
        hop = {"client_hostname": "MBX1.contoso.com", "server_hostname": "edge.fabrikam.com", "source": "SMTP"}
        hop |= {"event_id": "SEND", "recipient_status": "250 2.6.0 Queued mail for delivery"}
    else:
        hop = {"server_hostname": "MBX1", "source": "STOREDRIVER", "event_id": "DELIVER"}
    primary.append(_line("2016", date_time=_t(hop_at), **hop, **common))
    shadow_common = {"internal_message_id": sid, "message_id": mid, **net}
    shadow = [
        _line(
            "2013",
            date_time=_t(at + 3),
            client_hostname="MBX1.contoso.com",
            server_hostname=SHADOW,
            source_context=f"08DB3390B4D0B1C{n}",
            source="SMTP",
            event_id="HARECEIVE",
            custom_data="S:DeliveryPriority=Low;S:PrioritizationReason=ShadowRedundancy",
            **shadow_common,
        ),
        _line(
            "2013",
            date_time=_t(discard_at),
            server_hostname=SHADOW,
            source_context=f"ExplicitlyDiscarded;08DB3390B4D0B1C{n}",
            source="REDUNDANCY",
            event_id="HADISCARD",
            **shadow_common,
        ),
    ]
    return primary, shadow


def write_logs(directory: Path, *, violation: bool) -> list[Path]:
    """The two servers' logs, rows of each server in time order."""
    primary: list[tuple[str, str]] = []
    shadow: list[tuple[str, str]] = []
    for n in range(1, MESSAGES + 1):
        p, s = _message(n, violation and n == LATE_DISCARD)
        primary += [(row.split(",", 1)[0], row) for row in p]
        shadow += [(row.split(",", 1)[0], row) for row in s]
    out = []
    for server, layout, rows, name in (
        ("mbx1", "2016", primary, "MSGTRK2023040218-1.LOG"),
        ("mbx2", "2013", shadow, "MSGTRKMS2023040218-1.LOG"),
    ):
        path = directory / server / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_log(layout, [row for _, row in sorted(rows, key=lambda r: r[0])]))
        out.append(path)
    return out


COPIES = [  # DB01 on three servers: MBX1 mounted; MBX3 has the shortest copy queue of the others
    ("MBX1", "Mounted", 0, 0, 1, "02.04.2023 18:54:01"),
    ("MBX2", "Healthy", 4, 2, 2, "02.04.2023 18:53:59"),
    ("MBX3", "Healthy", 1, 0, 3, "02.04.2023 18:54:00"),
]


def copy_records() -> list[dict[str, object]]:
    return [
        {
            "Name": f"DB01\\{server}",
            "Status": status,
            "CopyQueueLength": cq,
            "ReplayQueueLength": rq,
            "ActivationPreference": pref,
            "ContentIndexState": "Healthy",
            "LastInspectedLogTime": inspected,
        }
        for server, status, cq, rq, pref, inspected in COPIES
    ]


def write_copy_status(directory: Path) -> list[Path]:
    """The export in its three forms, as PowerShell writes them (CSV with #TYPE and CRLF, JSON with a BOM)."""
    copies = copy_records()
    keys = list(copies[0])
    csv_lines = ["#TYPE Microsoft.Exchange.Management.SystemConfigurationTasks.DatabaseCopyStatusEntry"]
    csv_lines += [",".join(f'"{k}"' for k in keys)] + [",".join(f'"{c[k]}"' for k in keys) for c in copies]
    blocks = ["\n".join(f"{k:<32} : {v}" for k, v in c.items()) for c in copies]
    paths = {
        "status.csv": ("\r\n".join(csv_lines) + "\r\n").encode("utf-8"),
        "status.txt": ("\n\n" + "\n\n".join(blocks) + "\n\n").encode("utf-8"),
        "status.json": b"\xef\xbb\xbf" + json.dumps(copies, indent=2).encode("utf-8") + b"\n",
    }
    for name, data in paths.items():
        (directory / name).write_bytes(data)
    return [directory / name for name in paths]


DEPLOY = """# A deployment's parameters, grouped by mechanism (haconform validate-config; names as in the catalogue).
[sr]
ShadowHeartbeatFrequency = "{heartbeat}"
ShadowResubmitTimeSpan = "3h"
SafetyNetHoldTime = "2d"

[am]
DialGoodAvailabilityMaxLogs = 6
"""


def write_deploy(directory: Path) -> list[Path]:
    good, broken = directory / "deploy.toml", directory / "deploy-broken.toml"
    good.write_text(DEPLOY.format(heartbeat="90s"), encoding="utf-8")
    broken.write_text(DEPLOY.format(heartbeat="4h"), encoding="utf-8")
    return [good, broken]


def regenerate(out: Path) -> list[Path]:
    """Rewrite `out` (`traces/samples/audit`) with every sample; the same files each time."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    written = write_logs(out / "logs" / "clean", violation=False)
    written += write_logs(out / "logs" / "violation", violation=True)
    return written + write_copy_status(out) + write_deploy(out)
