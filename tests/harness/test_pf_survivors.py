"""The three public folder mutants the harness's inputs could not reach, and the steps that reach them.

- `ignore-delete-limit` (packing-limits, PF-011): folders deleted together (`scratch_folders`, `delete_folders`)
  with the deleted-folder limit the setup draws (1, 2 or the seed's 500), recorded in PF_CONFIG and judged from
  there;
- `replicate-local-folder` (non-replicating-folder, PF-004): a local folder (`create_local_folder`);
- `pending-confirms-pending` (no-content-loss, BF-033): two replicas removed at once, each on its own store
  (`remove_two_at_once`, BF-I14).

Each minimal counterexample is a replay file: the mutant fails it by its rule, the honest model and the reference
system (`examples/sut/pf_node.py`, behind the adapter) pass it. The searches themselves (`haconform mutants pf
--only NAME`) are marked slow."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cli import main
from conformance.harness.core import Session
from conformance.harness.pf import DRIVER, LINKS, SERVERS, params_of
from conformance.harness.systems import pf_config

ROOT = Path(__file__).resolve().parents[2]
SUT = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'}"
MIN = 60_000


def _c(call: str, **args: Any) -> dict[str, Any]:
    return {"call": call, "args": args}


def _setup(limit: int, seed: int = 7) -> dict[str, Any]:
    return {
        "seed": seed,
        "faults": False,
        "stores": [list(s) for s in SERVERS],
        "links": [list(link) for link in LINKS],
        "latency_max_ms": 2 * MIN,
        "deleted_folder_limit": limit,
    }


def _f(k: int) -> dict[str, int]:
    return {"$folder": k}


OPENING = {"op": "create_folder", "calls": [_c("create_folder", via="A", name="f0")]}
SCRATCH = [
    {"op": "scratch_folders", "calls": [_c("create_folder", via="A", name=f"scratch{i}") for i in (1, 2)]},
    {"op": "scratch_folders", "calls": [_c("delete_folder", via="A", fid=_f(k)) for k in (1, 2)]},
    {"op": "advance", "calls": [_c("advance", ms=10 * MIN)]},
]
LOCAL = [
    {
        "op": "create_local_folder",
        "calls": [_c("create_folder", via="A", name="Views1", tree="NON_IPM", replicating=False)],
    },
    {"op": "post", "calls": [_c("post", store="A", fid=_f(1), size_kb=1)]},
    {"op": "client", "calls": [_c("client_access", store="A", fid=_f(1))]},
    {"op": "advance", "calls": [_c("advance", ms=30 * MIN)]},
]
TWO_AT_ONCE = [
    {
        "op": "remove_two_at_once",
        "calls": [
            _c("add_replica", fid=_f(0), server="B", via="A"),
            _c("advance", ms=20 * MIN),
            *[_c("post", store="A", fid=_f(0), size_kb=5)] * 3,
            _c("advance", ms=20 * MIN),
            _c("remove_replica", fid=_f(0), server="A", via="A"),
            _c("remove_replica", fid=_f(0), server="B", via="B"),
            _c("advance", ms=60 * MIN),
            _c("add_replica", fid=_f(0), server="C", via="A"),
        ],
    }
]
# mutant -> (its rule, the deleted-folder limit of the setup, the steps after the opening)
CASES = {
    "ignore-delete-limit": ("packing-limits", 1, SCRATCH),
    "replicate-local-folder": ("non-replicating-folder", 500, LOCAL),
    "pending-confirms-pending": ("no-content-loss", 500, TWO_AT_ONCE),
}


def _replay(tmp_path: Path, setup: dict[str, Any], steps: list[dict[str, Any]]) -> str:
    path = tmp_path / "replay.json"
    doc = {"format": "haconform-replay/1", "mechanism": "pf", "sut": None, "seed": setup["seed"], "setup": setup}
    path.write_text(json.dumps({**doc, "steps": [OPENING, *steps]}), encoding="utf-8")
    return str(path)


@pytest.mark.model
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_counterexample_fails_the_mutant_and_the_model_and_reference_system_pass_it(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rule, limit, steps = CASES[name]
    replay = _replay(tmp_path, _setup(limit), steps)
    assert main(["replay", replay, "--mutant", name]) == 1
    assert rule in capsys.readouterr().out
    assert main(["replay", replay]) == 0, capsys.readouterr().out
    capsys.readouterr()
    assert main(["replay", replay, "--sut", SUT]) == 0, capsys.readouterr().out


@pytest.mark.model
def test_the_delete_limit_judged_is_the_recorded_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Twin of the kill above: the same deletes under the seed's 500 are within the limit, for the mutant too;
    under 1 the reference system sends one delete per hierarchy message (its replay passes above)."""
    replay = _replay(tmp_path, _setup(500), SCRATCH)
    assert main(["replay", replay, "--mutant", "ignore-delete-limit", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    deletes = [
        e for step in doc["steps"] for e in step["events"] if e["kind"] == "CHANGE" and e["attrs"]["op"] == "delete"
    ]
    assert len(deletes) == 2 and doc["verdict"] == "pass"


@pytest.mark.model
def test_a_reference_system_ignoring_the_limit_fails_the_same_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference system's planted bug `ignore-delete-limit`: its replay with the limit of one fails."""
    replay = _replay(tmp_path, _setup(1), SCRATCH)
    assert main(["replay", replay, "--sut", f"{SUT} --bug ignore-delete-limit"]) == 1
    assert "packing-limits" in capsys.readouterr().out


@pytest.mark.unit
def test_the_setup_draws_the_limit_and_pf_config_records_it() -> None:
    from hypothesis import given, settings

    seen: set[int] = set()

    @settings(max_examples=60, database=None, derandomize=True)
    @given(DRIVER.setup)
    def draw(setup: dict[str, Any]) -> None:
        seen.add(setup["deleted_folder_limit"])

    draw()
    assert seen == {1, 2, 500}
    assert json.loads(pf_config(_setup(1))["params"]) == {"deleted_folder_limit": 1}
    assert json.loads(pf_config(_setup(500))["params"]) == {}
    legacy = {k: v for k, v in _setup(1).items() if k != "deleted_folder_limit"}  # a replay file from before
    assert params_of(legacy).deleted_folder_limit == 500


@pytest.mark.unit
def test_the_new_steps_expand_to_protocol_calls() -> None:
    setup = _setup(1)
    s = Session(DRIVER, DRIVER.model_factory()(setup), setup)
    DRIVER.absorb(s, "__init__", None)
    s.step("create_folder", {"via": "A"})
    made = s.step("scratch_folders", {"via": "B", "n": 2})
    assert [c["call"] for c in made.calls] == ["create_folder"] * 2 and s.state["scratch"] == [1, 2]
    gone = s.step("scratch_folders", {"via": "C", "n": 3})  # deletes them where they were made
    assert gone.calls == [_c("delete_folder", via="B", fid=_f(1)), _c("delete_folder", via="B", fid=_f(2))]
    assert s.state["scratch"] == []
    local = s.step("create_local_folder", {"via": "C"})
    assert local.calls[0]["args"]["replicating"] is False and len(s.state["fids"]) == 4
    # one active replica (A): nothing to remove at once
    assert s.step("remove_replicas_at_once", {"folder": 0}).calls == []
    two = s.step("remove_two_at_once", {"folder": 0, "server": "A"})  # the server is the holder: the next store
    removals = [c["args"] for c in two.calls if c["call"] == "remove_replica"]
    assert removals == [{"fid": _f(0), "server": "A", "via": "A"}, {"fid": _f(0), "server": "B", "via": "B"}]
    assert two.calls[-1] == _c("add_replica", fid=_f(0), server="C", via="A")
    dels = s.step("delete_folders", {"via": "A", "folders": [0, 4, 9]})
    assert [c["args"]["fid"] for c in dels.calls] == [_f(0), _f(1)]


@pytest.mark.unit
def test_simpler_knows_the_new_steps() -> None:
    at_once = {
        "op": "remove_replicas_at_once",
        "calls": [_c("remove_replica", fid=_f(2), server=x, via=x) for x in "ABC"],
    }
    simpler = DRIVER.simpler(at_once)
    pairs = [
        [c["args"]["server"] for c in cand["calls"]] for cand in simpler if cand["op"] == "remove_replicas_at_once"
    ]
    assert ["B", "C"] in pairs and ["A", "C"] in pairs and ["A", "B"] in pairs
    assert all(len(p) >= 2 for p in pairs)
    deletes = {"op": "delete_folders", "calls": [_c("delete_folder", via="A", fid=_f(k)) for k in (0, 1)]}
    assert {"op": "delete_folders", "calls": deletes["calls"][1:]} in DRIVER.simpler(deletes)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_search_kills_the_mutant_by_its_rule(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mutants", "pf", "--only", name, "--budget", "20", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["mutants"][0]
    assert row["killed"] and row["rule"] == CASES[name][0] and row["caught_by"] == "expected", row
