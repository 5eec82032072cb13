"""The replay minimiser (`conformance.harness.minimise`): delta debugging over a failing step list.

A fake mechanism whose failure needs exactly two specific steps among twenty is minimised to those two (plus
the pinned opening step); a candidate that fails by a different rule is never kept (the twin); the same input
gives the same output; the limits cut the work and still return a list seen to fail; and the public folder
reference system's planted bug, found through the stdio adapter, is minimised to at most 4 steps.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from conformance.cli import main
from conformance.harness.core import EndProblem, Failure, Op, Session, Step
from conformance.harness.minimise import minimise, replay_failure
from conformance.harness.report import failure_json, read_replay, write_json_atomic
from conformance.harness.search import Profile, search, search_mutant
from traces.verdict import MonitorResult, Rule

ROOT = Path(__file__).resolve().parents[2]
WAITS = [1, 10, 100]
PAIR = Rule("pair", "FAKE-001", "always", "poke 7 never follows poke 3 and a wait of 10")
OTHER = Rule("other", "FAKE-002", "always", "poke 7 never comes without a poke 3 before it")


class _Silent:
    """A monitor for a system that records no events: the fake's verdicts come from its end-of-run checks."""

    mechanism = "fake"
    scope = "entity"

    def check(self, events: Any, context: Any = ()) -> MonitorResult:
        return MonitorResult.of([])


class FakeSystem:
    """Remembers what it was told. `pair` fails when poke 3 is followed, after a wait of at least 10, by
    poke 7; `other` fails when poke 7 comes with no poke 3 before it (a different rule)."""

    built = 0

    def __init__(self) -> None:
        FakeSystem.built += 1
        self.log: list[tuple[str, int]] = []
        self.events: list[Any] = []

    def poke(self, k: int) -> None:
        self.log.append(("poke", k))

    def wait(self, ms: int) -> None:
        self.log.append(("wait", ms))

    def problems(self) -> list[EndProblem]:
        seen3 = waited = False
        for what, v in self.log:
            if what == "poke" and v == 3:
                seen3 = True
            elif what == "wait" and seen3 and v >= 10:
                waited = True
            elif what == "poke" and v == 7:
                if seen3 and waited:
                    return [EndProblem(PAIR, "poke 7 after poke 3 and a wait")]
                if not seen3:
                    return [EndProblem(OTHER, "poke 7 without poke 3")]
        return []


class FakeDriver:
    name = "fake"
    setup = st.just({"seed": 0})
    ops: Mapping[str, Op] = {
        "poke": Op(st.fixed_dictionaries({"k": st.integers(0, 9)})),
        "wait": Op(st.fixed_dictionaries({"ms": st.sampled_from(WAITS)})),
    }

    def model_factory(self, mutant: str | None = None) -> Any:
        return lambda setup: FakeSystem()

    def opening(self, s: Session) -> list[tuple[str, dict[str, Any]]]:
        return [("poke", {"k": 0})]

    def expand(self, s: Session, op: str, raw: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"call": op, "args": dict(raw)}]

    def resolve(self, s: Session, args: dict[str, Any]) -> dict[str, Any]:
        return dict(args)

    def absorb(self, s: Session, call: str, result: Any) -> None:
        pass

    def events(self, s: Session) -> list[Any]:
        return []

    def finish(self, s: Session) -> list[dict[str, Any]]:
        return []

    def end_checks(self, s: Session) -> list[EndProblem]:
        return s.system.problems()

    def mutants(self) -> dict[str, tuple[str, ...]]:
        return {}

    def monitor(self) -> Any:
        return _Silent()

    def simpler(self, step: dict[str, Any]) -> list[dict[str, Any]]:
        if step["op"] != "wait":
            return []
        ms = step["calls"][0]["args"]["ms"]
        return [{"op": "wait", "calls": [{"call": "wait", "args": {"ms": w}}]} for w in WAITS if w < ms]


DRV = FakeDriver()
FACTORY = DRV.model_factory()


def _step(op: str, **args: Any) -> Step:
    return Step(op, [{"call": op, "args": args}])


def _twenty() -> list[Step]:
    """The opening poke 0, then 20 steps of which only poke 3, wait 100 and poke 7 matter."""
    noise = [_step("poke", k=k) for k in (1, 2, 4, 5, 6, 8, 9)]
    steps = [_step("poke", k=0), *noise[:3], _step("poke", k=3), _step("wait", ms=1), *noise[3:]]
    steps += [_step("wait", ms=100), _step("poke", k=1), _step("wait", ms=1), _step("poke", k=2)]
    steps += [_step("poke", k=5), _step("poke", k=7), _step("poke", k=4), _step("wait", ms=10)]
    steps += [_step("poke", k=8), _step("poke", k=9), _step("poke", k=6)]
    return steps


def _failure(steps: list[Step]) -> Failure:
    found = replay_failure(DRV, FACTORY, {"seed": 0}, [s.to_json() for s in steps])
    assert found is not None
    return found


def _ops(steps: list[Step]) -> list[tuple[str, Any]]:
    return [(s.op, next(iter(s.calls[0]["args"].values()))) for s in steps]


@pytest.mark.unit
def test_the_two_steps_that_matter_are_kept_and_the_wait_is_simplified() -> None:
    original = _failure(_twenty())
    assert original.rule == "pair" and len(original.steps) == 21
    out = minimise(DRV, FACTORY, original)
    assert out.stopped == ""
    assert _ops(out.failure.steps) == [("poke", 0), ("poke", 3), ("wait", 10), ("poke", 7)]
    assert out.failure.rule == "pair" and out.failure.requirement == "FAKE-001"
    assert out.original_steps == 21 and 0 < out.replays < 200
    assert "21 -> 4 steps" in out.text()


@pytest.mark.unit
def test_a_candidate_failing_by_another_rule_is_not_kept() -> None:
    """The twin: without poke 3 the run still fails, by rule `other`; a rule-blind minimiser would keep it."""
    original = _failure(_twenty())
    out = minimise(DRV, FACTORY, original)
    without_3 = [s.to_json() for s in out.failure.steps if s.calls[0]["args"] != {"k": 3}]
    blind = replay_failure(DRV, FACTORY, {"seed": 0}, without_3)
    assert blind is not None and blind.rule == "other"
    assert ("poke", 3) in _ops(out.failure.steps)
    # and a failure of rule `other` minimises to its own rule, never to `pair`
    other = _failure([_step("poke", k=0), _step("poke", k=5), _step("poke", k=7), _step("poke", k=3)])
    assert other.rule == "other"
    again = minimise(DRV, FACTORY, other)
    assert again.failure.rule == "other" and _ops(again.failure.steps) == [("poke", 0), ("poke", 7)]


@pytest.mark.unit
def test_the_same_input_gives_the_same_output() -> None:
    a = minimise(DRV, FACTORY, _failure(_twenty()))
    b = minimise(DRV, FACTORY, _failure(_twenty()))
    assert [s.to_json() for s in a.failure.steps] == [s.to_json() for s in b.failure.steps]
    assert a.replays == b.replays


@pytest.mark.unit
def test_a_fresh_system_per_replay_and_the_limits_cut_the_work() -> None:
    found = _failure(_twenty())
    before = FakeSystem.built
    out = minimise(DRV, FACTORY, found, max_replays=5)
    assert out.stopped == "replays" and out.replays == 5
    assert FakeSystem.built - before == 5
    assert replay_failure(DRV, FACTORY, {"seed": 0}, [s.to_json() for s in out.failure.steps]).rule == "pair"
    ticks = iter(range(1000))
    cut = minimise(DRV, FACTORY, _failure(_twenty()), budget_s=3, clock=lambda: float(next(ticks)))
    assert cut.stopped == "budget" and cut.replays <= 3


@pytest.mark.unit
def test_a_failure_that_does_not_fail_again_is_kept_as_found() -> None:
    clean = [_step("poke", k=0), _step("poke", k=3)]
    f = Failure("fake", {"seed": 0}, clean, [], "[FAKE-001 pair] seen once")
    out = minimise(DRV, FACTORY, f)
    assert out.stopped == "not reproduced" and out.failure is f and "did not fail again" in out.text()


@pytest.mark.unit
def test_a_search_without_hypothesis_shrinking_reports_the_minimal_run() -> None:
    """Hypothesis' shrink phase off: what the search reports is the minimiser's work, and replays as such."""
    prof = Profile("noshrink", max_examples=200, steps=20, budget_s=20, shrink=False)
    out = search("fake", None, prof, drv=DRV)
    assert out.failure is not None and out.minimised is not None
    assert out.failure.rule == "pair"
    assert _ops(out.failure.steps) == [("poke", 0), ("poke", 3), ("wait", 10), ("poke", 7)]
    assert out.minimised.original_steps >= len(out.failure.steps)


@pytest.mark.model
@pytest.mark.slow
def test_the_pf_bug_behind_the_adapter_is_minimised_to_four_steps(tmp_path: Path) -> None:
    """`conform pf --sut "pf_node.py --bug status-claims-more"` reports a replay of at most 4 steps
    (create a folder, move a replica), and `haconform replay` reproduces it through the adapter."""
    sut = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'pf_node.py'} --bug status-claims-more"
    replay = tmp_path / "pf.json"
    code = main(["conform", "pf", "--sut", sut, "--profile", "quick", "--replay-out", str(replay), "--json"])
    assert code == 1
    data = read_replay(replay)
    assert data["violations"][0]["rule"] == "cnset-carried"
    assert len(data["steps"]) <= 4, json.dumps(data["steps"])
    assert main(["replay", str(replay), "--sut", sut]) == 1


@pytest.mark.model
def test_a_minimised_model_failure_is_written_and_replayed(tmp_path: Path) -> None:
    """The model through the same path: a pf mutant's failure is minimised (a fixpoint, never longer than what
    Hypothesis found), written, and replayed by the CLI against the mutant (fails) and the model (passes)."""
    out = search_mutant("pf", "stale-cnset", "quick", 8)
    assert out.failure is not None and out.minimised is not None
    assert out.minimised.stopped == "" and len(out.failure.steps) <= out.minimised.original_steps
    assert out.failure.rule == "cnset-carried"
    path = tmp_path / "pf.json"
    write_json_atomic(path, failure_json(out.failure))
    assert main(["replay", str(path), "--mutant", "stale-cnset"]) == 1
    assert main(["replay", str(path)]) == 0


@pytest.mark.unit
def test_driver_simplifications_are_steps_the_generator_could_draw() -> None:
    """pf: shorter advances from the generator's minutes, fewer and smaller posts, earlier folders; sr: shorter
    advances and outages from its durations. Nothing simpler than the simplest value is offered."""
    from conformance.harness import pf, sr
    from model.kernel.sim import MINUTE

    adv = {"op": "advance", "calls": [{"call": "advance", "args": {"ms": 90 * MINUTE}}]}
    assert [v["calls"][0]["args"]["ms"] for v in pf.DRIVER.simpler(adv)] == [
        MINUTE,
        4 * MINUTE,
        10 * MINUTE,
        30 * MINUTE,
    ]
    assert pf.DRIVER.simpler({"op": "advance", "calls": [{"call": "advance", "args": {"ms": MINUTE}}]}) == []
    post = {"call": "post", "args": {"store": "B", "fid": {"$folder": 2}, "size_kb": 16}}
    variants = pf.DRIVER.simpler({"op": "post", "calls": [post, post, post]})
    assert [len(v["calls"]) for v in variants[:2]] == [1, 2]
    assert {c["args"]["size_kb"] for v in variants for c in v["calls"]} <= {1, 16}
    assert sorted({c["args"]["fid"]["$folder"] for v in variants for c in v["calls"]}) == [0, 1, 2]
    outage = {
        "op": "outage_of_last_primary",
        "calls": [
            {"call": "isolate", "args": {"server": "MBX01"}},
            {"call": "advance", "args": {"ms": sr.STEPS_MS[2]}},
            {"call": "heal", "args": {}},
        ],
    }
    shorter = sr.DRIVER.simpler(outage)
    assert [v["calls"][1]["args"]["ms"] for v in shorter] == sr.STEPS_MS[:2]
    assert all([c["call"] for c in v["calls"]] == ["isolate", "advance", "heal"] for v in shorter)
    assert sr.DRIVER.simpler({"op": "heal", "calls": [{"call": "heal", "args": {}}]}) == []


@pytest.mark.unit
def test_am_simplifications_are_steps_the_generator_could_draw() -> None:
    """am: fewer logs (1, 2), lags at 0 (all, then one server's), a partition one server smaller; a step
    with nothing simpler gets nothing."""
    from conformance.harness import am

    lags = dict.fromkeys(am.SERVERS, 0) | {"MBX2": 13, "MBX4": 40}
    logs = {"op": "logs", "calls": [{"call": "generate_logs", "args": {"db": "DB1", "n": 7, "lags": lags}}]}
    variants = [v["calls"][0]["args"] for v in am.DRIVER.simpler(logs)]
    assert [a["n"] for a in variants[:2]] == [1, 2] and all(a["db"] == "DB1" for a in variants)
    assert [sorted(k for k, x in a["lags"].items() if x) for a in variants[2:]] == [[], ["MBX4"], ["MBX2"]]
    assert all(set(a["lags"].values()) <= {0, 3, 7, 13, 40} for a in variants)
    part = {"op": "partition", "calls": [{"call": "partition", "args": {"groups": [["MBX1", "MBX3"]]}}]}
    assert [v["calls"][0]["args"]["groups"] for v in am.DRIVER.simpler(part)] == [[["MBX3"]], [["MBX1"]]]
    one = {"op": "partition", "calls": [{"call": "partition", "args": {"groups": [["MBX1"]]}}]}
    assert am.DRIVER.simpler(one) == []
    flat = {
        "op": "logs",
        "calls": [{"call": "generate_logs", "args": {"db": "DB1", "n": 1, "lags": dict.fromkeys(lags, 0)}}],
    }
    assert am.DRIVER.simpler(flat) == []
