"""The trace contract is versioned (`traces.schema.SCHEMA_VERSION`, now 2): version 2 moved configuration
into SR_CONFIG / PF_CONFIG / AM_DAG_CONFIG, renamed SERVER_DIAL to AM_CONFIG and fixed orders at one instant.
A version-1 row is recognised, never judged by the current rules: the check exits 2 with one line saying
what is missing and how to produce it (`conformance.report.older_version_message`), in JSON Lines and in
Parquet (the column-wise path). Twins: the same traces at version 2 are judged clean; an unknown version is
an ordinary quarantined row."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from conformance.cli import main
from traces.corpus import SAMPLES_DIR
from traces.schema import SCHEMA_VERSION

pytestmark = pytest.mark.unit

CLEAN = SAMPLES_DIR / "clean"


def at_version(src: Path, dst: Path, version: int) -> Path:
    if src.suffix == ".parquet":
        table = pq.read_table(src)
        i = table.schema.get_field_index("schema_version")
        column = pc.cast(pa.array([version] * table.num_rows), table.schema.field(i).type)
        pq.write_table(table.set_column(i, table.schema.field(i), column), dst)
        return dst
    text = src.read_text(encoding="utf-8").replace('"schema_version":2,', f'"schema_version":{version},')
    dst.write_text(text, encoding="utf-8")
    return dst


def check(path: Path, out: Path) -> int:
    return main(["check", "--engine", "python", "--quiet", str(path), "--out", str(out)])


def test_the_current_version_is_2() -> None:
    assert SCHEMA_VERSION == 2
    assert '"schema_version":2,' in (CLEAN / "am-s1.jsonl").read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize("sample", ["am-s1.jsonl", "pf-s1.jsonl", "sr-s3.parquet"])
def test_a_version_1_trace_is_named_and_not_judged(sample: str, tmp_path: Path, capsys) -> None:
    old = at_version(CLEAN / sample, tmp_path / sample, 1)
    assert check(old, tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "of trace schema version 1, not 2 (first: " in err
    for needed in ("SR_CONFIG", "PF_CONFIG", "AM_DAG_CONFIG", "AM_CONFIG (was SERVER_DIAL)", "schema_version 2"):
        assert needed in err, needed


@pytest.mark.parametrize("sample", ["am-s1.jsonl", "pf-s1.jsonl", "sr-s3.parquet"])
def test_twin_the_same_trace_at_version_2_is_judged(sample: str, tmp_path: Path) -> None:
    assert check(at_version(CLEAN / sample, tmp_path / sample, 2), tmp_path / "o") == 0


def test_one_version_1_row_among_current_ones_still_stops_the_check(tmp_path: Path, capsys) -> None:
    lines = (CLEAN / "net-s1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = lines[5].replace('"schema_version":2,', '"schema_version":1,')
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(lines), encoding="utf-8")
    assert check(mixed, tmp_path / "o") == 2
    assert f"1 row(s) of trace schema version 1, not 2 (first: {mixed}:6)" in capsys.readouterr().err


def test_twin_an_unknown_version_is_a_quarantined_row(tmp_path: Path, capsys) -> None:
    lines = (CLEAN / "net-s1.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = lines[5].replace('"schema_version":2,', '"schema_version":7,')
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text("".join(lines), encoding="utf-8")
    assert check(mixed, tmp_path / "o") == 1  # a row breaking the schema (TR-005), the rest judged
    assert "field 'schema_version': must be 2" in capsys.readouterr().out
