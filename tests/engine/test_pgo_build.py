"""The compiled path's profile-guided build (issue 32, session 27; `scripts/pgo.py`, `scripts/build_fast.py --pgo`).

What is checked here without compiling: the orchestration (instrumented stage, training, profiled stage; the
fallback to a build without a profile when the training fails, never an instrumented build left in place), the
training's failure report, and the compiler check. The profiled build itself is what `scripts/install.sh` makes, so
the compiled-path tests (`-m fast`: compiled and pure verdicts equal) run against it wherever the install ran.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import build_fast  # noqa: E402
import pgo  # noqa: E402

pytestmark = pytest.mark.unit


def _fake_stages(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """`_stage` replaced by one that writes a manifest of one module and records the flags of each stage."""
    calls: list[list[str]] = []

    def stage(directory: Path, jobs: int, flags: list[str]) -> None:
        assert not directory.exists(), "each stage starts from an empty directory"
        directory.mkdir(parents=True)
        calls.append(list(flags))
        build_fast.write_manifest(directory, {"m": {"file": "m.so"}}, {"used": False})

    monkeypatch.setattr(build_fast, "_stage", stage)
    monkeypatch.setattr(pgo, "missing", lambda: "")
    return calls


def test_pgo_builds_instrumented_trains_then_builds_with_the_profile(tmp_path, monkeypatch):
    calls = _fake_stages(monkeypatch)
    trained_on: list[Path] = []
    monkeypatch.setattr(pgo, "train", lambda build, work: trained_on.append(build) or ["a", "b"])
    out = tmp_path / ".fast"
    assert build_fast.build_pgo(out, 1) == 0
    stage = tmp_path / ".fast.pgo"
    assert calls == [pgo.generate_flags(stage / "profile"), pgo.use_flags(stage / "profile")]
    assert trained_on == [stage / "build"]  # the training ran on the instrumented stage
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pgo"] == {"used": True, "trained_on": ["a", "b"]} and manifest["modules"] == {
        "m": {"file": "m.so"}
    }
    assert not stage.exists()  # the staging directory (instrumented build, profile) is gone


def test_pgo_falls_back_to_a_build_without_a_profile_when_the_training_fails(tmp_path, monkeypatch):
    """Twin of the above: the second stage has no profile flags and the manifest says why."""
    calls = _fake_stages(monkeypatch)

    def fail(build: Path, work: Path) -> list[str]:
        raise RuntimeError("training command x exited 3")

    monkeypatch.setattr(pgo, "train", fail)
    out = tmp_path / ".fast"
    assert build_fast.build_pgo(out, 1) == 0
    assert calls[0] == pgo.generate_flags(tmp_path / ".fast.pgo" / "profile") and calls[1] == []
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["pgo"]["used"] is False and "training command x exited 3" in manifest["pgo"]["why"]


def test_pgo_without_gcc_builds_once_without_a_profile(tmp_path, monkeypatch):
    calls = _fake_stages(monkeypatch)
    monkeypatch.setattr(pgo, "missing", lambda: "the C compiler cc is not GCC")
    monkeypatch.setattr(pgo, "train", lambda build, work: pytest.fail("no training without GCC"))
    out = tmp_path / ".fast"
    assert build_fast.build_pgo(out, 1) == 0
    assert calls == [[]]
    assert json.loads((out / "manifest.json").read_text())["pgo"] == {
        "used": False,
        "why": "the C compiler cc is not GCC",
    }


def test_training_names_the_command_that_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(pgo, "TRAINING", (("fine", ("-c", "pass"), (0,)), ("bad", ("-c", "raise SystemExit(3)"), (0,))))
    with pytest.raises(RuntimeError, match=r"-c raise SystemExit\(3\) exited 3 \(expected \(0,\)\)"):
        pgo.train(tmp_path / "build", tmp_path / "work")
    monkeypatch.setattr(pgo, "TRAINING", (("fine", ("-c", "pass"), (0,)), ("ok", ("-c", "raise SystemExit(1)"), (1,))))
    assert pgo.train(tmp_path / "build", tmp_path / "work") == ["fine", "ok"]


def test_training_loads_the_build_it_trains(tmp_path, monkeypatch):
    """The training's commands run with the instrumented build as the compiled path (`HACONFORM_FAST_DIR`) and not
    pure, whatever the caller's environment."""
    monkeypatch.setenv("HACONFORM_PURE", "1")
    probe = (
        "import os, sys; "
        "sys.exit(0 if os.environ['HACONFORM_FAST_DIR'] == sys.argv[1] and 'HACONFORM_PURE' not in os.environ else 5)"
    )
    monkeypatch.setattr(pgo, "TRAINING", (("env", ("-c", probe, "{work}"), (0,)),))
    assert pgo.train(tmp_path, tmp_path) == ["env"]
    with pytest.raises(RuntimeError, match="exited 5"):
        pgo.train(tmp_path / "elsewhere", tmp_path)


def test_compiler_check(tmp_path, monkeypatch):
    """GCC here passes the check (the trial compiles with both stages' flags); a compiler that says it is not GCC is
    refused with the reason (twin)."""
    if pgo.missing():
        pytest.skip(f"no GCC that takes the profile flags here ({pgo.missing()})")
    fake = tmp_path / "clang"
    fake.write_text('#!/bin/sh\necho "clang version 17.0.0"\n')
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    assert "is not GCC" in pgo.missing()


def test_pgo_refuses_a_partial_build(capsys):
    assert build_fast.main(["--pgo", "--module", "traces.event"]) == 2
    assert "--pgo builds every module" in capsys.readouterr().err
