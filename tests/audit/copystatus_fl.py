"""The copy-status export fixture: `python3 -m tests.audit.copystatus_fl` writes
tests/audit/data/copystatus/two-databases-fl.txt as Windows PowerShell 5.1 writes
`Get-MailboxDatabaseCopyStatus * | Format-List > file`: UTF-16 LE with a byte-order mark, CRLF, blank lines around
records, property names padded to the longest, values wrapped at 80 columns. The property names and their order
are those Exchange 2016 prints (FIELD-NOTES, "The real formats a user has"); servers, GUIDs and numbers are
invented (`contoso.com`)."""

from __future__ import annotations

from pathlib import Path

EXPORT = Path(__file__).parent / "data" / "copystatus" / "two-databases-fl.txt"


def copy(
    db: str, srv: str, active: str, status: str, pref: int, cq: int, rq: int, ci: str, gen: int, guid: str
) -> list[tuple[str, str]]:
    act = srv if active == srv else active
    return [
        ("RunspaceId", "7f0c2a3e-5b1d-4c9e-8a57-2f6d0e1b9c44"),
        ("Identity", f"{db}\\{srv}"),
        ("Id", f"{db}\\{srv}"),
        ("Name", f"{db}\\{srv}"),
        ("DatabaseName", db),
        ("Status", status),
        ("InstanceStartTime", "3/28/2023 2:11:40 AM"),
        ("LastStatusTransitionTime", "" if status == "Mounted" else "3/28/2023 2:12:05 AM"),
        ("MailboxServer", srv),
        ("ActiveDatabaseCopy", active.lower()),
        ("ActiveCopy", "True" if act == active and srv == active else "False"),
        ("ActivationPreference", str(pref)),
        ("StatusRetrievedTime", "4/2/2023 6:54:02 PM"),
        ("WorkerProcessId", "7312" if srv == active else ""),
        ("ActivationSuspended", "False"),
        ("ActionInitiator", "Unknown"),
        ("ErrorMessage", ""),
        ("ErrorEventId", ""),
        ("ExtendedErrorInfo", ""),
        ("SuspendComment", ""),
        ("RequiredLogsPresent", ""),
        ("SinglePageRestore", "0"),
        ("ContentIndexState", ci),
        ("ContentIndexErrorMessage", ""),
        ("ContentIndexErrorCode", ""),
        ("ContentIndexVersion", "1"),
        ("ContentIndexBacklog", "0"),
        ("ContentIndexRetryQueueSize", "0"),
        ("ContentIndexMailboxesToCrawl", ""),
        ("ContentIndexSeedingPercent", ""),
        ("ContentIndexSeedingSource", ""),
        ("CopyQueueLength", str(cq)),
        ("ReplayQueueLength", str(rq)),
        ("ReplaySuspend", "False"),
        ("ResumeBlocked", "False"),
        ("ReseedBlocked", "False"),
        ("MinimumSupportedDatabaseSchemaVersion", "0.121"),
        ("MaximumSupportedDatabaseSchemaVersion", "0.132"),
        ("RequestedDatabaseSchemaVersion", "0.132"),
        ("LatestAvailableLogTime", "4/2/2023 6:54:01 PM"),
        ("LastCopyNotificationedLogTime", "4/2/2023 6:54:01 PM"),
        ("LastCopiedLogTime", "" if srv == active else "4/2/2023 6:53:59 PM"),
        ("LastInspectedLogTime", "" if srv == active else "4/2/2023 6:53:59 PM"),
        ("LastReplayedLogTime", "" if srv == active else "4/2/2023 6:53:58 PM"),
        ("LastLogGenerated", str(gen)),
        ("LastLogCopyNotified", str(gen)),
        ("LastLogCopied", "0" if srv == active else str(gen - cq)),
        ("LastLogInspected", "0" if srv == active else str(gen - cq)),
        ("LastLogReplayed", "0" if srv == active else str(gen - cq - rq)),
        ("LowestLogPresent", str(gen - 1200)),
        ("LastLogInfoIsStale", "False"),
        ("LastLogInfoFromCopierTime", "4/2/2023 6:54:01 PM"),
        ("LastLogInfoFromClusterTime", "4/2/2023 6:54:00 PM"),
        ("LastLogInfoFromClusterGen", str(gen)),
        ("LogsReplayedSinceInstanceStart", "0" if srv == active else "8231"),
        ("LogsCopiedSinceInstanceStart", "0" if srv == active else "8233"),
        ("LatestFullBackupTime", "4/1/2023 11:00:12 PM"),
        ("LatestIncrementalBackupTime", ""),
        ("LatestDifferentialBackupTime", ""),
        ("LatestCopyBackupTime", ""),
        ("SnapshotBackup", "True"),
        ("SnapshotLatestFullBackup", "True"),
        ("LogReplayQueueIncreasing", "False"),
        ("LogCopyQueueIncreasing", "False"),
        (
            "ReplayLagStatus",
            ""
            if srv == active
            else "Enabled:False; PlayDownReason:None; ReplaySuspendReason:None; Percentage:0; Configured:00:00:00; "
            "MaxDelay:1.00:00:00; Actual:00:00:00",
        ),
        ("DatabaseSeedStatus", ""),
        ("OutstandingDumpsterRequests", "{}"),
        ("OutgoingConnections", "" if srv != active else "{EX02, EX03}"),
        ("IncomingLogCopyingNetwork", "" if srv == active else f"{{{active}.contoso.com,MapiDagNetwork,TCP}}"),
        ("SeedingNetwork", ""),
        ("DiskFreeSpacePercent", "61"),
        ("DiskFreeSpace", "305.2 GB (327,709,335,552 bytes)"),
        ("DiskTotalSpace", "499.9 GB (536,737,345,536 bytes)"),
        ("ExchangeVolumeMountPoint", ""),
        ("DatabaseVolumeMountPoint", "E:\\"),
        ("DatabaseVolumeName", f"\\\\?\\Volume{{{guid}}}\\"),
        ("DatabasePathIsOnMountedFolder", "False"),
        ("LogVolumeMountPoint", "F:\\"),
        ("LogVolumeName", f"\\\\?\\Volume{{{guid[:-1]}7}}\\"),
        ("LogPathIsOnMountedFolder", "False"),
        ("LastDatabaseVolumeName", ""),
        ("LastDatabaseVolumeNameTransitionTime", ""),
        ("VolumeInfoError", ""),
        ("Activating", "False"),
        ("Seeding", "False"),
        ("Suspended", "False"),
        ("IsValid", "True"),
        ("ObjectState", "New"),
    ]


COPIES = [
    copy("DB01", "EX01", "EX01", "Mounted", 1, 0, 0, "Healthy", 48213, "4a1f2c3d-0d6e-4c41-9e1a-6b0f3e2d1a01"),
    copy("DB01", "EX02", "EX01", "Healthy", 2, 2, 1, "Healthy", 48213, "4a1f2c3d-0d6e-4c41-9e1a-6b0f3e2d1a02"),
    copy("DB01", "EX03", "EX01", "Healthy", 3, 0, 0, "Healthy", 48213, "4a1f2c3d-0d6e-4c41-9e1a-6b0f3e2d1a03"),
    copy("DB02", "EX02", "EX02", "Mounted", 1, 0, 0, "Healthy", 9917, "4a1f2c3d-0d6e-4c41-9e1a-6b0f3e2d1a04"),
]
WIDTH = max(len(k) for c in COPIES for k, _ in c)


def block(c: list[tuple[str, str]]) -> list[str]:
    out = []
    room = 80 - 1 - (WIDTH + 3)  # Out-File's 80 columns, less one, less the "name : " column
    for k, v in c:
        head = f"{k:<{WIDTH}} : "
        parts = [v[i : i + room] for i in range(0, len(v), room)] or [""]
        out.append(head + parts[0])
        out += [" " * len(head) + p for p in parts[1:]]
    return out


def export_bytes() -> bytes:
    lines = ["", ""]
    for c in COPIES:
        lines += [*block(c), ""]
    lines += [""]
    return b"\xff\xfe" + ("\r\n".join(lines) + "\r\n").encode("utf-16-le")


if __name__ == "__main__":
    EXPORT.parent.mkdir(parents=True, exist_ok=True)
    EXPORT.write_bytes(export_bytes())
