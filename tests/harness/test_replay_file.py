"""Replay files (issue 24): the versioned format, validated on load; steps in the protocol's shapes; the full
setup written. Each bad file (the twins) is exit 2 with one message naming the step index and field."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.harness.core import Failure, Step
from conformance.harness.replayfile import REPLAY_FORMAT, ReplayFileError, validate
from conformance.harness.report import failure_json

pytestmark = pytest.mark.model
REPLAYS = Path(__file__).parent / "replays"
RETRY = REPLAYS / "am-retry-failed-mount.json"


def test_the_hand_made_retry_replay_passes_on_the_model_and_fails_on_the_mutant(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every mount fails (setup.mount_fail 1.0): the model goes on to the next copy and passes; the mutant
    mounts the failed copy again and the replay fails under next-best-copy (AM-025), the AM-I12 statement."""
    assert main(["replay", str(RETRY)]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["replay", str(RETRY), "--mutant", "retry-failed-mount"]) == 1
    out = capsys.readouterr().out
    assert "violated: next-best-copy (AM-025)" in out


def _bad(tmp_path: Path, change: Any) -> tuple[int, str, str]:
    data = json.loads(RETRY.read_text(encoding="utf-8"))
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    code = main(["replay", str(path)])
    return code, "", str(path)


def _set(path: list[Any], value: Any) -> Any:
    def change(data: dict[str, Any]) -> None:
        at = data
        for p in path[:-1]:
            at = at[p]
        at[path[-1]] = value

    return change


CALL0 = ["steps", 0, "calls", 0]
BAD = {
    "format": (_set(["format"], "haconform-replay/9"), "field 'format'"),
    "mechanism": (_set(["mechanism"], "xx"), "field 'mechanism'"),
    "setup missing": (lambda d: d["setup"].pop("copies"), "setup.copies: missing"),
    "setup unknown": (_set(["setup", "colour"], "red"), "setup.colour: not a field"),
    "setup type": (_set(["setup", "mount_fail"], "often"), "setup.mount_fail"),
    "bcss option": (_set(["setup", "bcss"], {"ordre": "TierMajor"}), "setup.bcss.ordre: not a BCSS option"),
    "bcss type": (_set(["setup", "bcss"], {"require_status": "yes"}), "setup.bcss.require_status"),
    "dial": (_set(["setup", "default_dial"], "Fast"), "setup.default_dial"),
    "step shape": (_set(["steps", 1], {"op": "x"}), "steps[1]: a step is an object"),
    "call name": (_set([*CALL0, "call"], "explode"), "steps[0].calls[0].call: 'explode' is not an operation"),
    "changes status": (
        _set([*CALL0, "args", "changes"], {"status": "Exploded"}),
        "steps[0].calls[0].args.changes.status",
    ),
    "changes empty": (_set([*CALL0, "args", "changes"], {}), "steps[0].calls[0].args.changes"),
    "extra arg": (_set([*CALL0, "args", "colour"], 1), "steps[0].calls[0].args"),
    "unknown db": (_set(["steps", 1, "calls", 0, "args", "db"], "DB9"), "steps[1].calls[0].args.db: 'DB9'"),
    "unknown server": (_set([*CALL0, "args", "server"], "MBX9"), "steps[0].calls[0].args.server: 'MBX9'"),
    "restart args": (
        _set(["steps", 1, "calls", 0], {"call": "kill_and_restart", "args": {"new_state": "no"}}),
        "steps[1].calls[0].args: kill_and_restart",
    ),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_replay_file_is_exit_2_with_one_message_naming_the_field(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    change, field = BAD[name]
    code, _, path = _bad(tmp_path, change)
    captured = capsys.readouterr()
    assert code == 2, captured
    assert field in captured.err and path in captured.err, captured.err
    assert "Traceback" not in captured.err + captured.out and captured.err.count("\n") == 1


def test_not_json_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.json"
    path.write_text("{not json", encoding="utf-8")
    assert main(["replay", str(path)]) == 2
    assert "not a readable replay file" in capsys.readouterr().err


def test_set_copy_in_the_protocol_shape_is_applied() -> None:
    """`set_copy` with `changes` (as PROTOCOL.md writes it) reaches the model: the copy's replay queue moves."""
    from conformance.harness.core import replay_steps
    from conformance.harness.search import driver

    data = json.loads(RETRY.read_text(encoding="utf-8"))
    drv = driver("am")
    _session, per_step = replay_steps(drv, drv.model_factory()(data["setup"]), data["setup"], data["steps"][:1])
    states = [e for e in per_step[0][1] if e.kind == "COPY_STATE" and e.attrs["server"] == "MBX3"]
    assert states and states[-1].attrs["rq"] == 49


def test_a_version_1_file_with_flattened_set_copy_is_read_in_the_protocol_shape() -> None:
    data = json.loads(RETRY.read_text(encoding="utf-8"))
    v1 = copy.deepcopy(data)
    v1["format"] = "haconform-replay/1"
    v1["steps"][0]["calls"][0]["args"] = {"db": "DB1", "server": "MBX3", "replay_queue": 49}
    assert validate(v1)["steps"][0]["calls"][0]["args"] == data["steps"][0]["calls"][0]["args"]
    # twin: a version 2 file must use the protocol's shape
    with pytest.raises(ReplayFileError, match=r"steps\[0\]\.calls\[0\]\.args"):
        validate({**v1, "format": REPLAY_FORMAT})


def test_the_written_file_holds_the_full_setup_and_reads_back() -> None:
    from conformance.harness.am import _setup

    setup = _setup(5, {})
    f = Failure("am", setup, [Step("fail_database", [{"call": "fail_database", "args": {"db": "DB1"}}])], [])
    data = json.loads(json.dumps(failure_json(f)))
    assert data["format"] == REPLAY_FORMAT
    bcss = data["setup"]["bcss"]
    assert {"order", "up_to_normal", "require_status", "dial_scope", "thresholds"} <= set(bcss), bcss
    assert data["setup"]["default_dial"] and validate(data)["setup"] == data["setup"]
