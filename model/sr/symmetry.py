"""Which transport servers are interchangeable under a recorded configuration (issue 33, symmetry reduction).

Seed 000, "Requirements for shadow redundancy" (the boundary is the DAG, or the site outside any DAG: SR-006) and
"How shadow messages are created" (the attempt plan follows the primary's own ShadowMessagePreference and the
primary's and the candidate's sites: SR-014, SR-015, SR-044; per server, SR-I01). Everything the model decides
about a server reads only its site, its DAG, its version and role, and its ShadowMessagePreference; two Exchange
2013 servers that agree on all of these may be renamed one into the other: the renamed state behaves as the
renamed original. An Exchange 2010 Hub is alone in its kind (one per topology). Sites are not renamed (a Hub sits
in site0, and the groups are of server names only).

One caveat the explorer must honour: within one virtual millisecond the model takes the actions of different
servers in name order (a heartbeat tick queries primaries sorted by name; candidates are listed sorted and a
choice's outcome is an index into them). So a renamed state's successors are the renamed successors up to the
order of same-instant actions of different servers and the order of a choice's outcomes; a fingerprint that
renames must encode what it hashes without that order (e.g. timers of one instant as a set).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.sr.sim import build_topology
from model.sr.state import SrConfig

# what `model.sr.protocol.ModelSystem` (the system the explorer drives) takes when the setup does not say
DEFAULTS: dict[str, Any] = {"layout": "multi-site-dag", "n_servers": 4, "hub": False}


def interchangeable(setup: Mapping[str, Any]) -> list[list[str]]:
    """Groups (two or more names, sorted; groups sorted) of server names that may be renamed among themselves
    in a state of a `ModelSystem` built from `setup` (the harness's sr setup: `layout`, `n_servers`, `hub`,
    `preference`, `preference_by_server`). Servers alone in their class are left out; may be empty."""
    layout = setup.get("layout", DEFAULTS["layout"])
    n_servers = int(setup.get("n_servers", DEFAULTS["n_servers"]))
    hub = bool(setup.get("hub", DEFAULTS["hub"]))
    topo = build_topology(None, n_servers, layout, hub)  # layout and hub given: nothing is drawn
    cfg = SrConfig(
        preference=setup.get("preference", SrConfig().preference),
        preference_by_server=dict(setup.get("preference_by_server") or {}),
    )
    classes: dict[tuple[Any, ...], list[str]] = {}
    for name in topo.names():
        s = topo.server(name)
        if s.version != "2013":
            continue
        classes.setdefault((s.site, s.dag, s.version, s.role, cfg.preference_of(name)), []).append(name)
    return sorted(sorted(g) for g in classes.values() if len(g) > 1)
