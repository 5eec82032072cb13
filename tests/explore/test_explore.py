"""Exhaustive small-scope exploration (issue 22): the manifest's pinned figures, the twins (a mutant found at a
bound where the reference model is clean), the replay file it writes, and the fingerprint."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.explore.bfs import Explorer, explore
from conformance.explore.fingerprint import fingerprint
from conformance.explore.manifest import Entry, ManifestError, compare, find, load
from conformance.explore.spaces import Bound
from model.kernel.sim import Simulator

ENTRIES, MUTANT_BOUNDS = load()
FAST = [e for e in ENTRIES if not e.slow]
SPARK_SCALE = 5 * 10**5  # a bound pinned at this many states or more is run on Spark (`test_spark_explore.LARGE`)
SLOW = [e for e in ENTRIES if e.slow and e.pinned and e.states < SPARK_SCALE]  # unpinned: `test_manifest_pins.py`


@pytest.mark.model
@pytest.mark.parametrize("entry", FAST, ids=[e.bound.name for e in FAST])
def test_small_bounds_as_pinned(entry: Entry) -> None:
    res = explore(entry.bound, max_states=entry.max_states)
    assert compare(entry, res) == [], compare(entry, res)


@pytest.mark.slow
@pytest.mark.parametrize("entry", SLOW, ids=[e.bound.name for e in SLOW])
def test_larger_bounds_as_pinned(entry: Entry) -> None:
    res = explore(entry.bound, max_states=entry.max_states)
    assert compare(entry, res) == [], compare(entry, res)


@pytest.mark.unit
def test_every_mechanism_has_a_default_bound_and_a_mutant_bound() -> None:
    assert {e.bound.mechanism for e in FAST} == {"sr", "am", "pf"}
    assert set(MUTANT_BOUNDS) == {"sr", "am", "pf"}


@pytest.mark.unit
def test_a_changed_count_fails_with_both_numbers() -> None:
    entry = find("am-3s-1db-crash-partition")
    res = explore(entry.bound)
    wrong = Entry(entry.bound, res.states + 1, res.depth, "clean", "", False)
    (diff,) = compare(wrong, res)
    assert f"manifest {res.states + 1}, explored {res.states}" in diff


# (mechanism's default bound, mutant, the rule that must catch it): each found at a bound where the reference
# model is clean (test_small_bounds_as_pinned pins `clean` for the same bound)
TWINS = [
    ("sr-2s-1m-crash", "ack-before-shadow", "shadow-before-ack"),
    ("am-3s-1db-crash-partition", "second-pam-after-partition", "single-pam"),
    ("pf-2s-1f-replicas", "content-to-all-stores", "content-to-replicas-only"),
]


@pytest.mark.model
@pytest.mark.parametrize(("bound", "mutant", "rule"), TWINS)
def test_twin_mutant_found_where_the_model_is_clean(bound: str, mutant: str, rule: str, tmp_path: Path) -> None:
    entry = find(bound)
    assert entry.result == "clean"
    res = explore(entry.bound, mutant)
    assert res.found is not None and res.found.rule == rule
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps(res.replay_file(mutant)))
    # the shortest path is a replay file: it fails against the mutant and passes against the model
    assert main(["replay", str(replay), "--mutant", mutant]) == 1
    assert main(["replay", str(replay)]) == 0


@pytest.mark.model
def test_bfs_gives_the_shortest_path() -> None:
    """A deeper bound finds the same violation at the same depth: BFS reports the shortest path."""
    entry = find("am-3s-1db-crash-partition")
    shallow = explore(entry.bound, "second-pam-after-partition")
    deep = explore(entry.bound.with_(depth=entry.bound.depth + 1), "second-pam-after-partition")
    assert shallow.found and deep.found and shallow.found.depth == deep.found.depth == 1


@pytest.mark.unit
def test_deepcopy_copies_an_sr_state() -> None:
    """sr's timers are records (action and arguments), so a deep copy of a replayed state is a state of its own
    (issue 33): the clone's timers run on the clone (before, they were closures over the original and ran on it).
    Twin: a timer that is a closure over the original still runs on the original from the clone's queue."""
    ex = Explorer(Bound("sr", "t", 2, 1, 0, (), 1))
    s = ex.replay(
        [{"op": "submit", "calls": [{"call": "submit", "args": {"msg": "m1", "primary": "MBX01", "forks": ["mbx"]}}]}]
    )
    before = len(s.system.events())
    clone = copy.deepcopy(s.system)
    clone.advance(60_000)
    assert len(s.system.events()) == before < len(clone.events())
    original = s.system
    original.sim.strict_timers = False  # the kernel refuses closures by default: this twin smuggles one in
    original.sim.after(1, lambda: original.heal())  # a closure: deepcopy shares what it captured
    original.isolate("MBX02")
    twin = copy.deepcopy(original)
    twin.advance(10)
    assert original.cluster.world.group == {}  # healed by the clone's copy of the closure


@pytest.mark.unit
def test_fingerprint_ignores_insertion_numbers_and_history() -> None:
    def sim(extra: bool) -> Simulator:
        sm = Simulator(1, trace_id="t", mechanism="sr")
        sm.add_node("a")
        if extra:  # a timer scheduled and cancelled: the counter moved, the live queue is the same
            sm.cancel(sm.after(5, sm.add_node, "b"))
            sm.emit("a", "core", "a", "NOTE")
        sm.after(10, sm.add_node, "b", node="a")
        return sm

    assert fingerprint([sim(False)]) == fingerprint([sim(True)])
    moved = sim(False)
    moved.after(20, moved.add_node, "b")
    assert fingerprint([moved]) != fingerprint([sim(False)])  # twin: a different queue is a different state


@pytest.mark.unit
def test_unknown_bound_and_missing_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explore", "sr", "--bound", "nosuch"]) == 2
    assert "no bound named 'nosuch'" in capsys.readouterr().err
    assert main(["explore", "sr", "--servers", "2"]) == 2


@pytest.mark.unit
def test_a_bad_manifest_names_file_entry_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "explore.toml"
    bad.write_text('[[bound]]\nname = "x"\nmechanism = "sr"\nservers = -1\n')
    with pytest.raises(ManifestError, match=r"bound\[0\] \(x\): field 'servers'"):
        load(bad)


@pytest.mark.slow
@pytest.mark.parametrize("mechanism", ["sr", "am", "pf"])
def test_mutants_found_at_their_pinned_depths(mechanism: str) -> None:
    from conformance.explore.cli import explore_mutants

    rows = explore_mutants(mechanism)
    wrong = [(r["mutant"], r["depth"], r["expected_depth"]) for r in rows if r["depth"] != r["expected_depth"]]
    assert wrong == []
    assert all(r["pinned"] for r in rows)  # every mutant is in the manifest, found or not


@pytest.mark.model
def test_cli_writes_the_replay_file_and_checks_the_manifest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "x.json"
    args = ["explore", "am", "--bound", "am-3s-1db-crash-partition", "--replay-out", str(out)]
    assert main([*args, "--check"]) == 0  # clean, as pinned
    assert not out.exists()
    assert main([*args, "--mutant", "second-pam-after-partition"]) == 1
    assert "VIOLATION single-pam (AM-005) at depth 1" in capsys.readouterr().out
    assert json.loads(out.read_text())["found_by"]["depth"] == 1


@pytest.mark.unit
def test_kill_report_column_from_an_explore_report(tmp_path: Path) -> None:
    from conformance.harness.mutants_cmd import _explore_text, _explored

    report = tmp_path / "x-am.json"
    row = {
        "mechanism": "am",
        "mutant": "wrong-order",
        "found": True,
        "depth": 1,
        "rule": "selection-order",
        "bound": "am-mutants",
        "states": 1,
    }
    report.write_text(json.dumps({"mutants": [row]}))
    got = _explored([str(report)])
    assert _explore_text(got[("am", "wrong-order")]) == "found at depth 1 in am-mutants"
    assert _explore_text(None) == "not explored"
    report.write_text("{}")
    with pytest.raises(ValueError, match="not a `haconform explore --mutants --json` report"):
        _explored([str(report)])


@pytest.mark.model
def test_symmetry_only_where_servers_are_interchangeable(capsys: pytest.CaptureFixture[str]) -> None:
    """am: every database has a copy on every member, but the state orders them (activation preference, the
    PAM), so the reduction merges nothing and changes no figure; sr: refused (the model is not symmetric)."""
    entry = find("am-3s-1db-crash-partition")
    plain, reduced = explore(entry.bound), explore(entry.bound.with_(symmetry=True))
    assert (reduced.states, reduced.depth, reduced.result) == (plain.states, plain.depth, plain.result)
    assert (
        main(["explore", "sr", "--servers", "2", "--messages", "1", "--faults", "0", "--depth", "1", "--symmetry"]) == 2
    )
    assert "sr has no symmetry reduction" in capsys.readouterr().err


@pytest.mark.slow
def test_counts_do_not_depend_on_hash_randomisation() -> None:
    """The fingerprint sorts sets and keeps dict order: two processes with different hash seeds count alike."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    argv = [
        sys.executable,
        "-m",
        "conformance",
        "explore",
        "sr",
        "--servers",
        "2",
        "--messages",
        "1",
        "--faults",
        "1",
        "--kinds",
        "crash",
        "--depth",
        "3",
        "--json",
    ]
    counts = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(root)}
        out = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=root, check=True).stdout
        counts.append((json.loads(out)["states"], json.loads(out)["transitions"]))
    assert counts[0] == counts[1]
