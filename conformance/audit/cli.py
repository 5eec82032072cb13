"""`haconform import msgtrk|copystatus`, `haconform explain`, `haconform report`, and `render`, which the
`check --html/--junit` post-step (`conformance.cli.check.post_check`) calls. Exit statuses as everywhere
(COMMON): 0 clean, 1 violations or quarantined lines, 2 unusable input or usage, 3 internal error. Output files
are written atomically (temporary file, then rename).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conformance.audit.copystatus import CopyStatusError, explain_file, read_copy_status, snapshot_json
from conformance.audit.html import load_report, render_html
from conformance.audit.importer import ImportConfig, build_trace, quarantine_rows
from conformance.audit.junit import render_junit
from conformance.audit.msgtrk import LogFileError, parse_logs
from conformance.audit.smtplog import parse_protocol
from conformance.audit.sniff import unaccounted
from conformance.report import EXIT_CLEAN, EXIT_UNUSABLE, EXIT_VIOLATIONS, atomic_write
from traces.io import TraceFileError, write_events
from traces.textfile import TextInputError

EXIT_INTERNAL = 3
MAX_CUSTODY_LINES = 50  # raw files shown by `import msgtrk`; IMPORT_START records every one


def _said(exc: Exception) -> str:
    """One line naming the file: `x.txt: no such file or directory`, never a raw `[Errno 2] ...`."""
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"{exc.filename}: {(exc.strerror or str(exc)).lower()}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _parse_boundaries(items: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for item in items:
        name, sep, servers = item.partition("=")
        if not sep or not name or not servers:
            raise ValueError(f"--boundary expects NAME=SERVER,SERVER,..., got {item!r}")
        out[name] = tuple(s for s in servers.split(",") if s)
    return out


def _cmd_import_msgtrk(args: argparse.Namespace) -> int:

    try:
        config = ImportConfig(
            _parse_boundaries(args.boundary),
            args.reject_on_shadow_failure,
            args.accept_rejection_variant,
            args.shadow_resubmit_ms,
            args.trace_id,
        )
        parsed = parse_logs(args.paths, args.layout, protocol=not args.no_protocol_logs)
        smtp = parse_protocol(parsed.inputs.protocol)
        missing = unaccounted(args.paths, parsed.inputs)
    except (LogFileError, ValueError, OSError) as exc:
        print(f"haconform import msgtrk: input unusable: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    if missing:  # every file is read or listed with its reason; anything else is a bug, never a verdict
        print(f"haconform import msgtrk: internal error: files neither read nor listed: {missing}", file=sys.stderr)
        return EXIT_INTERNAL
    files = [label for _, label in parsed.inputs.tracking]
    events, start = build_trace(parsed, config, files, smtp)
    out = Path(args.out)
    target = out / f"{events[0].trace_id}.parquet" if out.suffix not in (".parquet", ".jsonl", ".ndjson") else out
    try:
        atomic_write(target, lambda tmp: write_events(tmp, events))
    except TraceFileError as exc:
        print(f"haconform import msgtrk: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    qpath = target.with_name(target.stem + ".quarantine.jsonl")
    quarantined = [*parsed.quarantine, *smtp.quarantine]
    rows = quarantine_rows(quarantined)
    atomic_write(
        qpath, lambda tmp: tmp.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), encoding="utf-8")
    )
    _say_import(parsed, smtp, start, files)
    for q in quarantined[:5]:
        print(f"  quarantined {q}", file=sys.stderr)
    print(
        f"wrote {len(events)} events (trace {events[0].trace_id}) to {target}; quarantine in {qpath}", file=sys.stderr
    )
    return EXIT_VIOLATIONS if quarantined else EXIT_CLEAN


def _say_import(parsed, smtp, start: dict, files: list[str]) -> None:  # type: ignore[no-untyped-def]
    """What was read, how each file's layout was known, and every file not read with its reason."""
    print(
        f"haconform import msgtrk: {len(files)} tracking file(s), {parsed.data_lines} line(s) read: "
        f"{start['rows_imported']} imported, {start['duplicates_dropped']} exact duplicate(s) dropped, "
        f"{len(parsed.quarantine)} quarantined; {start['unknown_events_total']} row(s) with event IDs "
        f"outside the documented list kept ({', '.join(start['unknown_event_ids']) or 'none'}); "
        f"servers: {', '.join(start['servers']) or 'none'}",
        file=sys.stderr,
    )
    for label, how in sorted(parsed.layout_origin.items()):
        if not how.startswith("#Fields"):
            print(f"  {label}: layout {parsed.layouts[label]} ({how})", file=sys.stderr)
    if smtp.files:
        print(
            f"  SMTP protocol logs: {len(smtp.files)} file(s), {smtp.data_lines} line(s), {len(smtp.sessions)} "
            f"session(s), {start['protocol_replies_joined']} message repl(ies) joined to tracking rows, "
            f"{len(start['protocol_join_problems'])} not joined, {start['protocol_not_applicable_total']} not "
            f"applicable (not shadow sessions), {smtp.duplicates} repeated line(s) dropped, "
            f"{len(smtp.quarantine)} quarantined",
            file=sys.stderr,
        )
        for told in start["protocol_layout_origin"]:
            print(f"  {told}", file=sys.stderr)
        for problem in start["protocol_join_problems"][:5]:
            print(f"    not joined: {problem}", file=sys.stderr)
        for split in smtp.splits[:5]:
            print(f"    split: {split}", file=sys.stderr)
    for conflict in start["server_name_conflicts"][:10]:
        print(f"  server names: {conflict}", file=sys.stderr)
    if start["replication_values"]:
        print(f"  S:Replication in RECEIVE rows: {', '.join(start['replication_values'])}", file=sys.stderr)
    for reason in start["fields_not_judged"]:
        print(f"    {reason}", file=sys.stderr)
    _say_custody(start)
    skipped = parsed.inputs.skipped
    print(f"  {len(skipped)} file(s) not read" + (":" if skipped else ""), file=sys.stderr)
    for label, reason in skipped:
        print(f"    {label}: {reason}", file=sys.stderr)


def _say_custody(start: dict) -> None:
    """The chain of custody IMPORT_START records: every raw file read, its size, SHA-256, lines, encoding."""
    names = start.get("raw_files", [])
    print(f"  chain of custody: {len(names)} raw file(s) read (recorded in IMPORT_START):", file=sys.stderr)
    facts = zip(names, start["raw_bytes"], start["raw_lines"], start["raw_encodings"], start["raw_sha256"], strict=True)
    for n, (name, size, lines, encoding, sha) in enumerate(facts):
        if n == MAX_CUSTODY_LINES:
            print(f"    ... and {len(names) - n} more, each in IMPORT_START", file=sys.stderr)
            break
        print(f"    {name}: {size} bytes, {lines} line(s), {encoding}, sha256 {sha}", file=sys.stderr)


def _cmd_import_copystatus(args: argparse.Namespace) -> int:

    try:
        snap = read_copy_status(Path(args.file), args.preference, args.source, args.database)
    except (CopyStatusError, TextInputError, OSError) as exc:
        print(f"haconform import copystatus: input unusable: {_said(exc)}", file=sys.stderr)
        return EXIT_UNUSABLE
    text = json.dumps(snapshot_json(snap), indent=2) + "\n"
    if args.out:
        atomic_write(Path(args.out), lambda tmp: tmp.write_text(text, encoding="utf-8"))
        print(f"wrote the BCSS snapshot of {snap.database} to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return EXIT_CLEAN


def _cmd_explain(args: argparse.Namespace) -> int:

    try:
        lines = explain_file(
            Path(args.file),
            dial=args.dial,
            trigger=args.trigger,
            preferences=args.preference,
            source=args.source,
            as_json=args.json,
            database=args.database,
        )
    except (CopyStatusError, TextInputError, OSError) as exc:
        print(f"haconform explain: input unusable: {_said(exc)}", file=sys.stderr)
        return EXIT_UNUSABLE
    print("\n".join(lines))
    return EXIT_CLEAN


def render(out_dir: Path, html: str | None, junit: str | None, traces: list[str] | None = None) -> int:
    """Write the HTML page and/or the JUnit file from a written check report directory."""

    report = load_report(out_dir, traces if html else [])  # [] : JUnit alone reads no trace file
    if html:
        page = render_html(report)
        atomic_write(Path(html), lambda tmp: tmp.write_text(page, encoding="utf-8"))
        print(f"wrote {html}", file=sys.stderr)
    if junit:
        xml = render_junit(report)
        atomic_write(Path(junit), lambda tmp: tmp.write_text(xml, encoding="utf-8"))
        print(f"wrote {junit}", file=sys.stderr)
    return EXIT_CLEAN


def _cmd_report(args: argparse.Namespace) -> int:
    out = Path(args.out_dir)
    if not (out / "summary.json").is_file():
        print(f"haconform report: {out} holds no summary.json (run haconform check --out {out} first)", file=sys.stderr)
        return EXIT_UNUSABLE
    html = args.html or str(out / "report.html")
    traces = args.traces
    if traces is None:  # as `check --html` draws it: the files the check read, as summary.json names them
        files = json.loads((out / "summary.json").read_text(encoding="utf-8")).get("files", [])
        traces = [f for f in files if Path(f).is_file()]
        if len(traces) < len(files):
            print(
                f"haconform report: {len(files) - len(traces)} of the {len(files)} checked file(s) are not found "
                "from here (summary.json names them as check was given them): their timelines show only the "
                "violations' events; name them with --traces",
                file=sys.stderr,
            )
    try:
        return render(out, html, args.junit, traces or None)
    except (ValueError, KeyError) as exc:
        print(f"haconform report: input unusable: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE


def _bool(text: str) -> bool:
    if text.lower() in ("true", "1", "yes"):
        return True
    if text.lower() in ("false", "0", "no"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "import",
        help="import real Exchange logs",
        description="Import real logs: message "
        "tracking logs into a trace, or a Get-MailboxDatabaseCopyStatus export into a BCSS snapshot.",
    )
    isub = p.add_subparsers(dest="format", required=True, metavar="FORMAT")
    m = isub.add_parser(
        "msgtrk",
        help="message tracking logs (+ SMTP protocol logs) -> a trace",
        description="Read message "
        "tracking logs (2007, 2010, 2013, 2016/2019 layouts, by each file's #Fields line, or header-less rows "
        "as SIEMs export them) and SMTP Receive/Send protocol logs, joined by identifiers, into one trace "
        "(mechanism msgtrk). Every file is told by content, never by name: tracking logs by #Log-type, "
        "#Fields or a header-less row's column count (21, 26, 27, 30); protocol logs by #Log-type, or "
        "(#Fields alone, or header-less 9-column rows) Receive or Send by whether their '<' lines are "
        "commands or replies. Every file not read is listed with the reason. "
        "Malformed lines are quarantined with file, line and column (exit 1).",
    )
    m.add_argument("paths", nargs="+", help="log files (read whatever their names) or directories (every file)")
    m.add_argument(
        "--layout",
        action="append",
        choices=("2007", "2010", "2013", "2016", "2019", "receive", "send"),
        help="the layout of tracking rows without a #Fields line (default: from the first row's column count), "
        "and/or receive|send: the direction of protocol-log rows without #Log-type that no command or reply "
        "tells; repeatable, one of each",
    )
    m.add_argument(
        "--no-protocol-logs",
        action="store_true",
        help="do not read SMTP protocol logs found among the paths (they are listed as not read)",
    )
    m.add_argument("--out", required=True, help="a .parquet/.jsonl file, or a directory (dataset) to write into")
    m.add_argument(
        "--boundary",
        action="append",
        default=[],
        metavar="NAME=SRV,SRV",
        help="a transport high availability boundary (DAG or site) and its servers; repeatable",
    )
    m.add_argument(
        "--reject-on-shadow-failure",
        type=_bool,
        default=None,
        metavar="BOOL",
        help="the organisation's RejectMessageOnShadowFailure (default: the catalogue's, SR-P02)",
    )
    m.add_argument(
        "--accept-rejection-variant",
        type=_bool,
        default=None,
        metavar="BOOL",
        help="accept '450 4.5.1' as the rejection text (SR-P20)",
    )
    m.add_argument(
        "--shadow-resubmit-ms",
        type=int,
        default=None,
        metavar="MS",
        help="ShadowResubmitTimeSpan in ms (default: the catalogue's, SR-P14)",
    )
    m.add_argument("--trace-id", help="trace ID (default: msgtrk-<hash of the rows>)")
    m.set_defaults(func=_cmd_import_msgtrk)
    c = isub.add_parser(
        "copystatus",
        help="Get-MailboxDatabaseCopyStatus export -> a BCSS snapshot (JSON)",
        description="Read Format-List text, Export-Csv CSV or ConvertTo-Json output.",
    )
    _copy_options(c)
    c.add_argument("--out", help="write the snapshot JSON here (default: stdout)")
    c.set_defaults(func=_cmd_import_copystatus)

    e = sub.add_parser(
        "explain",
        help="which copy BCSS tries first, and why",
        description="Which database copy "
        "best copy and server selection would try first, in what order, and why (tier, criteria "
        "set, exclusions with requirement IDs), from a Get-MailboxDatabaseCopyStatus export.",
    )
    _copy_options(e)
    e.add_argument(
        "--dial",
        choices=("Lossless", "GoodAvailability", "BestAvailability"),
        help="AutoDatabaseMountDial of every server (default: the catalogue's, AM-P01)",
    )
    e.add_argument(
        "--trigger",
        default="failure",
        metavar="KIND",
        help="failure (default), switchover, lossless-switchover, or responder:COMPONENT",
    )
    e.add_argument("--json", action="store_true", help="print the selection as JSON")
    e.set_defaults(func=_cmd_explain)

    r = sub.add_parser(
        "report",
        help="a self-contained HTML page from a check report directory",
        description="Render summary.json, violations.jsonl, quarantine.jsonl and unknown.jsonl of a "
        "`haconform check --out DIR` as one HTML page (no network needed) and optionally JUnit XML.",
    )
    r.add_argument("out_dir", help="the check report directory")
    r.add_argument("--html", metavar="FILE", help="the page (default OUT_DIR/report.html)")
    r.add_argument("--junit", metavar="FILE", help="also write JUnit XML")
    r.add_argument(
        "--traces",
        nargs="*",
        metavar="PATH",
        help="the checked traces, to draw each violated entity whole (default: the files summary.json names)",
    )
    r.set_defaults(func=_cmd_report)


def _copy_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="the export: .txt (Format-List), .csv (Export-Csv) or .json (ConvertTo-Json)")
    p.add_argument(
        "--preference",
        action="append",
        default=[],
        metavar="SERVER=N",
        help="ActivationPreference of a copy when the export lacks it (it comes from Get-MailboxDatabase)",
    )
    p.add_argument(
        "--source",
        help="the server whose copy failed (default: the copy ActiveDatabaseCopy names, else the one Mounted)",
    )
    p.add_argument("--database", metavar="NAME", help="the database to read from an export of several databases")
