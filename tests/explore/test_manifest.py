"""The manifest's mutant bounds (issue 33): every mutant of sr, am and pf is found by exploration at a pinned depth,
the model is clean on every mutant's bound, and each setting a mutant's bound adds is what finds it (twins: the
same bound without it does not). `spec/explore.toml`, `[mutants.MECH]`; `conformance/explore/README.md`."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.explore.bfs import Explorer, explore
from conformance.explore.manifest import ManifestError, MutantBound, load
from conformance.explore.spaces import NO_TICK, SPACES, Bound
from conformance.harness.search import driver

_, MUTANT_BOUNDS = load()
# the mutants issue 33 names as never found before, and one added since (each with its own settings in `setup_of`)
ISSUE_33 = [
    ("sr", "never-promote"),
    ("sr", "discards-in-memory"),
    ("am", "retry-failed-mount"),  # added to the model after the manifest's mutant bounds were pinned
    ("pf", "broadcast-when-idle"),
    ("pf", "delete-without-status"),
    ("pf", "ignore-size-limit"),
    ("pf", "pack-two-folders"),
    ("pf", "pending-confirms-pending"),
    ("pf", "response-to-all"),
    ("pf", "status-claims-requester-set"),
    ("pf", "version-before-cost"),
]
# cheap enough for the default run (a few seconds each); the rest are `slow`
CHEAP = {
    ("sr", "never-promote"),
    ("am", "retry-failed-mount"),
    ("pf", "broadcast-when-idle"),
    ("pf", "version-before-cost"),
    ("pf", "pending-confirms-pending"),  # session 12: its choices drawn by the seed, 132 states to depth 6
}


def _found(mech: str, name: str, bound: Bound | None = None) -> int | None:
    """The depth at which exploring `bound` (default: the mutant's manifest bound) finds the mutant, its own rules
    armed as the kill report arms them (None: not within the bound)."""
    mb: MutantBound = MUTANT_BOUNDS[mech]
    rules = frozenset(driver(mech).mutants()[name])
    res = explore(bound or mb.for_mutant(name), name, watch=rules)
    return res.found.depth if res.found else None


@pytest.mark.unit
@pytest.mark.parametrize("mech", ["sr", "am", "pf"])
def test_every_mutant_has_a_bound_that_finds_it_at_a_pinned_depth(mech: str) -> None:
    pinned = MUTANT_BOUNDS[mech].found_at
    assert sorted(pinned) == sorted(driver(mech).mutants())
    assert [m for m, depth in pinned.items() if depth is None] == []  # `not_found` empty
    assert set(MUTANT_BOUNDS[mech].setup_of) <= set(pinned)  # no setting for a mutant that does not exist


@pytest.mark.unit
def test_a_mutant_setting_replaces_kinds_and_sizes_and_adds_waits() -> None:
    mb = MUTANT_BOUNDS["pf"]
    b = mb.for_mutant("pending-confirms-pending")
    assert b.kinds == ("add_replica", "remove_at_once", NO_TICK) and b.servers == 2 and b.depth == 6
    assert b.waits_ms == (3_600_000,) and "kinds" not in b.setup and "waits_ms" not in b.setup
    assert b.choices is False and mb.bound.choices is True and "choices" not in b.setup  # `choices` replaces
    assert mb.for_mutant("redirect-to-pending").kinds == (*mb.bound.kinds, "client")  # `more_kinds` adds
    stores = mb.for_mutant("version-before-cost").setup["stores"]
    assert SPACES["pf"].setup(mb.for_mutant("version-before-cost"))["stores"] == stores


@pytest.mark.unit
def test_a_bad_mutant_setting_names_file_entry_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "explore.toml"
    head = '[mutants.pf]\nservers = 2\nmessages = 1\nfaults = 0\ndepth = 2\nkinds = ["add_replica"]\n'
    bad.write_text(head + '[mutants.pf.setup_of]\nx = { kinds = "crash" }\n')
    with pytest.raises(ManifestError, match=r"mutants\.pf\.setup_of\.x: field 'kinds'"):
        load(bad)
    bad.write_text(head + "[mutants.pf.setup_of]\nx = { waits_ms = [0] }\n")
    with pytest.raises(ManifestError, match=r"mutants\.pf\.setup_of\.x: field 'waits_ms'"):
        load(bad)
    bad.write_text(head + '[mutants.pf.setup_of]\nx = { choices = ["net.latency"] }\n')  # labels: sr only
    with pytest.raises(ManifestError, match=r"mutants\.pf\.setup_of\.x: field 'choices'"):
        load(bad)


@pytest.mark.unit
def test_no_tick_leaves_only_the_bounds_waits() -> None:
    """`no-tick`: time passes by the bound's waits only; twin: without it the state also offers `tick`."""
    bound = Bound("pf", "t", 2, 1, 0, ("add_replica",), 2, (3_600_000,))

    def advances(b: Bound) -> list[int]:
        s = Explorer(b).replay(
            [{"op": "create_folder", "calls": [{"call": "create_folder", "args": {"via": "A", "name": "f0"}}]}]
        )
        return [
            a.calls[0]["args"]["ms"]
            for a in SPACES["pf"].actions(s, (1, 0, frozenset(), frozenset()), b)
            if a.op == "advance"
        ]

    assert advances(bound.with_(kinds=("add_replica", NO_TICK))) == [3_600_000]
    ticked = advances(bound)
    assert ticked[0] == 3_600_000 and len(ticked) == 2 and ticked[1] < 3_600_000


def _params(only_cheap: bool) -> list[object]:
    out = []
    for mech, name in ISSUE_33:
        cheap = (mech, name) in CHEAP
        if cheap == only_cheap:
            out.append(pytest.param(mech, name, id=f"{mech}-{name}"))
    return out


@pytest.mark.model
@pytest.mark.parametrize(("mech", "name"), _params(True))
def test_each_explored_mutant_found_at_its_pinned_depth(mech: str, name: str) -> None:
    assert _found(mech, name) == MUTANT_BOUNDS[mech].found_at[name]


@pytest.mark.slow
@pytest.mark.parametrize(("mech", "name"), _params(False))
def test_each_explored_mutant_found_at_its_pinned_depth_slow(mech: str, name: str) -> None:
    assert _found(mech, name) == MUTANT_BOUNDS[mech].found_at[name]


@pytest.mark.slow
@pytest.mark.parametrize(("mech", "name"), [pytest.param(m, n, id=f"{m}-{n}") for m, n in ISSUE_33])
def test_the_model_is_clean_on_each_mutant_bound(mech: str, name: str) -> None:
    """No false alarm: the reference model, every rule armed, explored over the whole of the mutant's bound."""
    res = explore(MUTANT_BOUNDS[mech].for_mutant(name))
    assert res.complete and res.found is None, res.found


# twins: the mutant's bound without the setting that finds it, to the depth at which it is found: not found there
@pytest.mark.slow  # about 10 s: the whole bound to the mutant's depth
def test_twin_never_promote_not_found_with_the_short_durations() -> None:
    """With `short-all`'s durations the unpromoted shadow expires within the quiet tail, which excuses the loss."""
    mb = MUTANT_BOUNDS["sr"]
    assert _found("sr", "never-promote", mb.bound.with_(depth=mb.found_at["never-promote"])) is None


@pytest.mark.slow  # about 10 s: the whole bound to the mutant's depth
def test_twin_version_before_cost_not_found_in_the_harness_layout() -> None:
    """In the harness's layout the cheaper candidate also has the higher version: both orders pick it."""
    b = MUTANT_BOUNDS["pf"].for_mutant("version-before-cost")
    plain = b.with_(setup={k: v for k, v in b.setup.items() if k != "stores"})
    assert _found("pf", "version-before-cost", plain) is None


@pytest.mark.model
def test_twin_ignore_size_limit_not_found_without_big_posts() -> None:
    b = MUTANT_BOUNDS["pf"].for_mutant("ignore-size-limit")
    assert _found("pf", "ignore-size-limit", b.with_(kinds=tuple(k for k in b.kinds if k != "big"))) is None


@pytest.mark.model
def test_twin_retry_failed_mount_not_found_when_every_mount_succeeds() -> None:
    mb = MUTANT_BOUNDS["am"]
    assert _found("am", "retry-failed-mount", mb.bound.with_(depth=mb.found_at["retry-failed-mount"])) is None
