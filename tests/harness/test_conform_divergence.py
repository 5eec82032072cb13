"""`haconform conform` never crashes on what a system under test answers. A public folder system that
answers `create_folder` with a new folder ID while the store named is crashed (the model refuses there) made
the coverage floor's replay of the same inputs on the model raise `IndexError` resolving `{"$folder": i}`
(exit 3). The floor's replay now follows the system's recorded answers: a folder the system created and the
model did not is numbered but unresolvable, a call naming it is skipped, and each divergence names the request;
the run ends in a verdict about the system.

Twin (the crash kept as a regression case): the same steps replayed on the model without the system's answers
are a `StepError` naming the call, as `haconform replay` of such a file reports it (exit 2)."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.harness import pf
from conformance.harness.core import StepError, replay_steps
from conformance.harness.floor import model_traces

ROOT = Path(__file__).resolve().parents[2]
CREATES_WHILE_CRASHED = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'} --bug create-while-crashed"
search_module = importlib.import_module("conformance.harness.search")

pytestmark = pytest.mark.model

SETUP = {
    "seed": 1,
    "faults": True,
    "stores": [list(s) for s in pf.SERVERS],
    "links": [list(link) for link in pf.LINKS],
    "latency_max_ms": pf.LATENCY_MAX_MS,
    "deleted_folder_limit": 500,
}
STEPS = [
    {"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f0"}}]},
    {"op": "crash", "calls": [{"call": "crash", "args": {"store": "B"}}]},
    {"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "B", "name": "f1"}}]},
    {"op": "post", "calls": [{"call": "post", "args": {"store": "A", "fid": {"$folder": 1}, "size_kb": 1}}]},
]
ANSWERS = ["1-5", None, "1-6", True, None, None]  # the system's: it created f1 on the crashed store B


def test_the_floor_follows_a_system_that_creates_where_the_model_refuses() -> None:
    traces, failed, diverged = model_traces("pf", [(SETUP, STEPS, ANSWERS)])
    assert failed == 0 and len(traces) == 1
    assert diverged[0].startswith('run 1: steps[2].calls[0] (create_folder {"via": "B", "name": "f1"})')
    assert "the recording system created folder '1-6'; this one refused" in diverged[0]
    assert diverged[1].startswith("run 1: steps[3].calls[0] (post ") and "skipped: names folder 1" in diverged[1]


def test_the_model_creating_where_the_system_refused_is_not_numbered() -> None:
    """The other way round: the system refused f1, the model made it; the post names the system's folder 1,
    which neither has: skipped, never the model's extra folder."""
    steps = [
        *STEPS[:3],
        {"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f2"}}]},
    ]
    steps.append(
        {"op": "post", "calls": [{"call": "post", "args": {"store": "A", "fid": {"$folder": 1}, "size_kb": 1}}]}
    )
    no_crash = [steps[0], *steps[2:]]  # B is up on the model: it creates f1; the system refused it
    system, _ = replay_steps(
        pf.DRIVER, pf.DRIVER.model_factory()(SETUP), SETUP, no_crash, follow=["1-5", "", "1-7", True]
    )
    assert [f is not None for f in system.state["fids"]] == [True, True]
    assert any("this system created folder" in d and "steps[1].calls[0]" in d for d in system.diverged)
    assert not any("skipped" in d for d in system.diverged)  # the post went to the folder both made (1-7)


def test_twin_without_the_answers_the_same_steps_do_not_apply_on_the_model() -> None:
    with pytest.raises(StepError, match=r"steps\[3\]\.calls\[0\] \(post\): names folder 1"):
        replay_steps(pf.DRIVER, pf.DRIVER.model_factory()(SETUP), SETUP, STEPS)
    _, failed, diverged = model_traces("pf", [(SETUP, STEPS)])
    assert failed == 1 and "not replayed on the model: StepError" in diverged[0]


@pytest.fixture
def crash_and_create(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only folder creations, crashes and posts, faults on: the search soon creates on a crashed store."""
    keep = ("create_folder", "crash", "post")
    monkeypatch.setattr(pf.DRIVER, "ops", {k: v for k, v in pf.PfDriver.ops.items() if k in keep})
    monkeypatch.setattr(pf.DRIVER, "setup", pf.PfDriver.setup.map(lambda s: {**s, "faults": True}))
    profile = search_module.Profile("quick", max_examples=20, steps=12, budget_s=300.0)
    monkeypatch.setitem(search_module.PROFILES, "quick", profile)


@pytest.mark.usefixtures("crash_and_create")
def test_conform_ends_in_a_verdict_naming_what_the_model_could_not_follow(tmp_path: Path, capsys) -> None:
    replay = str(tmp_path / "replay.json")
    args = ["conform", "pf", "--sut", CREATES_WHILE_CRASHED, "--replay-out", replay, "--coverage-perturbations", "0"]
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err  # a verdict about the system (before issue 36: exit 3, IndexError)
    floor = json.loads(out)["coverage_floor"]
    assert any("(post " in d and "skipped: names folder" in d for d in floor["diverged"]), floor["diverged"]
    assert any("(create_folder " in d and "this one refused" in d for d in floor["diverged"])
    code = main(args)
    text = capsys.readouterr().out
    assert code in (0, 1) and "the model could not follow" in text and "calls skipped on the model" in text
