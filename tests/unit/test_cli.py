"""The command line: every subcommand has --help; spec JSON shape; simulate is byte-reproducible."""

from __future__ import annotations

import json

import pytest

from conformance.cli import build_parser, main

pytestmark = pytest.mark.unit


def _subcommands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)


def test_every_subcommand_has_help(capsys):
    names = _subcommands()
    assert {"spec", "simulate", "check", "samples"} <= set(names)
    for name in names:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0
        assert "usage: haconform" in capsys.readouterr().out


def test_spec_json_lists_every_requirement_with_required_keys(capsys):
    assert main(["spec", "--json"]) == 0
    items = json.loads(capsys.readouterr().out)
    assert len(items) == len({i["id"] for i in items})
    for item in items:
        assert {"id", "mechanism", "kind", "statement", "sources"} <= set(item)
        assert all({"seed", "section"} <= set(s) for s in item["sources"])


def test_spec_one_entry_and_unknown_id(capsys):
    assert main(["spec", "SR-P13"]) == 0
    assert "ShadowHeartbeatFrequency" in capsys.readouterr().out
    assert main(["spec", "XX-999"]) == 2


def test_simulate_writes_identical_files_for_one_seed(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["simulate", "net", "--seed", "9", "--out", str(a)]) == 0
    assert main(["simulate", "net", "--seed", "9", "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes() and a.stat().st_size > 0
    assert main(["simulate", "nope", "--seed", "1", "--out", str(a)]) == 2
    assert main(["simulate", "net", "--seed", "1", "--mutant", "nope", "--out", str(a)]) == 2


def test_python_engine_exit_codes(tmp_path, capsys):
    clean = tmp_path / "clean.jsonl"
    assert main(["simulate", "net", "--seed", "2", "--out", str(clean)]) == 0
    assert main(["check", "--engine", "python", str(clean), "--out", str(tmp_path / "o1")]) == 0
    bad = tmp_path / "bad.jsonl"
    assert main(["simulate", "net", "--seed", "2", "--mutant", "seq-repeat", "--out", str(bad)]) == 0
    assert main(["check", "--engine", "python", str(bad), "--out", str(tmp_path / "o2")]) == 1
    summary = json.loads((tmp_path / "o2" / "summary.json").read_text())
    assert summary["verdict"] == "invalid" and summary["counts_reconcile"]
    violations = [json.loads(x) for x in (tmp_path / "o2" / "violations.jsonl").read_text().splitlines()]
    assert violations and all(v["events"] for v in violations)
    assert main(["check", "--engine", "python", str(tmp_path / "missing"), "--out", str(tmp_path / "o3")]) == 2


def test_samples_default_out_is_the_repository_sample_corpus() -> None:
    """`haconform samples` with no --out regenerates the committed corpus (traces/samples at the repository's
    root), not a directory beside the CLI package; twin: the package's parent's traces/ is not that place."""
    from pathlib import Path

    import conformance.cli as cli_package
    from conformance.cli import build_parser

    root = Path(__file__).resolve().parents[2]
    args = build_parser().parse_args(["samples"])
    assert Path(args.out) == root / "traces" / "samples"
    assert (root / "traces" / "samples" / "clean").is_dir()
    wrong = Path(cli_package.__file__).resolve().parent.parent / "traces" / "samples"
    assert Path(args.out) != wrong
