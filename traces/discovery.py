"""Which trace files a corpus holds: every file under the given paths, read or skipped with the reason.

`discover` lists every file under the paths a user gives (directories walked sorted, symbolic links followed
once, never a pattern expanded): each is either a trace file to read (`TraceFile`: its name as the user wrote
it, where to open it and its format, told by its name and checked against its first bytes by `sniff`) or named
in `Discovery.skipped` with the reason it is not read (another format, a compressed file, an output of
haconform's own, a repeat). A file that cannot be read at all (missing, not what its name says, UTF-16, corrupt
compressed data) raises `TraceFileError` naming it (requirements TR-005, TR-007). Split from `traces.io`, which
reads and writes the rows of the files found here (issue 32, session 13).
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from traces.outputs import output_of_ours, summary_reason

TRACE_SUFFIXES = (".jsonl", ".ndjson", ".jsonl.gz", ".ndjson.gz", ".parquet")
_KINDS = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".jsonl.gz": "jsonl.gz",
    ".ndjson.gz": "jsonl.gz",
    ".parquet": "parquet",
}
_COMPRESSED = {
    ".gz": "gzip",
    ".bz2": "bzip2",
    ".xz": "xz",
    ".zst": "zstd",
    ".lz4": "lz4",
    ".zip": "zip",
    ".snappy": "snappy",
    ".br": "brotli",
}
_GZIP_MAGIC, _PARQUET_MAGIC = b"\x1f\x8b", b"PAR1"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")


class TraceFileError(ValueError):
    """A whole file (or the input) is unusable; the message names the file and the reason."""


@dataclass(frozen=True, slots=True)
class TraceFile:
    name: str  # as the user wrote it, or joined under the directory the user wrote
    path: str  # what to open
    kind: str  # "jsonl", "jsonl.gz" or "parquet"


@dataclass
class Discovery:
    files: list[TraceFile] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"file": name, "reason": why not read}


def trace_kind(name: str) -> str | None:
    """The format a file name announces, or None when it is not a trace file name."""
    lower = name.lower()
    return next((kind for suffix, kind in _KINDS.items() if lower.endswith(suffix)), None)


def _skip_reason(name: str) -> str:
    suffix = Path(name.lower()).suffix
    if suffix in _COMPRESSED:
        return (
            f"compressed with {_COMPRESSED[suffix]}, which is not read: only .jsonl.gz and .ndjson.gz are decompressed"
        )
    return f"not a trace file: the name does not end in {', '.join(TRACE_SUFFIXES)}"


def _text_problem(head: bytes) -> str | None:
    if head.startswith(_PARQUET_MAGIC):
        return "holds Parquet data, not JSON Lines text: name it .parquet"
    if head.startswith(_GZIP_MAGIC):
        return "holds gzip-compressed data: name it .jsonl.gz"
    if head.startswith(_UTF16_BOMS):
        return f"is UTF-16 text (byte-order mark {head[:2].hex(' ').upper()}); JSON Lines must be UTF-8"
    if head and head.count(0) * 4 >= len(head):
        return "holds binary data (NUL bytes), not UTF-8 JSON Lines text (UTF-16 without a byte-order mark?)"
    if b"\n" not in head and re.search(rb"\r[ \t\r]*\S", head):
        return (
            "uses CR line endings (carriage returns without line feeds, as classic Mac OS wrote text): "
            "JSON Lines ends each line with LF (or CRLF); convert it, e.g. tr '\\r' '\\n'"
        )
    return None


def _parquet_problem(head: bytes) -> str | None:
    if head.startswith(_PARQUET_MAGIC):
        return None
    if not head:
        return "is empty, not Parquet"
    if head.startswith(_GZIP_MAGIC):
        return "holds gzip-compressed data, not Parquet"
    if head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] in (b"{", b"["):
        return "holds JSON text, not Parquet: name it .jsonl"
    return "is not a Parquet file (no PAR1 magic number)"


def sniff(tf: TraceFile) -> None:
    """Check from the first bytes that a file holds what its name says; raise TraceFileError if not."""
    try:
        with open(tf.path, "rb") as handle:
            head = handle.read(4096)
        if tf.kind == "parquet":
            problem = _parquet_problem(head)
        elif tf.kind == "jsonl.gz":
            if head.startswith(_GZIP_MAGIC):
                with gzip.open(tf.path, "rb") as handle:
                    problem = _text_problem(handle.read(4096))
            else:
                problem = "is not gzip-compressed: name it .jsonl" if head else "is empty, not gzip data"
        else:
            problem = _text_problem(head)
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceFileError(f"{tf.name}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    if problem:
        raise TraceFileError(f"{tf.name}: {problem}")


def _walk(top: str, seen_dirs: dict[tuple[int, int], str], out: Discovery, seen_files: dict) -> None:
    stack = [top]
    while stack:
        current = stack.pop()
        try:
            entries = sorted(os.scandir(current), key=lambda e: e.name)
        except OSError as exc:
            raise TraceFileError(f"{current}: cannot list directory: {exc.strerror}") from exc
        subdirs = []
        for entry in entries:
            name = os.path.join(current, entry.name)
            try:
                st = os.stat(entry.path)
            except OSError as exc:
                reason = (
                    "symbolic link loop"
                    if exc.errno == errno.ELOOP
                    else "broken symbolic link"
                    if entry.is_symlink()
                    else f"cannot stat: {exc.strerror}"
                )
                out.skipped.append({"file": name, "reason": reason})
                continue
            key = (st.st_dev, st.st_ino)
            if os.path.isdir(entry.path):
                if key in seen_dirs:
                    out.skipped.append(
                        {
                            "file": name,
                            "reason": f"directory already read as {seen_dirs[key]} (symbolic link loop or repeat)",
                        }
                    )
                else:
                    seen_dirs[key] = name
                    subdirs.append(name)
            else:
                _add_file(name, entry.path, st, out, seen_files, explicit=False)
        stack.extend(reversed(subdirs))


def _add_file(name: str, path: str, st: os.stat_result, out: Discovery, seen: dict, *, explicit: bool) -> None:
    import stat as stat_module

    if not stat_module.S_ISREG(st.st_mode):
        if explicit:
            raise TraceFileError(f"{name}: not a regular file")
        out.skipped.append({"file": name, "reason": "not a regular file"})
        return
    kind = trace_kind(name)
    if kind is None:
        if explicit:
            raise TraceFileError(f"{name}: unknown trace format ({_skip_reason(name)})")
        out.skipped.append({"file": name, "reason": summary_reason(path) or _skip_reason(name)})
        return
    key = (st.st_dev, st.st_ino)
    if key in seen:
        out.skipped.append({"file": name, "reason": f"same file as {seen[key]}, which is read"})
        return
    seen[key] = name
    tf = TraceFile(name, path, kind)
    sniff(tf)
    written = output_of_ours(tf.name, tf.path, tf.kind)
    if written is not None:
        if explicit:
            raise TraceFileError(f"{name}: {written}: name the trace itself")
        out.skipped.append({"file": name, "reason": written})
        return
    out.files.append(tf)


def discover(paths: Iterable[Path | str]) -> Discovery:
    """Every file under `paths`, in the order given (directories walked sorted, symbolic links followed
    once): trace files to read, and the others with the reason they are not read. Never expands patterns."""
    out = Discovery()
    seen_dirs: dict[tuple[int, int], str] = {}
    seen_files: dict[tuple[int, int], str] = {}
    for raw in paths:
        name = os.fspath(raw)
        try:
            st = os.stat(name)
        except OSError as exc:
            what = (
                "symbolic link loop"
                if exc.errno == errno.ELOOP
                else "no such file or directory"
                if exc.errno == errno.ENOENT
                else exc.strerror
            )
            raise TraceFileError(f"{name}: {what}") from exc
        if os.path.isdir(name):
            key = (st.st_dev, st.st_ino)
            if key in seen_dirs:
                out.skipped.append({"file": name, "reason": f"directory already read as {seen_dirs[key]}"})
                continue
            seen_dirs[key] = name
            _walk(name, seen_dirs, out, seen_files)
        else:
            _add_file(name, name, st, out, seen_files, explicit=True)
    return out


def expand_paths(paths: Iterable[Path | str]) -> list[Path]:
    """The trace files under `paths` (see `discover`)."""
    return [Path(tf.path) for tf in discover(paths).files]
