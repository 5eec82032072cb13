"""`Get-MailboxDatabaseCopyStatus` exports -> a BCSS snapshot, and "why this copy?" (`haconform explain`).

Seed 002, "Best copy selection process" (AM-033..AM-050); FIELD-NOTES, "The real formats a user has". Three
forms are read: `Format-List` text (`Name : DB01\\MBX1` blocks separated by blank lines), CSV from
`Export-Csv` (an optional `#TYPE` line first), and `ConvertTo-Json` (one object or a list). Values that
PowerShell prints as numbers or strings are both accepted. A field BCSS needs and the export lacks gives an
error naming the field and the copy; a default is used only where the catalogue records one
(AutoDatabaseMountDial, AM-P01). ActivationPreference has no catalogue default: older versions do not print it
(it comes from `Get-MailboxDatabase`), so it must then be given with `--preference SERVER=N`. The BCSS snapshot
that `haconform import copystatus` writes (`model.am.codec.snapshot_to_json`) is read back as it is
(`--source` may name another failed copy; `--preference` is refused: the snapshot holds every preference).

The export says nothing about managed-availability health: every server gets the same (empty) health, so the
health tiers (AM-027..AM-031) cannot tell servers apart, and the explanation says so.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from model.am.bcss import Options, Selection, select
from model.am.codec import selection_to_json, snapshot_from_json, snapshot_to_json
from model.am.state import CopyState, Snapshot, Trigger
from spec.catalogue import param_default, require
from traces.textfile import read_text

require("AM-009", "AM-020", "AM-033", "AM-034", "AM-035", "AM-036", "AM-038", "AM-039", "AM-050", "AM-P01")

NEEDED = ("Name", "Status", "CopyQueueLength", "ReplayQueueLength", "ContentIndexState")


class CopyStatusError(ValueError):
    """The export cannot be used; the message names the file, the copy and the field."""


def _records_list(text: str) -> list[dict[str, str]]:
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    last = ""
    for raw in text.splitlines():
        if not raw.strip():
            if current:
                records.append(current)
                current, last = {}, ""
            continue
        key, sep, value = raw.partition(":")
        if sep and key.strip() and not raw[0].isspace() and " " not in key.strip():
            last = key.strip()
            current[last] = value.strip()
        elif last:  # a wrapped continuation line
            current[last] += " " + raw.strip()
    if current:
        records.append(current)
    return records


def parse_export(path: Path) -> list[dict[str, Any]]:
    """The copies of an export as dicts of field -> value, whichever of the three forms it is in."""
    text = read_text(path)  # UTF-8 (with or without a byte-order mark), UTF-16 LE/BE with one (traces.textfile)
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            doc = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise CopyStatusError(f"{path}: line {exc.lineno}, column {exc.colno}: not JSON: {exc.msg}") from None
        return [dict(d) for d in (doc if isinstance(doc, list) else [doc])]
    lines = [ln for ln in text.splitlines() if not ln.startswith("#TYPE")]
    first = next((ln for ln in lines if ln.strip()), "")
    if first.startswith('"') or ("," in first and ":" not in first.split(",")[0]):
        return list(csv.DictReader(io.StringIO("\n".join(lines))))
    return _records_list(text)


def _int(rec: dict[str, Any], field: str, where: str) -> int:
    value = rec.get(field)
    if value is None or value == "":
        raise CopyStatusError(f"{where}: field {field} is missing")
    try:
        return int(str(value).strip())
    except ValueError:
        raise CopyStatusError(f"{where}: field {field} is {value!r}, not a whole number") from None


def _bool(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("true", "1", "yes")


SNAPSHOT_KEYS = ("database", "source", "last_log_generated", "copies")


def read_snapshot(path: Path, doc: dict[str, Any], source: str | None) -> Snapshot:
    """A snapshot `haconform import copystatus` wrote; a missing or malformed field is named."""
    missing = [k for k in SNAPSHOT_KEYS if k not in doc]
    if missing:
        raise CopyStatusError(f"{path}: a BCSS snapshot without field(s) {', '.join(missing)}")
    try:
        snap = snapshot_from_json(doc)
    except (TypeError, ValueError, KeyError, IndexError) as exc:
        raise CopyStatusError(f"{path}: not a BCSS snapshot as `haconform import copystatus` writes: {exc}") from None
    if source is None:
        return snap
    server = next((c.server for c in snap.copies if c.server.lower() == source.lower()), None)
    if server is None:
        raise CopyStatusError(f"{path}: --source {source} is not a server holding a copy of {snap.database}")
    return Snapshot(snap.database, server, snap.last_log_generated, snap.copies, snap.dials, snap.health)


def _snapshot_doc(path: Path) -> dict[str, Any] | None:
    """The JSON object of `path` when it is a snapshot (it has a `copies` list), else None."""
    text = read_text(path).lstrip()
    if not text.startswith("{"):
        return None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError:
        return None  # parse_export names the line and column
    return doc if isinstance(doc, dict) and isinstance(doc.get("copies"), list) else None


def read_copy_status(
    path: Path, preferences: Sequence[str] = (), source: str | None = None, database: str | None = None
) -> Snapshot:
    """One database's copies as a BCSS snapshot (`model.am.state.Snapshot`): from an export in any of its
    three forms, or a snapshot `haconform import copystatus` wrote. An export of several databases needs
    `database` (`--database`); the failed source is `source`, else the copy `ActiveDatabaseCopy` names (the
    active copy may be mounted or dismounted, AM-009), else the copy whose Status is Mounted."""
    doc = _snapshot_doc(path)
    if doc is not None:
        if preferences:
            raise CopyStatusError(f"{path}: --preference does not apply to a BCSS snapshot: it holds every preference")
        if database is not None and str(doc.get("database", "")).lower() != database.lower():
            raise CopyStatusError(f"{path}: --database {database}: the snapshot is of {doc.get('database')}")
        return read_snapshot(path, doc, source)
    given = {}
    for item in preferences:
        server, sep, n = item.partition("=")
        if not sep or not n.strip().isdigit():
            raise CopyStatusError(f"--preference expects SERVER=N, got {item!r}")
        given[server.strip().lower()] = int(n)
    records = parse_export(path)
    if not records:
        raise CopyStatusError(f"{path}: no database copies found")
    db, named = _one_database(path, records, database)
    rows = [_row(path, i, rec, given) for i, rec in named]
    src = _source(path, db, rows, [(rec, i) for i, rec in named], source)
    lgen = max(r[3] for r in rows)  # copy queues are given directly: lli = lgen - CopyQueueLength (AM-I02)
    copies = tuple(
        CopyState(
            server=r[1],
            status=r[2],
            lli=lgen - r[3],
            replay_queue=r[4],
            content_index=r[5],
            preference=r[6],
            suspended=r[7],
            blocked=r[8],
        )
        for r in rows
    )
    return Snapshot(db, src, lgen, copies)


def _name(path: Path, i: int, rec: dict[str, Any]) -> tuple[str, str]:
    name = str(rec.get("Name") or "")
    if not name:
        raise CopyStatusError(
            f"{path}: copy {i}: field Name is missing (print it with Format-List *, or Select-Object it before "
            "Export-Csv)"
        )
    if "\\" not in name:
        raise CopyStatusError(f"{path}: copy {i}: field Name is {name!r}, not DATABASE\\SERVER")
    db, server = name.split("\\", 1)
    return db, server


def _one_database(
    path: Path, records: list[dict[str, Any]], database: str | None
) -> tuple[str, list[tuple[int, dict[str, Any]]]]:
    """The database to read and its records: the one named with --database, or the export's only one."""
    by_db: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for i, rec in enumerate(records, start=1):
        by_db.setdefault(_name(path, i, rec)[0], []).append((i, rec))
    names = ", ".join(sorted(by_db))
    if database is not None:
        db = next((d for d in by_db if d.lower() == database.lower()), None)
        if db is None:
            raise CopyStatusError(f"{path}: --database {database}: the export holds copies of {names} only")
        return db, by_db[db]
    if len(by_db) != 1:
        raise CopyStatusError(f"{path}: copies of {len(by_db)} databases ({names}): name one with --database NAME")
    return next(iter(by_db.items()))


def _row(path: Path, i: int, rec: dict[str, Any], given: dict[str, int]) -> tuple:
    label = f"{path}: copy {i}"
    for field in NEEDED:
        if rec.get(field) in (None, ""):
            hint = " (print it with Format-List *, or Select-Object it before Export-Csv)"
            raise CopyStatusError(f"{label}: field {field} is missing{hint}")
    db, server = _name(path, i, rec)
    label = f"{path}: copy {rec['Name']}"
    pref = rec.get("ActivationPreference")
    if pref in (None, ""):
        if server.lower() not in given:
            raise CopyStatusError(
                f"{label}: field ActivationPreference is missing and the catalogue records no default for it; "
                f"it comes from Get-MailboxDatabase (ActivationPreference): give it with --preference "
                f"{server}=N"
            )
        pref = given[server.lower()]
    return (
        db,
        server,
        str(rec["Status"]).strip(),
        _int(rec, "CopyQueueLength", label),
        _int(rec, "ReplayQueueLength", label),
        str(rec["ContentIndexState"]).strip(),
        _int({"ActivationPreference": pref}, "ActivationPreference", label),
        _bool(rec.get("ActivationSuspended")),
        str(rec.get("AutoActivationPolicy", "")).strip() == "Blocked",
    )


def _server(path: Path, db: str, servers: list[str], name: str, what: str) -> str:
    """The server of `servers` that `name` names: case aside, or by a fully qualified name's host label when
    exactly one server has it (`ActiveDatabaseCopy` prints `ex01`, `Name` prints `DB01\\EX01`)."""
    exact = [s for s in servers if s.lower() == name.strip().lower()]
    host = [s for s in servers if "." in name and s.lower() == name.strip().lower().split(".")[0]]
    found = exact or (host if len(host) == 1 else [])
    if not found:
        raise CopyStatusError(f"{path}: {what} {name} is not a server holding a copy of {db} ({', '.join(servers)})")
    return found[0]


def _source(
    path: Path, db: str, rows: list[tuple], records: list[tuple[dict[str, Any], int]], source: str | None
) -> str:
    servers = [r[1] for r in rows]
    if source is not None:
        return _server(path, db, servers, source, "--source")
    active = sorted({str(rec.get("ActiveDatabaseCopy") or "").strip() for rec, _ in records} - {""})
    mounted = [r[1] for r in rows if r[2] == "Mounted"]
    if len(active) > 1:
        raise CopyStatusError(f"{path}: the copies of {db} name {len(active)} active copies ({', '.join(active)})")
    if active:
        src = _server(path, db, servers, active[0], "ActiveDatabaseCopy")
        if mounted and mounted[0] != src:
            raise CopyStatusError(
                f"{path}: ActiveDatabaseCopy names {active[0]} but the copy on {mounted[0]} is Mounted: only the "
                "active copy can be mounted (AM-009); name the failed source copy with --source"
            )
        return src
    if mounted:
        return mounted[0]
    raise CopyStatusError(
        f"{path}: no copy has Status Mounted and no ActiveDatabaseCopy is printed: name the failed source copy "
        "with --source"
    )


def parse_trigger(text: str) -> Trigger:
    if text == "lossless-switchover":
        return Trigger("switchover", None, True)
    if text.startswith("responder:"):
        return Trigger("responder", text.split(":", 1)[1])
    if text in ("failure", "switchover"):
        return Trigger(text)
    raise CopyStatusError(
        f"--trigger {text!r}: expected failure, switchover, lossless-switchover or responder:COMPONENT"
    )


def snapshot_json(snap: Snapshot) -> dict[str, Any]:
    return snapshot_to_json(snap)


def explain_snapshot(snap: Snapshot, dial: str | None, trigger: Trigger, opts: Options | None = None) -> Selection:
    if dial is not None:
        snap = Snapshot(
            snap.database,
            snap.source,
            snap.last_log_generated,
            snap.copies,
            {c.server: dial for c in snap.copies},
            snap.health,
        )
    return select(snap, trigger, opts)


NOTHING_TO_FAIL_OVER_TO = "nothing to fail over to"


def outcome(snap: Snapshot, sel: Selection) -> str:
    """The named outcome of a selection: the copy BCSS tries first; "nothing to fail over to" when the
    database has no copy but the failed source (AM-020: BCSS picks among the passive copies, and there are
    none); "no copy meets any criteria set" when there are passive copies and none qualifies (AM-050)."""
    if sel.order:
        return f"tries {sel.order[0].server} first"
    if all(c.server == snap.source for c in snap.copies):
        return NOTHING_TO_FAIL_OVER_TO
    return "no copy meets any criteria set"


def explain_file(
    path: Path,
    *,
    dial: str | None = None,
    trigger: str = "failure",
    preferences: Sequence[str] = (),
    source: str | None = None,
    as_json: bool = False,
    database: str | None = None,
) -> list[str]:
    snap = read_copy_status(path, preferences, source, database)
    trig = parse_trigger(trigger)
    sel = explain_snapshot(snap, dial, trig)
    used_dial = dial or f"{param_default('AutoDatabaseMountDial')} (catalogue default, AM-P01)"
    said = outcome(snap, sel)
    if as_json:
        doc = selection_to_json(sel) | {
            "database": snap.database,
            "source": snap.source,
            "dial": used_dial,
            "trigger": trigger,
            "outcome": said,
        }
        return [json.dumps(doc, indent=2)]
    if said == NOTHING_TO_FAIL_OVER_TO:
        return [
            f"{snap.database}: the active copy on {snap.source} is lost ({trigger}); {said}: the database has no "
            "other copy, so there is no passive copy for BCSS to activate (AM-020)"
        ]
    sort_req = "AM-036" if sel.sort == "ActivationPreference" else "AM-035"
    lines = [
        f"{snap.database}: the active copy on {snap.source} is lost ({trigger}); dial {used_dial}",
        f"candidates sorted by {sel.sort} ({sort_req}), then taken tier by tier and criteria set by criteria "
        "set (AM-039)",
    ]
    if sel.order:
        lines.append(f"BCSS tries {sel.order[0].server} first:")
    lines += [f"  {i}. {c.why()}" for i, c in enumerate(sel.order, start=1)] or [
        f"  {said}: BCSS activates nothing (AM-050)"
    ]
    lines += [f"  left out: {server}: {why}" for server, why in sel.excluded]
    lines.append(
        "note: managed-availability health is not in Get-MailboxDatabaseCopyStatus; every server is "
        "given the same health, so the tiers (AM-027..AM-031) do not tell them apart"
    )
    return lines
