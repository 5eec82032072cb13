"""One definition of a valid trace row, shared by both engines (requirement TR-005).

The pure-Python reader (`traces.io`) calls `check_line` on every JSON Lines line and `check_typed_row` on
every Parquet row (column-wise first, `traces.columnar`). The Spark jobs (`haconform check` and `haconform
ingest --engine spark`) parse and judge no row in the JVM: they read the raw rows (`spark_trace_check.raw`)
and judge each once in Python with these same functions (`spark_trace_check.raw.judge_rows`), so that
both engines quarantine the same rows with the same field and the same reason.

A valid JSON Lines row is, beyond `traces/event.schema.json`:
- UTF-8 (a byte-order mark is allowed at the start of the file only); a bad byte is reported with its
  byte offset in the line;
- exactly one JSON value on the line (no trailing data), with no key repeated inside one object, no
  `NaN`/`Infinity`, nested at most `MAX_DEPTH` levels (checked before parsing, so parsing never recurses
  deeply), and no string holding a lone UTF-16 surrogate (`"\\ud800"`), which is not Unicode text;
- integers written as JSON integers (`1`, not `1.0` or `1e0`) within the signed 64-bit range, in
  `attrs` too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from traces.schema import FIELD_NAMES, KIND_PATTERN, MECHANISMS, OLDER_VERSIONS, SCHEMA_VERSION

MAX_DEPTH = 32
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
BOM = b"\xef\xbb\xbf"
BLANK = b" \t\r"  # a line of only these bytes is blank, not a row
FIELD_ORDER = tuple(sorted(FIELD_NAMES))
INTEGER_FIELDS = ("schema_version", "seq", "ts_ms")
OLDER_VERSION_REASON = "an older trace contract: schema version"  # a quarantine reason the report turns into exit 2
NONEMPTY_FIELDS = ("event_id", "node", "trace_id")
_KIND = re.compile(KIND_PATTERN)
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
ATTR_RULE = "expected a string, integer, boolean, null, or an array of strings or of integers"


class Problem(NamedTuple):
    field: str  # "" when the row as a whole is bad
    reason: str


class _Duplicate(ValueError):
    pass


def is_blank(raw: bytes) -> bool:
    return not raw.strip(BLANK)


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside strings, by one linear scan (no recursion)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return text.count("[") + text.count("{")  # an upper bound, and small: enough to decide
    depth = deepest = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _surrogate(value: Any) -> str | None:
    """The first lone surrogate in any key or string of a decoded value (depth already bounded)."""
    stack = [value]
    while stack:
        item = stack.pop()
        texts: list[str] = []
        if isinstance(item, str):
            texts = [item]
        elif isinstance(item, dict):
            texts = list(item)
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))
        for text in texts:
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                return f"\\u{ord(text[exc.start]):04x}"
    return None


def parse_json(text: str) -> tuple[Any, Problem | None]:
    """Decode one JSON text by the rules above; the problem names the row as a whole (field "")."""
    if nesting_depth(text) > MAX_DEPTH:
        return None, Problem("", f"not valid JSON: nested deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_no_constant)
    except _Duplicate as exc:
        return None, Problem("", f"not valid JSON: key {exc.args[0]!r} appears twice in one object")
    except json.JSONDecodeError as exc:
        what = "data after the JSON value" if exc.msg == "Extra data" else exc.msg
        return None, Problem("", f"not valid JSON: {what} at column {exc.colno}")
    except ValueError as exc:
        return None, Problem("", f"not valid JSON: {exc}")
    if "\\u" in text:
        lone = _surrogate(value)
        if lone is not None:
            return None, Problem("", f"not valid JSON: a string holds a lone surrogate {lone}, which is not Unicode")
    return value, None


def decode_line(raw: bytes, first_line: bool) -> tuple[str | None, Problem | None]:
    """UTF-8 text of one line (a leading byte-order mark dropped on the first line), or the problem."""
    skip = len(BOM) if first_line and raw.startswith(BOM) else 0
    try:
        return raw[skip:].decode("utf-8"), None
    except UnicodeDecodeError as exc:
        offset = skip + exc.start
        return None, Problem("", f"not UTF-8: byte 0x{raw[offset]:02x} at byte offset {offset} of the line")


def check_line(raw: bytes, first_line: bool = False) -> tuple[dict[str, Any] | None, Problem | None]:
    """One JSON Lines line (without its line break) -> (the row, None) or (None, the problem)."""
    text, problem = decode_line(raw, first_line)
    if problem is not None:
        return None, problem
    assert text is not None
    if text.startswith("\ufeff"):
        return None, Problem("", "not valid JSON: a byte-order mark is allowed only at the start of the file")
    row, problem = parse_json(text)
    if problem is None:
        problem = validate_row(row)
    return (row, None) if problem is None else (None, problem)


def _int_problem(value: Any, lo: int, hi: int) -> str | None:
    if type(value) is not int:
        return f"expected integer, found {json_type(value)}"
    if not INT64_MIN <= value <= INT64_MAX:
        return "out of 64-bit range"
    return None if lo <= value <= hi else ("must be >= 0" if value < lo else f"must be {lo}")


def _version_problem(value: Any) -> str | None:
    """The current version passes; an older one this checker knows is named as such (`OLDER_VERSIONS`)."""
    if type(value) is int and value in OLDER_VERSIONS:
        return f"{OLDER_VERSION_REASON} {value}, not {SCHEMA_VERSION}"
    return _int_problem(value, SCHEMA_VERSION, SCHEMA_VERSION)


def _attr_problem(key: str, value: Any) -> str | None:
    if isinstance(value, list):
        kinds = {json_type(x) for x in value}
        if len(kinds) > 1 or not kinds <= {"string", "integer"}:
            return f"attrs.{key}: {ATTR_RULE}; found an array of {' and '.join(sorted(kinds))}"
        if any(json_type(x) == "integer" and not INT64_MIN <= x <= INT64_MAX for x in value):
            return f"attrs.{key}: integer out of 64-bit range"
        return None
    if json_type(value) == "integer" and not INT64_MIN <= value <= INT64_MAX:
        return f"attrs.{key}: integer out of 64-bit range"
    if json_type(value) in ("array", "object", "number"):
        return f"attrs.{key}: {ATTR_RULE}; found {json_type(value)}"
    return None


def _field_problem(name: str, value: Any) -> str | None:
    if name == "attrs":
        if not isinstance(value, dict):
            return f"expected object, found {json_type(value)}"
        return next((p for k in sorted(value) if (p := _attr_problem(k, value[k]))), None)
    if name == "schema_version":
        return _version_problem(value)
    if name in INTEGER_FIELDS:
        return _int_problem(
            value,
            SCHEMA_VERSION if name == "schema_version" else 0,
            SCHEMA_VERSION if name == "schema_version" else INT64_MAX,
        )
    if not isinstance(value, str):
        return f"expected string, found {json_type(value)}"
    if name in NONEMPTY_FIELDS and not value:
        return "must be a non-empty string"
    if name == "kind" and not _KIND.match(value):
        return f"must match {KIND_PATTERN}"
    if name == "mechanism" and value not in MECHANISMS:
        return f"must be one of {list(MECHANISMS)}"
    return None


def validate_row(row: Any) -> Problem | None:
    """The first problem of a decoded row, in a fixed order: not an object, unknown field (alphabetical),
    missing field (alphabetical), then a wrong type or value (fields alphabetical)."""
    if not isinstance(row, dict):
        return Problem("", f"row is a JSON {json_type(row)}, expected an object")
    unknown = sorted(set(row) - set(FIELD_NAMES))
    if unknown:
        return Problem(unknown[0], "unknown field")
    for name in FIELD_ORDER:
        if name not in row:
            return Problem(name, "required field is missing")
    for name in FIELD_ORDER:
        reason = _field_problem(name, row[name])
        if reason is not None:
            return Problem(name, reason)
    return None


def check_typed_row(cells: Mapping[str, Any]) -> tuple[dict[str, Any] | None, Problem | None]:
    """One Parquet row: typed cells (strings may still be bytes); a null cell is an absent field. Order:
    a column outside the schema holding a value (unknown field), a string that is not UTF-8, a missing
    field, then a wrong value (fields alphabetical); `attrs` is JSON text judged by `parse_json`."""
    present = {k: v for k, v in cells.items() if v is not None}
    unknown = sorted(k for k in present if k not in FIELD_NAMES)
    if unknown:
        return None, Problem(unknown[0], "unknown field")
    row: dict[str, Any] = {}
    for name in sorted(present):
        value = present[name]
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError as exc:
                return None, Problem(name, f"not UTF-8: byte 0x{value[exc.start]:02x} at byte offset {exc.start}")
        row[name] = value
    problem = validate_row({k: v if k != "attrs" else {} for k, v in row.items()})
    if problem is not None and problem.reason in ("unknown field", "required field is missing"):
        return None, problem
    if "attrs" in row:
        if not isinstance(row["attrs"], str):
            return None, Problem("attrs", f"expected JSON text, found {json_type(row['attrs'])}")
        attrs, bad = parse_json(row["attrs"])
        if bad is not None:
            return None, Problem("attrs", bad.reason)
        row["attrs"] = attrs
        reason = _field_problem("attrs", attrs)
        if reason is not None:
            return None, Problem("attrs", reason)
    return (row, None) if problem is None else (None, problem)
