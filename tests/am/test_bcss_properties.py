"""Property tests of `select` against a literal reading of the seed's loops (AM-I01) and its invariants."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.am.bcss import CRITERIA, Options, candidates, meets, select, sort_candidates, sort_mode
from model.am.state import CI_STATES, COMPONENTS, COPY_STATUSES, DIALS, CopyState, Health, Snapshot, Trigger

pytestmark = pytest.mark.model

states = st.sampled_from(["Healthy", "Healthy", "Healthy", "Degraded", "Unhealthy"])
healths = st.builds(
    lambda xs: Health({c: (p, s) for (c, p), s in zip(COMPONENTS, xs, strict=True)}),
    st.lists(states, min_size=len(COMPONENTS), max_size=len(COMPONENTS)),
)


@st.composite
def snapshots(draw: st.DrawFn) -> Snapshot:
    n = draw(st.integers(1, 6))
    servers = [f"S{i}" for i in range(n + 1)]
    rarely = st.sampled_from([False, False, False, False, True])
    statuses = st.sampled_from(["Healthy", "DisconnectedAndHealthy", "SeedingSource", *COPY_STATUSES])
    copies = tuple(
        CopyState(
            s,
            status=draw(statuses),
            lli=draw(st.sampled_from([85, 90, 91, 99, 100])),
            replay_queue=draw(st.sampled_from([0, 49, 50, 99])),
            content_index=draw(st.sampled_from(CI_STATES[:3])),
            preference=draw(st.integers(1, 4)),
            blocked=draw(rarely),
            suspended=draw(rarely),
            reachable=not draw(rarely),
        )
        for s in servers
    )
    return Snapshot(
        "DB",
        servers[0],
        100,
        copies,
        {s: draw(st.sampled_from(DIALS)) for s in servers},
        {s: draw(healths) for s in servers},
    )


triggers = st.one_of(
    st.just(Trigger()),
    st.builds(lambda b: Trigger("switchover", lossless=b), st.booleans()),
    st.builds(lambda c: Trigger("responder", c), st.sampled_from([c for c, _ in COMPONENTS])),
)
options = st.builds(
    lambda o, u, r, b: Options().with_(order=o, up_to_normal=u, require_status=r, below_source=b),
    st.sampled_from(["TierMajor", "CriteriaMajor"]),
    st.sampled_from(["NormalAndAbove", "NormalOnly"]),
    st.booleans(),
    st.booleans(),
)


def tier_predicates(src: Health, opts: Options) -> dict[int, object]:
    """Each tier's test on its own, straight from the seed's wording (AM-028..AM-031, AM-I03..I05)."""
    from model.am.bcss import better_than, same_as
    from model.am.state import PRIORITY_RANK

    def up_to_normal(h: Health) -> bool:
        def counts(p: str) -> bool:
            return p == "Normal" if opts.up_to_normal == "NormalOnly" else PRIORITY_RANK[p] >= 1

        return all(s == "Healthy" for p, s in h.components.values() if counts(p))

    return {
        1: lambda h: all(s == "Healthy" for _, s in h.components.values()),
        2: up_to_normal,
        3: lambda h: better_than(h, src),
        4: lambda h: same_as(h, src),
        5: lambda h: opts.below_source,
    }


def literal(snap: Snapshot, trigger: Trigger, opts: Options) -> list[tuple[str, int, int]]:
    """The seed read as nested loops over (tier, set) pairs (or (set, tier)); a copy is taken at the
    first pair that admits it, copies within one pair in the sort order."""
    cands, _ = candidates(snap, trigger, opts)
    ordered = sort_candidates(cands, snap, sort_mode(snap, trigger))
    tests = tier_predicates(snap.health_of(snap.source), opts)
    tiers = [1, 2, 3, 4, 5] if opts.below_source else [1, 2, 3, 4]
    pairs = (
        [(t, n) for t in tiers for n in CRITERIA]
        if opts.order == "TierMajor"
        else [(t, n) for n in CRITERIA for t in tiers]
    )
    out: list[tuple[str, int, int]] = []
    for t, n in pairs:
        for c in ordered:
            taken = {o[0] for o in out}
            if c.server not in taken and meets(c, n, 100, opts) and tests[t](snap.health_of(c.server)):
                out.append((c.server, t, n))
    return out


@given(snapshots(), triggers, options)
def test_select_is_never_blocked_and_excludes_source(snap: Snapshot, trigger: Trigger, opts: Options) -> None:
    sel = select(snap, trigger, opts)
    by_server = {c.server: c for c in snap.copies}
    for choice in sel.order:
        c = by_server[choice.server]
        assert c.reachable and not c.blocked and not c.suspended and c.server != snap.source
    assert len(set(sel.servers)) == len(sel.servers)


@settings(max_examples=300)
@given(snapshots(), triggers, options)
def test_select_equals_the_literal_loops(snap: Snapshot, trigger: Trigger, opts: Options) -> None:
    """`select` computes (best tier, best set) per copy; that equals running the seed's loops."""
    got = [(c.server, c.tier, c.criteria_set) for c in select(snap, trigger, opts).order]
    assert got == literal(snap, trigger, opts)
