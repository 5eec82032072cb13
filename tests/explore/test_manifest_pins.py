"""Bounds listed before they are pinned (issue 33, "Larger pinned bounds"; session 15): a manifest entry that says
`pinned = false` holds no figures and is never judged: `compare` refuses it, `explore --check` refuses it before
exploring (exit 2), `explore --all --slow` leaves it out and says so, and the slow tests that pin counts skip it.
Twins (too strong a claim): an entry with no count that does not say `pinned = false`, and an unpinned entry that
pins a figure, are refused when the manifest is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.cli import main
from conformance.explore import cli as explore_cli
from conformance.explore.bfs import explore
from conformance.explore.manifest import ManifestError, Unpinned, compare, find, load

# the smallest default bound, listed a second time without its figures
TINY = '[[bound]]\nname = "{name}"\nmechanism = "am"\nservers = 3\nmessages = 1\nfaults = 2\n'
TINY += 'kinds = ["crash", "partition", "fail_database"]\ndepth = 1\nslow = true\n'


def _manifest(tmp_path: Path, *tables: str) -> Path:
    path = tmp_path / "explore.toml"
    path.write_text("\n".join(tables), encoding="utf-8")
    return path


@pytest.mark.unit
def test_an_unpinned_bound_is_not_judged(tmp_path: Path) -> None:
    path = _manifest(tmp_path, TINY.format(name="am-listed") + "pinned = false\n")
    entry = find("am-listed", path)
    assert not entry.pinned and entry.states is None
    with pytest.raises(Unpinned, match=r"am-listed.*not pinned"):
        compare(entry, explore(entry.bound))


@pytest.mark.unit
def test_check_refuses_an_unpinned_bound_before_exploring(tmp_path: Path, monkeypatch, capsys) -> None:
    path = _manifest(tmp_path, TINY.format(name="am-listed") + "pinned = false\n")

    def never(*_: object) -> None:
        raise AssertionError("explored an unpinned bound to check it")

    monkeypatch.setattr(explore_cli.Engine, "run", never)
    argv = ["explore", "am", "--bound", "am-listed", "--manifest", str(path), "--engine", "python", "--check"]
    assert main(argv) == 2
    assert "not pinned" in capsys.readouterr().err


@pytest.mark.unit
def test_all_leaves_an_unpinned_bound_out_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    listed = _manifest(tmp_path, TINY.format(name="am-listed") + "pinned = false\n")
    states = explore(find("am-listed", listed).bound).states
    pinned = TINY.format(name="am-pinned") + f'states = {states}\ndepth_reached = 1\nresult = "clean"\n'
    path = _manifest(tmp_path, TINY.format(name="am-listed") + "pinned = false\n", pinned)
    explored: list[str] = []
    real = explore_cli.Engine.run

    def run(self, bound, *rest):
        explored.append(bound.name)
        return real(self, bound, *rest)

    monkeypatch.setattr(explore_cli.Engine, "run", run)
    assert main(["explore", "am", "--all", "--slow", "--manifest", str(path), "--engine", "python"]) == 0
    out = capsys.readouterr().out
    assert explored == ["am-pinned"]  # the twin: the same bound pinned is explored and judged
    assert "am-listed" in out and "not pinned (pinned = false): not explored, not judged" in out
    assert "am-pinned" in out and out.split("am-pinned")[1].strip().endswith("ok")


@pytest.mark.unit
def test_twin_an_entry_without_a_count_must_say_it_is_not_pinned(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"bound\[0\] \(am-listed\): field 'states' must pin"):
        load(_manifest(tmp_path, TINY.format(name="am-listed")))


@pytest.mark.unit
@pytest.mark.parametrize("claim", ["states = 10", "depth_reached = 1", 'result = "clean"', 'rule = "x"'])
def test_twin_an_unpinned_entry_that_pins_a_figure_is_refused(tmp_path: Path, claim: str) -> None:
    field = claim.split(" ")[0]
    with pytest.raises(ManifestError, match=f"field '{field}' pins a figure"):
        load(_manifest(tmp_path, TINY.format(name="am-listed") + f"pinned = false\n{claim}\n"))


@pytest.mark.unit
def test_an_unpinned_bound_must_be_slow(tmp_path: Path) -> None:
    text = TINY.format(name="am-listed").replace("slow = true\n", "") + "pinned = false\n"
    with pytest.raises(ManifestError, match="field 'slow' must be true"):
        load(_manifest(tmp_path, text))


@pytest.mark.unit
def test_the_manifests_unpinned_bounds_are_slow_and_hold_no_figures() -> None:
    for e in load()[0]:
        if not e.pinned:
            assert e.slow and e.states is None and e.depth is None and e.result == "unchecked", e.bound.name
        else:
            assert isinstance(e.states, int), e.bound.name
