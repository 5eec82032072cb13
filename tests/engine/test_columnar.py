"""The column-wise Parquet fast path (`traces.columnar`) is a sufficient condition of `traces.rows`: it
never accepts a row the full judgement rejects, and the events it builds equal the full judgement's."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from traces.columnar import canonical_value, judge_batch, judge_columns, plain_attrs, scanned_value
from traces.io import TraceFile, iter_parquet
from traces.rows import check_typed_row
from traces.schema import Event, arrow_schema

pytestmark = pytest.mark.unit

GOOD = {
    "schema_version": 2,
    "trace_id": "t",
    "seq": 0,
    "event_id": "e",
    "ts_ms": 5,
    "node": "n",
    "mechanism": "sr",
    "entity": "m",
    "kind": "K_1",
    "attrs": '{"a":1,"b":["x"],"c":null,"d":true}',
}
VARIANTS = [
    {},
    {"seq": -1},
    {"ts_ms": -2},
    {"schema_version": 3},
    {"schema_version": 1},
    {"trace_id": ""},
    {"event_id": ""},
    {"node": ""},
    {"mechanism": "xx"},
    {"kind": "1bad"},
    {"kind": "ok\n"},
    {"kind": "a b"},
    {"attrs": "[]"},
    {"attrs": '{"a":1.5}'},
    {"attrs": '{"a":1,"a":2}'},
    {"attrs": '{"a":NaN}'},
    {"attrs": '{"a":[1,"x"]}'},
    {"attrs": '{"a":[true]}'},
    {"attrs": '{"a":{"b":1}}'},
    {"attrs": '{"a":1} x'},
    {"attrs": '{"a":' + "[" * 40 + "]" * 40 + "}"},
    {"attrs": '{"a":"\\ud800"}'},
    # escapes on the canonical path (session 14: no pre-check of `\u` there): a control character's escape is
    # canonical and valid, a lone surrogate in a key or an array is not decoded by msgspec, a pair is not canonical
    {"attrs": '{"a":"\\u001f"}'},
    {"attrs": '{"a":["x\\u0000",""]}'},
    {"attrs": '{"\\ud800":1}'},
    {"attrs": '{"a":["\\udc00"]}'},
    {"attrs": '{"a":"\\ud83d\\ude00"}'},
    {"attrs": '{"a":"\\u00e9"}'},
    {"attrs": '{"a":99999999999999999999}'},
    {"attrs": '{"a":[]}'},
    {"attrs": "{}"},
    {"attrs": " {} "},
    {"attrs": ' {"a":1}'},
    {"attrs": '{"a":1} '},
    {"attrs": '{"a":{}}'},
    {"attrs": '{"a":[{}]}'},
    {"attrs": '{"a":[{"b":1}]}'},
    {"attrs": '{"a":[[1]]}'},
    {"attrs": '{"a":"x","b":{"c":1,"c":2}}'},
    {"attrs": '"text"'},
    {"attrs": "{"},
    {"entity": "other", "node": "n2"},
    {"trace_id": None},
    {"attrs": None},
]


def _batch(rows: list[dict]) -> pa.RecordBatch:
    schema = pa.schema(
        [
            ("schema_version", pa.int32()),
            ("trace_id", pa.string()),
            ("seq", pa.int64()),
            ("event_id", pa.string()),
            ("ts_ms", pa.int64()),
            ("node", pa.string()),
            ("mechanism", pa.string()),
            ("entity", pa.string()),
            ("kind", pa.string()),
            ("attrs", pa.string()),
            ("extra", pa.string()),
        ]
    )
    return pa.RecordBatch.from_pylist(rows, schema=schema)


def test_fast_path_agrees_with_the_full_judgement():
    rows = [{**GOOD, "extra": None, **v} for v in VARIANTS] + [{**GOOD, "extra": "set"}]
    got = list(judge_batch(_batch(rows)))
    for row, (event, problem) in zip(rows, got, strict=True):
        want_row, want_problem = check_typed_row(row)
        assert problem == want_problem, row
        assert event == (Event.from_row(want_row) if want_row is not None else None), row
    assert sum(e is not None for e, _ in got) >= 5  # the good ones pass (not a check that rejects all)


def test_plain_attrs_only_accepts_what_the_rows_module_accepts():
    assert plain_attrs('{"a":[1,2],"b":"x"}') == {"a": [1, 2], "b": "x"}
    assert plain_attrs("{}") == {}
    for bad in ('{"a":1,"a":1}', '{"a":1.0}', '{"a":-Infinity}', "1", '{"a":[1,true]}', '{"a":{}}', "[]", "{} x"):
        assert plain_attrs(bad) is None, bad


def test_invalid_utf8_column_is_judged_row_by_row():
    cols = {k: [v, v] for k, v in GOOD.items()}
    cols["node"] = pa.array([b"ok", b"\xff"], type=pa.binary()).cast(pa.string(), safe=False)
    batch = pa.RecordBatch.from_pydict(cols)
    (e1, p1), (e2, p2) = judge_batch(batch)
    assert p1 is None and e1 is not None and e1.node == "ok"
    assert e2 is None and p2.field == "node" and p2.reason.startswith("not UTF-8: byte 0xff")


def test_canonical_decoding_takes_only_text_that_encodes_back_the_same():
    """msgspec's decoding (issue 32) is trusted only for canonical text; any other goes to the pairs scan."""
    assert canonical_value('{"a":[1,2],"b":"x","c":null}') == {"a": [1, 2], "b": "x", "c": None}
    for other in ('{"b":1,"a":2}', '{"a":1,"a":1}', '{"a": 1}', '{"a":-0}', '{"a":1E2}', ' {"a":1}', "[1]", "{"):
        assert canonical_value(other) is None, other
    assert plain_attrs('{"b":1,"a":2}') == {"b": 1, "a": 2}  # plain, not canonical: the scan accepts it
    for v in VARIANTS:  # whatever it accepts, it decodes as the standard library does
        text = v.get("attrs")
        if isinstance(text, str) and canonical_value(text) is not None:
            assert canonical_value(text) == json.loads(text), text
    assert scanned_value('{"a":1,"a":1}') is None and scanned_value('{"a":{"b":1}}') == {"a": (("b", 1),)}


def test_rows_sharing_an_attrs_text_are_judged_each():
    """A batch parses each distinct attrs text once: a bad text held by several rows fails each of them."""
    rows = [{**GOOD, "extra": None, "seq": i, "attrs": '{"a":1.5}' if i % 2 else GOOD["attrs"]} for i in range(6)]
    got = list(judge_batch(_batch(rows)))
    assert [p is None for _, p in got] == [True, False] * 3
    assert [e.attrs for e, _ in got if e is not None] == [{"a": 1, "b": ["x"], "c": None, "d": True}] * 3


def test_a_batch_of_valid_rows_is_built_column_wise_as_the_full_judgement_builds_it():
    """The usual batch (every row passes `fast_mask`, every attrs text plain, canonical or not) is built without
    a loop per row (`judge_columns`); its events are the full judgement's, in row order. Twin: one row with
    a mixed array (canonical text: msgspec's typed decoding takes it, `_one_kind` must not) sends the batch
    row by row, and that row alone is quarantined."""
    texts = [GOOD["attrs"], '{"b":1,"a":[2,3]}', "{}", '{"a":"x","b":[]}', '{"a":[1,2],"b":"x","c":-5}']
    rows = [{**GOOD, "extra": None, "seq": i, "attrs": t, "node": f"n{i % 2}"} for i, t in enumerate(texts * 3)]
    events, problems = judge_columns(_batch(rows))
    assert problems == []
    assert events == [Event.from_row(check_typed_row(row)[0]) for row in rows]
    assert events[0].attrs is events[5].attrs  # a text shared by rows is parsed once
    mixed = [*rows, {**GOOD, "extra": None, "seq": 99, "attrs": '{"a":[1,"x"]}'}]
    events, problems = judge_columns(_batch(mixed))
    assert [i for i, _ in problems] == [len(rows)] and problems[0][1] == check_typed_row(mixed[-1])[1]
    assert len(events) == len(rows)


def test_plain_attrs_takes_utf8_bytes_as_text():
    for v in VARIANTS:
        text = v.get("attrs")
        if isinstance(text, str):
            assert plain_attrs(text.encode()) == plain_attrs(text), text
    assert plain_attrs(b'{"a":[1,"x"]}') is None and plain_attrs(b'{"a":1.0}') is None


def _write(path, texts: list[str]) -> None:
    rows = [{**GOOD, "seq": i, "event_id": f"e{i}", "attrs": t} for i, t in enumerate(texts)]
    pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema()), path)


def test_a_bad_text_among_thousands_of_good_ones_is_reported_at_its_row(tmp_path):
    """Texts are parsed once per distinct text of a batch (`judge_columns`): a non-canonical, invalid text (a
    repeated key) in one row among thousands holding one good text is still reported at its row, by file, row
    and field, in every batch that holds it (twice in one batch too); the good rows give the events of the full
    judgement. Twin: the same file with the good text alone gives no error and every event."""
    texts = [GOOD["attrs"]] * 6000
    bad = '{"a":1,"a":1}'
    rows = (1234, 3500, 4321, 4322)  # batches 2 and 4 of 6, and twice in batch 5
    for row in rows:
        texts[row] = bad
    path = tmp_path / "t.parquet"
    _write(path, texts)
    tf = TraceFile("t.parquet", str(path), "parquet")
    parts = list(iter_parquet(tf, batch_size=1000))
    errors = [e for p in parts for e in p.errors]
    want = check_typed_row({**GOOD, "attrs": bad})[1]
    assert [(e.file, e.line, e.field, e.reason) for e in errors] == [
        ("t.parquet", row + 1, want.field, want.reason) for row in rows
    ]
    assert want.field == "attrs" and sum(len(p.events) for p in parts) == 5996
    assert all(p.reconciles() for p in parts)
    events = [e for p in parts for e in p.events]
    assert events[0] == Event.from_row(check_typed_row({**GOOD, "event_id": "e0"})[0])
    _write(path, [GOOD["attrs"]] * 6000)
    parts = list(iter_parquet(tf, batch_size=1000))
    assert [e for p in parts for e in p.errors] == [] and sum(len(p.events) for p in parts) == 6000
