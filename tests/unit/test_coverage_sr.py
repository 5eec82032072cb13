"""Shadow redundancy behaviour the catalogue states and no rule cited by name (issue 9, traceability).

Each test judges the model's recorded traces (seed 000, "How shadow messages are maintained", "Shadow
redundancy components", "Shadow redundancy is enabled by default") against one requirement, through the
public registry and the event kinds of `model/sr/README.md`, so it survives a rewrite of the model's modules.
"""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from model import registry

pytestmark = pytest.mark.unit
SEEDS = (1, 2)


@pytest.fixture(scope="module")
def traces():
    sim = registry.get("sr").simulate
    return {seed: sim(seed) for seed in SEEDS}


def _key(e):
    return (e.entity, e.attrs.get("inst"))


def test_sr009_a_server_is_primary_for_some_messages_and_shadow_for_others(traces):
    """SR-009: one server is primary for some messages and shadow for others at once."""
    both = set()
    for events in traces.values():
        primaries = {e.node for e in events if e.kind == "SHADOW_ACK"}
        shadows = {e.node for e in events if e.kind == "HARECEIVE"}
        both |= primaries & shadows
    assert both, "SR-009: no server held both roles in any run"


def test_sr053_sr013_discard_status_is_pulled_by_the_shadows_query_of_its_primary(traces):
    """SR-053 (pull, not push) and SR-013 (the heartbeat is the shadow's SMTP session with its primary)."""
    for events in traces.values():
        queries = {(e.node, e.attrs["primary"], e.ts_ms) for e in events if e.kind == "XQUERYDISCARD" and e.attrs["ok"]}
        notes = [e for e in events if e.kind == "DISCARD_NOTIFY"]
        assert notes
        for e in notes:  # SR-053: only the shadow's own successful XQUERYDISCARD brings a notification
            assert (e.node, e.attrs["primary"], e.ts_ms) in queries, e
        held: dict[str, set[str]] = defaultdict(set)
        for e in events:  # SR-013: the heartbeat is the shadow's SMTP session with a primary it holds shadows for
            if e.kind == "HARECEIVE":
                held[e.node].add(e.attrs["primary"])
            elif e.kind == "XQUERYDISCARD" and e.attrs["reason"] == "heartbeat":
                assert e.attrs["primary"] in held[e.node], e


def _released_early(events) -> list:
    """HADISCARDs of shadows that had not been told every fork was processed (SR-008, SR-011)."""
    forks: dict[tuple, set[str]] = {}
    notified: dict[tuple, set[str]] = defaultdict(set)
    early = []
    for e in events:
        k = (e.node, *_key(e))
        if e.kind == "HARECEIVE":
            forks[k] = set(e.attrs["forks"])
        elif e.kind == "DISCARD_NOTIFY":
            notified[k].add(e.attrs["fork"])
        elif e.kind == "HADISCARD" and not forks.get(k, set()) <= notified[k]:
            early.append(e)
    return early


def test_sr008_sr011_a_shadow_is_kept_until_every_fork_is_reported_processed(traces):
    """SR-008, SR-011: the shadow keeps its copy until the primary's discard notifications cover every fork."""
    for events in traces.values():
        assert any(e.kind == "HADISCARD" for e in events)
        assert _released_early(events) == []


def test_twin_sr008_a_shadow_released_before_all_forks_is_caught():
    mutant = registry.get("sr").mutants["release-before-all-forks"]
    assert any(_released_early(mutant(seed)) for seed in range(1, 6))


def test_sr052_sr012_released_shadows_and_processed_primaries_move_into_safety_net(traces):
    """SR-052: a released shadow moves into Safety Net; SR-012: the primary's Safety Net holds what it processed."""
    for events in traces.values():
        net = {(e.node, *_key(e), e.attrs["role"]) for e in events if e.kind == "SAFETYNET"}
        for e in events:
            if e.kind == "HADISCARD":  # SR-052: the shadow moves into Safety Net, not away
                assert (e.node, *_key(e), "shadow") in net, e
        done = ("DELIVER", "DUPLICATEDELIVER", "SEND")  # a duplicate caught at delivery was processed too
        handled = {(e.node, *_key(e)) for e in events if e.kind in done and e.attrs["via"] == "primary"}
        for e in events:  # SR-012: what the primary holds in Safety Net is what it processed
            if e.kind == "SAFETYNET" and e.attrs["role"] == "primary":
                assert (e.node, *_key(e)) in handled, e


def test_sr006_the_boundary_is_the_dag_even_across_sites_else_the_site():
    """SR-006: a server's boundary is its DAG, even one spread over sites; without a DAG, its site."""
    sim = registry.get("sr").simulate
    spread = sim(3, layout="multi-site-dag")
    receives = [e for e in spread if e.kind == "RECEIVE"]
    assert {e.attrs["boundary"] for e in receives} == {"dag:dag0"}
    assert len({e.attrs["site"] for e in receives}) > 1, "the run should receive in both sites"
    alone = [e for e in sim(3, layout="no-dag") if e.kind == "RECEIVE"]
    assert alone and all(e.attrs["boundary"] == f"site:{e.attrs['site']}" for e in alone)


def _disabled_yet_shadowed_or_rejected(events) -> list:
    """SR-022: with ShadowRedundancyEnabled false, no shadow is tried and RejectMessageOnShadowFailure rejects none."""
    accepted = {_key(e) for e in events if e.kind == "ACCEPT"}
    bad = [e for e in events if e.kind in ("REJECT", "HAREDIRECT")]
    return bad + [e for e in events if e.kind == "RECEIVE" and _key(e) not in accepted]


def test_sr022_reject_on_failure_has_no_effect_when_shadow_redundancy_is_disabled():
    """SR-022: RejectMessageOnShadowFailure acts only when ShadowRedundancyEnabled is true."""
    events = registry.get("sr").simulate(1, enabled=False, reject_on_failure=True)
    assert any(e.kind == "ACCEPT" for e in events)
    assert _disabled_yet_shadowed_or_rejected(events) == []


def test_twin_sr022_a_shadow_made_while_disabled_is_caught():
    mutant = registry.get("sr").mutants["shadow-when-disabled"]
    assert _disabled_yet_shadowed_or_rejected(mutant(1, enabled=False, reject_on_failure=True))


def test_sr002_whether_the_sender_supports_shadow_redundancy_does_not_matter(traces):
    """SR-002: a shadow is tried for every message, from senders with and without XSHADOW alike."""
    tried = defaultdict(bool)
    for events in traces.values():
        enabled = json.loads(events[0].attrs["config"])["sr"]["enabled"]  # the recorded configuration
        attempts = {_key(e) for e in events if e.kind in ("HAREDIRECT", "HAREDIRECTFAIL")}
        for e in events:
            if e.kind == "RECEIVE" and enabled:
                assert _key(e) in attempts, e
                tried[e.attrs["sender_xshadow"]] = True
    assert tried[True] and tried[False], "both kinds of sender should occur"
