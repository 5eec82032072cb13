"""The one definition of a valid row (`traces.rows`): it agrees with the published JSON Schema wherever the
schema speaks, each extra rule rejects what it must (and only that), and no input line, however damaged,
makes it raise. The engine-level property: random lines never crash `haconform check` and counts reconcile."""

from __future__ import annotations

import json
import string

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.cli import main
from tests.unit.test_traces_io import GOOD
from traces.rows import MAX_DEPTH, check_line, check_typed_row, nesting_depth, validate_row
from traces.schema import json_schema

pytestmark = pytest.mark.unit

SCHEMA = jsonschema.Draft202012Validator(json_schema())
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.text(max_size=5)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
FIELDS = list(GOOD)
rows = st.builds(
    lambda base, drop, changes: {k: v for k, v in {**base, **changes}.items() if k not in drop},
    st.just(GOOD),
    st.sets(st.sampled_from(FIELDS), max_size=1),
    st.dictionaries(st.sampled_from([*FIELDS, "extra"]), json_values, max_size=2),
)


def _has_integral_float(value) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(_has_integral_float(v) for v in value.values())
    return isinstance(value, list) and any(_has_integral_float(v) for v in value)


@given(rows)
def test_agrees_with_the_json_schema(row):
    """The schema counts 2.0 as an integer; this definition does not (Spark could not type it): the only gap."""
    if _has_integral_float(row):
        return
    assert (validate_row(row) is None) == SCHEMA.is_valid(row), (row, validate_row(row))


@given(st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_no_line_makes_it_raise(raw):
    row, problem = check_line(raw)
    assert (row is None) != (problem is None)


@pytest.mark.parametrize(
    ("text", "field", "reason"),
    [
        (json.dumps(GOOD) + " x", "", "data after the JSON value at column"),
        (json.dumps(GOOD)[:-1] + ', "seq": 1}', "", "key 'seq' appears twice in one object"),
        (json.dumps({**GOOD, "attrs": {"n": 2**63}}), "attrs", "attrs.n: integer out of 64-bit range"),
        (json.dumps({**GOOD, "attrs": {"n": [1, -(2**63) - 1]}}), "attrs", "integer out of 64-bit range"),
        (json.dumps({**GOOD, "seq": 2**63}), "seq", "out of 64-bit range"),
        (json.dumps({**GOOD, "seq": 1.0}), "seq", "expected integer, found number"),
        (json.dumps({**GOOD, "attrs": {"x": "\ud800"}}), "", "lone surrogate \\ud800"),
        (json.dumps({**GOOD, "attrs": {"x": float("nan")}}), "", "NaN is not a JSON number"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "", f"nested deeper than {MAX_DEPTH} levels"),
    ],
)
def test_each_rule_rejects_its_twin(text, field, reason):
    assert check_line(json.dumps(GOOD).encode()) == (GOOD, None)
    row, problem = check_line(text.encode())
    assert row is None and problem.field == field and reason in problem.reason, problem


def test_bytes_and_byte_order_marks():
    good = json.dumps(GOOD).encode()
    assert check_line(b"\xef\xbb\xbf" + good, first_line=True)[1] is None
    assert "not valid JSON" in check_line(b"\xef\xbb\xbf" + good, first_line=False)[1].reason
    bad = good.replace(b'"n"', b'"\xe9"')
    assert check_line(bad)[1].reason == f"not UTF-8: byte 0xe9 at byte offset {bad.index(0xE9)} of the line"
    assert check_line(b"\xef\xbb\xbf" + bad, first_line=True)[1].reason.endswith(f"{bad.index(0xE9) + 3} of the line")
    assert check_line(json.dumps({**GOOD, "node": "\U0001f600"}).encode())[1] is None  # a surrogate pair is fine


def test_depth_is_measured_without_recursion_and_ignores_brackets_in_strings():
    assert nesting_depth("[" * 1_000_000) == 1_000_000
    assert nesting_depth(json.dumps({"a": "[[[[" * 50})) == 1
    assert check_line(json.dumps({**GOOD, "entity": "[{" * 100}).encode())[1] is None


def test_parquet_cells_follow_the_same_order():
    cells = {**GOOD, "attrs": json.dumps(GOOD["attrs"])}
    assert check_typed_row(cells)[1] is None
    assert check_typed_row({**cells, "note": None})[1] is None  # an empty extra column is no field
    assert check_typed_row({**cells, "note": "x", "seq": None})[1] == ("note", "unknown field")
    assert check_typed_row({**cells, "seq": None, "kind": "9"})[1] == ("seq", "required field is missing")
    assert check_typed_row({**cells, "attrs": "{bad", "kind": "9"})[1].field == "attrs"
    bad_node = check_typed_row({**cells, "node": b"\xff", "kind": "9"})[1]
    assert bad_node == ("node", "not UTF-8: byte 0xff at byte offset 0")


lines = st.one_of(
    st.binary(max_size=60),
    json_values.map(lambda v: json.dumps(v).encode()),
    rows.map(lambda r: json.dumps(r).encode()),
    st.text(string.printable, max_size=40).map(str.encode),
)


@settings(max_examples=40)
@given(st.lists(lines, max_size=12))
def test_random_lines_never_crash_the_check_and_counts_reconcile(tmp_path_factory, raw_lines):
    tmp = tmp_path_factory.mktemp("prop")
    (tmp / "t.jsonl").write_bytes(b"\n".join(raw_lines))
    code = main(
        ["check", "--engine", "python", str(tmp / "t.jsonl"), "--out", str(tmp / "out"), "--quiet", "--allow-empty"]
    )
    summary = json.loads((tmp / "out" / "summary.json").read_text())
    if code == 2 and summary["verdict"] == "unknown":  # valid rows a monitor cannot judge (the gate's exit 2)
        assert summary["unknown_total"] > 0 and summary["violations_total"] == 0, summary
        return
    if code == 2:  # a whole file that is unusable: NUL bytes (binary, or UTF-16 without a byte-order mark),
        data = b"\n".join(raw_lines)  # a UTF-16 byte-order mark at its start, CR-only line ends (traces.io);
        err = summary["error"]  # or rows none of which is valid (conformance.report)
        assert (
            b"\x00" in data
            or data[:2] in (b"\xfe\xff", b"\xff\xfe")
            or ("CR line endings" in err and b"\r" in data)
            or err.startswith("no valid row: ")
            or " of trace schema version 1, not 2 " in err  # an older contract, recognised (traces.schema)
        ), summary
        assert summary["verdict"] == "unusable", summary
        return
    assert code in (0, 1)  # otherwise random lines are rows (good or quarantined) or blank
    assert summary["rows_read"] == summary["rows_checked"] + summary["rows_quarantined"]
