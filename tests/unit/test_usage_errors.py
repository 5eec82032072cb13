"""Usage errors exit 2 with one line naming the problem, never 3 (an internal error): `simulate` with an
output name that is no trace format or an option the model does not take, `validate-config` on a missing
file, a JSON Lines input none of whose rows is valid, a file with CR-only line endings. Each beside its twin:
the same command with the mistake corrected succeeds (or is judged)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.unit

CLEAN = SAMPLES_DIR / "clean" / "net-s1.jsonl"


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err and "Traceback" not in err, err
    return err


def test_simulate_out_of_no_trace_format(tmp_path: Path, capsys) -> None:
    assert main(["simulate", "net", "--seed", "1", "--out", str(tmp_path / "x.csv")]) == 2
    assert "--out" in (err := one_line(capsys)) and "x.csv: unknown trace format" in err and ".parquet" in err
    assert not (tmp_path / "x.csv").exists()
    assert main(["simulate", "net", "--seed", "1", "--out", str(tmp_path / "x.jsonl")]) == 0  # twin


@pytest.mark.parametrize("mechanism", ["net", "sr"])
def test_simulate_with_an_option_the_model_does_not_take(mechanism: str, tmp_path: Path, capsys) -> None:
    out = str(tmp_path / "x.jsonl")
    assert main(["simulate", mechanism, "--seed", "1", "--out", out, "--opt", "no_such_option=1"]) == 2
    err = one_line(capsys)
    assert f"{mechanism} has no option 'no_such_option'" in err and "n_servers" in err


def test_twin_simulate_with_a_known_option(tmp_path: Path) -> None:
    assert main(["simulate", "net", "--seed", "1", "--out", str(tmp_path / "x.jsonl"), "--opt", "n_servers=3"]) == 0


def test_validate_config_on_a_missing_file(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "deploy.toml"
    assert main(["validate-config", str(missing)]) == 2
    err = one_line(capsys)
    assert f"{missing}: cannot read the deployment file: no such file" in err and "Errno" not in err
    missing.write_text('[sr]\nShadowHeartbeatFrequency = "90s"\n')
    assert main(["validate-config", str(missing)]) == 0  # twin: the file is there


def test_a_jsonl_file_with_no_valid_row_is_unusable(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n{"b": 2}\n', encoding="utf-8")
    assert main(["check", "--engine", "python", "--quiet", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "no valid row: all 2 row(s) read from 1 file(s) break the trace schema" in err
    assert f"{bad}:1: field 'a'" in err


def test_twin_one_valid_row_makes_it_a_verdict(tmp_path: Path) -> None:
    """Bad rows beside valid ones are quarantined and judged: a verdict (exit 1), not an unusable input."""
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(CLEAN.read_text(encoding="utf-8") + '{"a": 1}\n', encoding="utf-8")
    assert main(["check", "--engine", "python", "--quiet", str(mixed), "--out", str(tmp_path / "o")]) == 1


def test_cr_line_endings_are_named(tmp_path: Path, capsys) -> None:
    cr = tmp_path / "cr.jsonl"
    cr.write_bytes(CLEAN.read_bytes().replace(b"\n", b"\r"))
    assert main(["check", "--engine", "python", "--quiet", str(cr), "--out", str(tmp_path / "o")]) == 2
    assert "uses CR line endings" in capsys.readouterr().err


def test_twin_crlf_line_endings_are_read(tmp_path: Path) -> None:
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes(CLEAN.read_bytes().replace(b"\n", b"\r\n"))
    assert main(["check", "--engine", "python", "--quiet", str(crlf), "--out", str(tmp_path / "o")]) == 0
