"""A corpus of damaged inputs built from the shipped samples, one `Case` per way a careless or hostile user
can break `haconform check` (issue 11): encodings, pathological JSON, files that are not what their name
says, files skipped or half-read, empty input, awkward paths, and the rows on which the engines disagreed.

Each case writes its files under a fresh directory and says what the user must see: the exit status, a
fragment of the one-line message (exit 2), the quarantine entries (file as written, line, field, reason
fragment) and the files listed as skipped. The same cases run against both engines.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from traces.corpus import SAMPLES_DIR, rename_trace
from traces.io import read_events, write_events
from traces.schema import arrow_schema

BASE = SAMPLES_DIR / "clean" / "net-s1.jsonl"
DAMAGED_LINE = 3  # the line each row-level case breaks (1-based)


def base_lines() -> list[bytes]:
    return BASE.read_bytes().splitlines()


def base_row(line: int = DAMAGED_LINE) -> dict:
    return json.loads(base_lines()[line - 1])


def _with_line(tmp: Path, name: str, raw: bytes, line: int = DAMAGED_LINE) -> list[str]:
    lines = base_lines()
    lines[line - 1] = raw
    (tmp / name).write_bytes(b"\n".join(lines) + b"\n")
    return [str(tmp / name)]


def _row_bytes(row: dict) -> bytes:
    return json.dumps(row, separators=(",", ":"), ensure_ascii=False).encode()


def _trace(suffix: str, seed_file: Path = BASE) -> list:
    return rename_trace(read_events(seed_file).events, suffix)


@dataclass(frozen=True)
class Case:
    name: str
    klass: str
    build: Callable[[Path], list[str]]
    exit: int
    message: str = ""  # fragment of stderr (exit 2)
    quarantine: tuple[tuple[str, int, str, str], ...] = ()  # (file suffix, line, field, reason fragment)
    skipped: tuple[tuple[str, str], ...] = ()  # (file suffix, reason fragment)
    rows_read: int | None = None
    spark: bool = True  # part of the representative Spark subset
    extra_args: tuple[str, ...] = ()
    notes: dict = field(default_factory=dict)


def _q(reason: str, field: str = "", name: str = "t.jsonl", line: int = DAMAGED_LINE) -> tuple:
    return ((name, line, field, reason),)


def _edit(name: str, change: Callable[[dict], bytes]) -> Callable[[Path], list[str]]:
    return lambda tmp: _with_line(tmp, name, change(base_row()))


def _deep(tmp: Path) -> list[str]:
    return _with_line(tmp, "t.jsonl", b"[" * 200_000 + b"]" * 200_000)


def _deep_attrs(tmp: Path) -> list[str]:
    row = base_row()
    text = _row_bytes(row).replace(b'"attrs":{', b'"attrs":{"deep":' + b"[" * 40 + b"]" * 40 + b",", 1)
    return _with_line(tmp, "t.jsonl", text)


def _huge_valid(tmp: Path) -> list[str]:
    row = base_row()
    row["attrs"] = {**row["attrs"], "blob": "x" * 2_500_000}
    return _with_line(tmp, "t.jsonl", _row_bytes(row))


def _utf16(bom: bool) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        text = BASE.read_text(encoding="utf-8")
        (tmp / "t.jsonl").write_bytes(text.encode("utf-16" if bom else "utf-16-le"))
        return [str(tmp / "t.jsonl")]

    return build


def _named(kind: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        events = read_events(BASE).events
        if kind == "parquet-as-jsonl":
            write_events(tmp / "x.parquet", events)
            os.rename(tmp / "x.parquet", tmp / "t.jsonl")
            return [str(tmp / "t.jsonl")]
        if kind == "jsonl-as-parquet":
            (tmp / "t.parquet").write_bytes(BASE.read_bytes())
            return [str(tmp / "t.parquet")]
        if kind == "gzip-as-jsonl":
            (tmp / "t.jsonl").write_bytes(gzip.compress(BASE.read_bytes()))
            return [str(tmp / "t.jsonl")]
        if kind == "plain-as-gz":
            (tmp / "t.jsonl.gz").write_bytes(BASE.read_bytes())
            return [str(tmp / "t.jsonl.gz")]
        if kind == "truncated-gz":
            data = gzip.compress(BASE.read_bytes())
            (tmp / "t.jsonl.gz").write_bytes(data[: len(data) // 2])
            return [str(tmp / "t.jsonl.gz")]
        if kind == "truncated-parquet":
            write_events(tmp / "t.parquet", events)
            data = (tmp / "t.parquet").read_bytes()
            (tmp / "t.parquet").write_bytes(data[: len(data) - 20])
            return [str(tmp / "t.parquet")]
        raise ValueError(kind)

    return build


def _gz_beside(tmp: Path) -> list[str]:
    write_events(tmp / "a.jsonl", _trace("a"))
    (tmp / "b.jsonl.gz").write_bytes(gzip.compress(b"\n".join(e.to_json().encode() for e in _trace("b")) + b"\n\n"))
    (tmp / "c.jsonl.bz2").write_bytes(b"BZh9")
    (tmp / "README.txt").write_text("notes")
    return [str(tmp)]


def _extra_parquet(tmp: Path) -> list[str]:
    events = _trace("p")
    rows = [dict(e.to_row(), attrs=json.dumps(e.attrs, sort_keys=True, separators=(",", ":"))) for e in events]
    for i, row in enumerate(rows):
        row["note"] = "surprise" if i == 1 else None
    schema = arrow_schema().append(pa.field("note", pa.string()))
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp / "t.parquet")
    return [str(tmp / "t.parquet")]


def _links(tmp: Path) -> list[str]:
    d = tmp / "d"
    d.mkdir()
    write_events(d / "a.jsonl", _trace("a"))
    os.symlink(d, d / "loop")
    os.symlink(d / "self.jsonl", d / "self.jsonl")
    os.symlink(d / "gone.jsonl", d / "broken.jsonl")
    os.symlink(d / "a.jsonl", d / "same.jsonl")
    return [str(d)]


def _empty(kind: str) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        if kind == "dir":
            (tmp / "d").mkdir()
            return [str(tmp / "d")]
        (tmp / "t.jsonl").write_bytes(b"" if kind == "file" else b"\n  \n\t\r\n\n")
        return [str(tmp / "t.jsonl")]

    return build


AWKWARD_NAMES = ("a[1].jsonl", "b*.jsonl", "c?.jsonl", "d:e.jsonl", "f%20g h.jsonl", "é-ü 名.jsonl", "{x,y}.jsonl")


def _awkward(tmp: Path) -> list[str]:
    for i, name in enumerate(AWKWARD_NAMES):
        lines = [e.to_json().encode() for e in _trace(f"w{i}")]
        lines.insert(4, b"{broken")
        (tmp / name).write_bytes(b"\n".join(lines) + b"\n")
    return [str(tmp)]


def _star_beside(tmp: Path) -> list[str]:
    write_events(tmp / "x*.jsonl", _trace("star"))
    write_events(tmp / "xa.jsonl", _trace("a"))
    return [str(tmp / "x*.jsonl"), str(tmp / "xa.jsonl")]


def _same_seq(tmp: Path) -> list[str]:
    lines = base_lines()
    lines.insert(DAMAGED_LINE, lines[DAMAGED_LINE - 1].replace(b'"event_id":"net-s1:2"', b'"event_id":"net-s1:2b"'))
    (tmp / "t.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return [str(tmp / "t.jsonl")]


def _bom(where: int) -> Callable[[Path], list[str]]:
    def build(tmp: Path) -> list[str]:
        lines = base_lines()
        lines[where - 1] = b"\xef\xbb\xbf" + lines[where - 1]
        (tmp / "t.jsonl").write_bytes(b"\r\n".join(lines) + b"\r\n")
        return [str(tmp / "t.jsonl")]

    return build


N = len(BASE.read_bytes().splitlines())
CASES: tuple[Case, ...] = (
    # encodings
    Case(
        "latin1-byte",
        "encodings",
        _edit("t.jsonl", lambda r: _row_bytes(r).replace(b'"srv', b'"\xe9srv', 1)),
        1,
        quarantine=_q("not UTF-8: byte 0xe9 at byte offset"),
    ),
    Case("utf16-with-bom", "encodings", _utf16(True), 2, "is UTF-16 text (byte-order mark FF FE)"),
    Case("utf16-without-bom", "encodings", _utf16(False), 2, "NUL bytes"),
    Case(
        "lone-surrogate",
        "encodings",
        _edit("t.jsonl", lambda r: _row_bytes(r).replace(b'"attrs":{', b'"attrs":{"s":"\\ud800",', 1)),
        1,
        quarantine=_q("lone surrogate \\ud800"),
    ),
    Case(
        "surrogate-pair-is-fine",
        "encodings",
        _edit("t.jsonl", lambda r: _row_bytes(r).replace(b'"attrs":{', b'"attrs":{"s":"\\ud83d\\ude00",', 1)),
        0,
        rows_read=N,
    ),
    Case("bom-first-line-crlf", "encodings", _bom(1), 0, rows_read=N),
    Case(
        "bom-mid-file",
        "encodings",
        _bom(DAMAGED_LINE),
        1,
        quarantine=_q("byte-order mark is allowed only at the start"),
    ),
    # pathological JSON
    Case("deep-nesting", "pathological-json", _deep, 1, quarantine=_q("nested deeper than 32 levels")),
    Case("deep-in-attrs", "pathological-json", _deep_attrs, 1, quarantine=_q("nested deeper than 32 levels")),
    Case(
        "trailing-garbage",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes(r) + b" xyz"),
        1,
        quarantine=_q("data after the JSON value"),
    ),
    Case(
        "two-objects-one-line",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes(r) * 2),
        1,
        quarantine=_q("data after the JSON value"),
    ),
    Case(
        "duplicate-key",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes(r)[:-1] + b',"seq":99}'),
        1,
        quarantine=_q("key 'seq' appears twice"),
    ),
    Case(
        "int-beyond-64-bits-in-attrs",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes({**r, "attrs": {**r["attrs"], "n": 2**70}})),
        1,
        quarantine=_q("integer out of 64-bit range", "attrs"),
    ),
    Case(
        "int-beyond-64-bits-seq",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes({**r, "seq": 2**64})),
        1,
        quarantine=_q("out of 64-bit range", "seq"),
    ),
    Case(
        "float-for-integer",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes(r).replace(b'"seq":2,', b'"seq":2.0,')),
        1,
        quarantine=_q("expected integer, found number", "seq"),
    ),
    Case(
        "nan",
        "pathological-json",
        _edit("t.jsonl", lambda r: _row_bytes(r).replace(b'"attrs":{', b'"attrs":{"x":NaN,', 1)),
        1,
        quarantine=_q("NaN is not a JSON number"),
    ),
    Case(
        "spaces-are-fine",
        "pathological-json",
        _edit("t.jsonl", lambda r: json.dumps(r).encode() + b"  "),
        0,
        rows_read=N,
    ),
    Case("huge-valid-line", "pathological-json", _huge_valid, 0, rows_read=N),
    Case("same-seq-twice", "disagreement", _same_seq, 1, rows_read=N + 1),
    # files that are not what their name says
    Case("parquet-named-jsonl", "not-what-name-says", _named("parquet-as-jsonl"), 2, "holds Parquet data"),
    Case("jsonl-named-parquet", "not-what-name-says", _named("jsonl-as-parquet"), 2, "holds JSON text, not Parquet"),
    Case("gzip-named-jsonl", "not-what-name-says", _named("gzip-as-jsonl"), 2, "name it .jsonl.gz"),
    Case("plain-named-gz", "not-what-name-says", _named("plain-as-gz"), 2, "is not gzip-compressed"),
    Case("truncated-gz", "not-what-name-says", _named("truncated-gz"), 2, "t.jsonl.gz"),
    Case("truncated-parquet", "not-what-name-says", _named("truncated-parquet"), 2, "not a readable Parquet file"),
    # skipped or half-read
    Case(
        "gz-beside-plain-and-others",
        "skipped-files",
        _gz_beside,
        0,
        rows_read=2 * N,
        skipped=(("README.txt", "not a trace file"), ("c.jsonl.bz2", "compressed with bzip2")),
    ),
    Case(
        "extra-parquet-column",
        "skipped-files",
        _extra_parquet,
        1,
        quarantine=_q("unknown field", "note", "t.parquet", 2),
    ),
    Case(
        "symlinks",
        "skipped-files",
        _links,
        0,
        rows_read=N,
        skipped=(
            ("broken.jsonl", "broken symbolic link"),
            ("loop", "already read"),
            ("same.jsonl", "same file as"),
            ("self.jsonl", "symbolic link loop"),
        ),
    ),
    # empty input
    Case("empty-file", "empty", _empty("file"), 2, "no events"),
    Case("blank-lines-only", "empty", _empty("blank"), 2, "no events"),
    Case("empty-dir", "empty", _empty("dir"), 2, "no events"),
    Case("empty-allowed", "empty", _empty("file"), 0, rows_read=0, extra_args=("--allow-empty",)),
    # paths
    Case(
        "awkward-names",
        "paths",
        _awkward,
        1,
        rows_read=len(AWKWARD_NAMES) * (N + 1),
        quarantine=tuple((n, 5, "", "not valid JSON") for n in sorted(AWKWARD_NAMES)),
    ),
    Case("star-beside-match", "paths", _star_beside, 0, rows_read=2 * N),
)
