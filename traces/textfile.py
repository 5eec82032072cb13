"""Opening and decoding every text input of the audit commands, as Windows servers and PowerShell write them.

FIELD-NOTES, "The real formats a user has". Exchange writes its logs in UTF-8 (the
message tracking and SMTP protocol logs start with a byte-order mark); Windows PowerShell 5.1's `>` and
`Out-File` write UTF-16 LE with a byte-order mark, `Out-File -Encoding BigEndianUnicode` UTF-16 BE, and
`Export-Csv`/`Out-File -Encoding utf8` UTF-8 with a byte-order mark. The encoding is told by the byte-order
mark alone (never guessed from the text): UTF-8 with one (`utf-8-sig`), UTF-16 LE or BE with one, else UTF-8.
Text that cannot be told is refused with the file named, never read as something else: UTF-16 without a
byte-order mark (NUL bytes in every other place) and binary data (NUL bytes elsewhere).

Every text input goes through here (it sits in the lowest layer so that every layer can): the tracking reader
(`conformance.audit.msgtrk.parse_file`), the protocol-log reader (`smtplog._lines`), content sniffing
(`sniff.sniff`), the copy-status export reader (`copystatus`, hence `import copystatus` and `explain`), and
deployment files (`spec.claims.config.load_config`, `validate-config`). `custody` gives each raw file's
chain-of-custody facts (name, size, SHA-256 of the bytes on disk, line count, encoding) for `IMPORT_START`
(requirement TR-007). Traces themselves are JSON Lines in UTF-8 or Parquet (`traces.io`, which names UTF-16).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

UTF8, UTF8_BOM, UTF16_LE, UTF16_BE = "utf-8", "utf-8-sig", "utf-16-le", "utf-16-be"
ENCODINGS = (UTF8, UTF8_BOM, UTF16_LE, UTF16_BE)
_BOMS = ((b"\xef\xbb\xbf", UTF8_BOM), (b"\xff\xfe", UTF16_LE), (b"\xfe\xff", UTF16_BE))
_HEAD = 65536
SAVE_AS = "save it as UTF-8, or as UTF-16 with a byte-order mark (PowerShell: Out-File -Encoding utf8)"


class TextInputError(ValueError):
    """A text input that cannot be decoded; the message names the file (and the byte or line at fault)."""


def encoding_of(head: bytes) -> str:
    """The encoding a file's first bytes announce by their byte-order mark; UTF-8 when there is none."""
    return next((enc for bom, enc in _BOMS if head.startswith(bom)), UTF8)


def bom_length(encoding: str) -> int:
    return {UTF8_BOM: 3, UTF16_LE: 2, UTF16_BE: 2}.get(encoding, 0)


def problem_of(head: bytes) -> str | None:
    """Why the bytes cannot be read as text (UTF-16 without a byte-order mark, binary), or None."""
    if encoding_of(head) in (UTF16_LE, UTF16_BE) or b"\x00" not in head:
        return None
    sample = head[:4096]
    even, odd = sample[0::2], sample[1::2]
    if odd and odd.count(0) * 2 >= len(odd) and even.count(0) * 8 < len(even):
        return f"UTF-16 LE text without a byte-order mark: the encoding cannot be told; {SAVE_AS}"
    if even and even.count(0) * 2 >= len(even) and odd.count(0) * 8 < len(odd):
        return f"UTF-16 BE text without a byte-order mark: the encoding cannot be told; {SAVE_AS}"
    return "binary file (NUL bytes), not text"


@dataclass(frozen=True)
class RawFile:
    """One raw input as read: its bytes on disk (hashed), its encoding and its text as UTF-8 bytes."""

    label: str  # the file as the user named it (or joined under the directory named)
    size: int  # bytes on disk
    sha256: str  # of the bytes on disk
    encoding: str  # one of ENCODINGS
    utf8: bytes  # the text as UTF-8 without a byte-order mark; a UTF-8 file's invalid bytes are kept as they are
    lines: int  # lines of the text (the last one counted whether or not it ends in a line break)


def _decode_utf16(raw: bytes, encoding: str, label: str) -> str:
    body = raw[2:]
    if len(body) % 2:
        raise TextInputError(f"{label}: {encoding.upper()} text of an odd number of bytes ({len(raw)}): cut short?")
    try:
        return body.decode(encoding)
    except UnicodeDecodeError as exc:
        offset = exc.start + 2
        line = body[: exc.start].decode(encoding, errors="replace").count("\n") + 1
        raise TextInputError(f"{label}: line {line} (byte {offset}): not {encoding.upper()} ({exc.reason})") from None


def read_raw(path: Path, label: str | None = None) -> RawFile:
    """Read one raw file whole; raise TextInputError (naming the file) when its text cannot be decoded."""
    name = label if label is not None else str(path)
    raw = Path(path).read_bytes()
    encoding = encoding_of(raw[:3])
    problem = problem_of(raw[:_HEAD])
    if problem:
        raise TextInputError(f"{name}: {problem}")
    if encoding in (UTF16_LE, UTF16_BE):
        utf8 = _decode_utf16(raw, encoding, name).encode("utf-8", errors="surrogatepass")
    else:
        utf8 = raw[bom_length(encoding) :]
    lines = utf8.count(b"\n") + (1 if utf8 and not utf8.endswith(b"\n") else 0)
    return RawFile(name, len(raw), hashlib.sha256(raw).hexdigest(), encoding, utf8, lines)


def utf8_bytes(path: Path, label: str | None = None) -> bytes:
    """The text of a log file as UTF-8 bytes without a byte-order mark (lines not UTF-8 stay for the caller
    to quarantine with their column)."""
    return read_raw(path, label).utf8


def read_text(path: Path, label: str | None = None) -> str:
    """The whole text of a small input (a copy-status export); a byte that is not UTF-8 is named with its line."""
    raw = read_raw(path, label)
    try:
        return raw.utf8.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.utf8[: exc.start].count(b"\n") + 1
        raise TextInputError(f"{raw.label}: line {line}: not UTF-8 ({exc.reason}); {SAVE_AS}") from None


def head_text(path: Path, size: int = _HEAD) -> tuple[str | None, str]:
    """(text, encoding) of a file's first `size` bytes, for content sniffing; text is None when the bytes
    cannot be read as text (then `encoding` holds the reason). Undecodable bytes become U+FFFD."""
    with Path(path).open("rb") as f:
        head = f.read(size)
    problem = problem_of(head)
    if problem:
        return None, problem
    encoding = encoding_of(head)
    body = head[bom_length(encoding) :]
    if encoding in (UTF16_LE, UTF16_BE):
        body = body[: len(body) - len(body) % 2]
        return body.decode(encoding, errors="replace"), encoding
    return body.decode("utf-8", errors="replace"), encoding


def custody(files: list[tuple[Path, str]]) -> dict[str, list]:
    """The chain-of-custody attributes of IMPORT_START for the raw files read, as parallel lists (issue 31):
    `raw_files` (names as given), `raw_bytes`, `raw_sha256`, `raw_lines`, `raw_encodings`."""
    facts = [read_raw(path, label) for path, label in files]
    return {
        "raw_files": [f.label for f in facts],
        "raw_bytes": [f.size for f in facts],
        "raw_sha256": [f.sha256 for f in facts],
        "raw_lines": [f.lines for f in facts],
        "raw_encodings": [f.encoding for f in facts],
    }
