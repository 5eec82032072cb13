"""The check report shared by both engines: summary.json, violations.jsonl, quarantine.jsonl, verdict.

Counts are taken independently (rows read from the files, rows that reached the rules, rows quarantined)
and must reconcile (requirement TR-005); a mismatch is an internal error, never a verdict. Quarantined rows
break TR-005 and count as violations of rule `schema-conformance`. Files list at most `cap` entries each,
in a deterministic order; the summary always carries the full counts.

The report is written into a fresh directory beside `--out` and renamed into place, so `--out` holds one
whole report of one run: a clean or failed verdict, an unusable input (`verdict: unusable`, exit 2) or an
internal error (`verdict: internal-error`, exit 3, with the full trace in `haconform-error.log`).

Exit statuses of the gate (`exit_status`): 0 only for a judged, clean input; 1 violations (whatever else);
2 unusable, and also a verdict of unknown (no violations, some group could not be judged: its notes are in
`unknown.jsonl`) unless `--allow-unknown` accepts it (exit 0, `unknown_accepted` in summary.json);
`--strict` makes unknown exit 1 instead; 3 internal error.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from conformance.audit.report_data import cause_first, rule_rows, states_line
from conformance.engine.outcome import CheckOutcome
from traces.io import TraceFileError, discover
from traces.rows import OLDER_VERSION_REASON
from traces.schema import OLDER_VERSIONS, SCHEMA_VERSION

EXIT_CLEAN, EXIT_VIOLATIONS, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 1, 2, 3
ERROR_LOG = "haconform-error.log"
REPORT_FILES = ("summary.json", "violations.jsonl", "quarantine.jsonl", "unknown.jsonl", ERROR_LOG)


class OutDirError(ValueError):
    """`--out` cannot hold a report (a file, not writable, someone else's files): exit 2 before any work."""


def no_events_message(outcome: CheckOutcome) -> str:
    return (
        f"no events: {len(outcome.files)} trace file(s) read, {len(outcome.files_skipped)} skipped, 0 rows "
        "(empty files and blank lines hold no events); pass --allow-empty to accept an empty input"
    )


def no_valid_row_message(outcome: CheckOutcome) -> str:
    first = outcome.quarantine[0] if outcome.quarantine else None
    where = f" (first: {first['file']}:{first['line']}: field {first['field']!r}: {first['reason']})" if first else ""
    return (
        f"no valid row: all {outcome.rows_read} row(s) read from {len(outcome.files)} file(s) break the "
        f"trace schema{where}"
    )


def older_version_message(outcome: CheckOutcome) -> str | None:
    """A check whose input holds rows of an older schema version is unusable (exit 2): not judged by the
    current rules, whose context and vocabulary it lacks; the message says what is missing and how to
    produce it (`traces.schema.OLDER_VERSIONS`)."""

    old = [
        q for q in outcome.quarantine if q["field"] == "schema_version" and q["reason"].startswith(OLDER_VERSION_REASON)
    ]
    if not old:
        return None
    version = int(old[0]["reason"][len(OLDER_VERSION_REASON) :].split(",")[0])
    return (
        f"{len(old)} row(s) of trace schema version {version}, not {SCHEMA_VERSION} (first: {old[0]['file']}:"
        f"{old[0]['line']}): {OLDER_VERSIONS[version]}"
    )


def check_out_dir(out_dir: Path | str) -> Path:
    """Fail early (OutDirError) unless `out_dir` can receive a report: a new or empty directory, or one
    holding only an earlier report, whose parent is writable."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutDirError(f"--out {out}: exists and is not a directory")
    if out.is_dir():
        foreign = sorted(p.name for p in out.iterdir() if p.name not in REPORT_FILES)
        if foreign:
            raise OutDirError(
                f"--out {out}: holds files that are not a haconform report ({', '.join(foreign[:5])}"
                f"{', ...' if len(foreign) > 5 else ''}); give a new or empty directory"
            )
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.probe-")).rmdir()
    except OSError as exc:
        raise OutDirError(f"--out {out}: cannot write in {out.parent}: {exc.strerror or exc}") from exc
    return out


def publish(out_dir: Path | str, write: Callable[[Path], None]) -> Path:
    """Run `write(tmp)` on a fresh directory beside `out_dir`, then rename it into place: `out_dir` ends
    with the whole new report, or (if writing fails) the files of the earlier one untouched."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        umask = os.umask(0o022)
        os.umask(umask)
        tmp.chmod(0o777 & ~umask)
        write(tmp)
        old = None
        if out.exists():
            old = tmp.with_name(tmp.name.replace(".tmp-", ".old-"))
            os.rename(out, old)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return out


def atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Run `write(tmp)` on a temporary file beside `path`, then rename it into place (readable by all)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")


def write_unusable(out_dir: Path | str, engine: str, message: str, skipped: list[dict[str, str]] = ()) -> None:
    """The report of a run whose input was unusable: replaces any earlier report in `out_dir`, so a gate
    reading `summary.json` after exit 2 never finds an earlier run's verdict there."""
    summary = {
        "tool": "haconform check",
        "engine": engine,
        "verdict": "unusable",
        "error": message,
        "files_skipped": list(skipped),
    }
    publish(out_dir, lambda tmp: _write_json(tmp / "summary.json", summary))


def write_internal_error(out_dir: Path | str, one_line: str, trace: str) -> Path:
    """The report of a run that failed inside haconform; returns the path of the full trace."""

    def write(tmp: Path) -> None:
        (tmp / ERROR_LOG).write_text(trace, encoding="utf-8", errors="backslashreplace")
        _write_json(
            tmp / "summary.json",
            {"tool": "haconform check", "verdict": "internal-error", "error": one_line, "log": ERROR_LOG},
        )

    return publish(out_dir, write) / ERROR_LOG


def exit_status(verdict: str, *, strict: bool = False, allow_unknown: bool = False) -> int:
    """The gate: 0 only for judged and clean, 1 violations, 2 for an unknown verdict (some group could not be
    judged) unless `allow_unknown` accepts it (0) or `strict` makes it a failure (1)."""
    if verdict == "invalid":
        return EXIT_VIOLATIONS
    if verdict == "unknown":
        if strict:
            return EXIT_VIOLATIONS
        return EXIT_CLEAN if allow_unknown else EXIT_UNUSABLE
    return EXIT_CLEAN


def unknown_message(outcome: CheckOutcome, out: Path) -> str:
    groups = outcome.unknown_total
    return (
        f"haconform check: {groups} group(s) could not be judged (no violations found; why in "
        f"{out / 'unknown.jsonl'}): exit 2; pass --allow-unknown to accept an unjudged input"
    )


def write_outcome(
    outcome: CheckOutcome,
    out_dir: Path | str,
    *,
    strict: bool = False,
    allow_unknown: bool = False,
    stream: TextIO | None = None,
) -> int:
    """Write the report atomically and a short readable verdict (to stdout unless `stream`); return the exit
    status (`exit_status`); an unknown verdict not accepted adds one line on stderr. Counts that do not
    reconcile raise InternalError before anything is written."""
    outcome.require_reconciled()
    stream = stream or sys.stdout  # looked up per call, so a replaced sys.stdout is honoured
    summary = outcome.summary(allow_unknown=allow_unknown and not strict)
    rule_lines = rules_lines(summary)  # inconsistent rule rows raise here, before anything is written

    def write(tmp: Path) -> None:
        _write_json(tmp / "summary.json", summary)
        _write_jsonl(tmp / "violations.jsonl", outcome.violations)
        _write_jsonl(tmp / "quarantine.jsonl", outcome.quarantine)
        _write_jsonl(tmp / "unknown.jsonl", outcome.unknown)

    out = publish(out_dir, write)
    skipped = f", {len(outcome.files_skipped)} skipped" if outcome.files_skipped else ""
    print(
        f"haconform check ({outcome.engine}): {len(outcome.files)} file(s){skipped}, {outcome.rows_read} rows "
        f"read, {outcome.rows_checked} checked, {outcome.rows_quarantined} quarantined",
        file=stream,
    )
    for s in outcome.files_skipped[:3]:
        print(f"  skipped {s['file']}: {s['reason']}", file=stream)
    for rule in summary["violations_by_rule"]:
        print(f"  {rule['count']:>7}  {rule['requirement']:<7} {rule['mechanism']:<5} {rule['rule']}", file=stream)
    for line in rule_lines:
        print(line, file=stream)
    for q in outcome.quarantine[:3]:
        where = f"{q['file']}:{q['line']}"
        print(f"  quarantined {where}: field {q['field']!r}: {q['reason']}", file=stream)
    for line in sample_lines(outcome.violations):
        print(line, file=stream)
    print(
        f"verdict: {summary['verdict'].upper()} ({summary['violations_total']} violation(s), "
        f"{outcome.unknown_total} unjudgeable group(s)); report in {out}/",
        file=stream,
    )
    status = exit_status(summary["verdict"], strict=strict, allow_unknown=allow_unknown)
    if summary["verdict"] == "unknown" and status != EXIT_CLEAN:
        print(unknown_message(outcome, out), file=sys.stderr)
    return status


MAX_NOT_JUDGED = 10  # not-judged rules named on the terminal (all of them are in summary.json)
MAX_SAMPLES = 5  # violated entities shown on the terminal, cause first


def rules_lines(summary: dict[str, Any]) -> list[str]:
    """The terminal's lines on what each rule judged (TR-009, issue 29): `rules: N violated, N held, N not judged, N not
    applicable`, then the not-judged rules with their reasons (at most `MAX_NOT_JUDGED`). Nothing for a summary
    without rule rows. The rows are checked (`conformance.audit.report_data.check_rule_rows`)."""
    if "rules" not in summary:
        return []
    rows = rule_rows(summary)
    lines = [f"rules: {states_line(rows)}"]
    idle = [r for r in rows if r["state"] == "not-judged"]
    lines += [f"  not judged: {r['requirement']} {r['rule']}: {r['reason']}" for r in idle[:MAX_NOT_JUDGED]]
    if len(idle) > MAX_NOT_JUDGED:
        lines.append(f"  ... and {len(idle) - MAX_NOT_JUDGED} more in summary.json")
    return lines


def sample_lines(violations: list[dict[str, Any]]) -> list[str]:
    """The first violations, cause first as the HTML report orders them (`report_data.cause_first`): per
    entity, the earliest first, with the count of the later violations of the entity that follow from it."""
    lines = []
    for card in cause_first(violations)[:MAX_SAMPLES]:
        v = card.head[1]
        then = f" (then {len(card.follows)} later violation(s) of {v['entity']})" if card.follows else ""
        lines.append(f"  [{v['requirement']} {v['rule']}] {v['trace_id']}/{v['entity']}: {v['explanation']}{then}")
    return lines


def run_and_report(args: Any, engine: str, compute: Callable[[], CheckOutcome]) -> int:
    """The frame of `haconform check` for either engine: refuse an unusable `--out` before any work, turn
    an unusable input (no events at all, unless `--allow-empty`; rows none of which is valid) into exit 2
    with a report saying so, and write the outcome. Any other exception propagates: the CLI makes it an
    internal error (exit 3)."""

    try:
        out = check_out_dir(args.out)
    except OutDirError as exc:
        print(f"haconform check: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    found = None
    try:
        found = discover(args.paths)  # a missing or unreadable path is said before any engine starts (Spark: seconds)
        outcome = compute()
        if outcome.rows_read == 0 and not getattr(args, "allow_empty", False):
            raise TraceFileError(no_events_message(outcome))
        if (older := older_version_message(outcome)) is not None:
            raise TraceFileError(older)  # an older contract: said, never judged by the current rules
        if outcome.rows_read and outcome.rows_checked == 0 and outcome.rows_quarantined == outcome.rows_read:
            raise TraceFileError(no_valid_row_message(outcome))  # nothing to judge: unusable, not a verdict
    except TraceFileError as exc:
        print(f"haconform check: input unusable: {exc}", file=sys.stderr)
        skipped = found.skipped if found is not None else []  # the files not read, as in any outcome
        write_unusable(out, engine, str(exc), skipped)  # summary.json describes this run: never a stale verdict
        return EXIT_UNUSABLE
    status = write_outcome(
        outcome, out, strict=getattr(args, "strict", False), allow_unknown=getattr(args, "allow_unknown", False)
    )
    args.report_written = True  # a whole report is in --out, whatever the status (conformance.audit.cli)
    return status
