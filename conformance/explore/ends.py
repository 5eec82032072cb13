"""The fairness end's choices, within a budget (issue 33, "every allowed choice explored"; session 13).

A new state's fairness end (`Driver.finish`: sr restarts every server, heals the network and waits the quiet tail;
pf waits for convergence) makes choices of its own: one per message it sends or timer it starts (sr a restarted
server's first heartbeat, a hop's latency, a lost ack; pf a store's timer phases, each replication message's
latency). Their number grows with the state (pf: about 15 latencies, 2^15 resolutions), so they are explored
within a budget the bound names, `end_choices = N`: the end is judged under the first N resolutions in the
lexicographic order of an odometer over its choices (`model.kernel.choice.next_resolution`; a range at its ends,
the bound's `ranges`), each applied to its own copy of the state. A violation under any of them is the state's
violation, with that resolution in it (`Found.end`), written to the replay file as `"end": {"choices": [...],
"ranges": ...}` and re-imposed by `haconform replay` (`conformance.harness.core.replay_steps(..., end=...)`).

What is covered: the first N resolutions only, which are those whose early choices take their first outcomes
(the odometer moves the last choice first): N = 2 flips the end's last choice; every end whose choices number
at most log2(N) (all at two outcomes) is covered whole. What is not: the other resolutions of a longer end. With
`end_choices = 0` (or choice points off) the end's choices are drawn by the seed, as before session 13.
"""

from __future__ import annotations

from typing import Any

from conformance.explore.result import Found
from conformance.explore.state import Node, plain, release, thaw
from conformance.harness.choosing import scripted
from conformance.harness.core import Session
from conformance.harness.failure import Call
from model.kernel.choice import next_resolution


def judged_ends(ex: Any, node: Node, s: Session, calls: list[Call]) -> Found | None:
    """The first violation of `node`'s fairness end under any of its first `ex.bound.end_choices` resolutions
    (`ex`: the `conformance.explore.bfs.Explorer`; `s`: a live session in the node's state, consumed; each later
    resolution judged on a copy of it, counted in `Result.end_copies`, not `copies`: no state is expanded)."""
    blob = node.blob
    if ex.bound.end_choices > 1 and blob is None:  # the last level's states keep no blob: one frozen here
        blob = ex.freeze(s)  # None: the state cannot be copied, replayed instead
    if blob is not None and ex.bound.end_choices > 1:  # session 20: decompressed once for every later resolution
        blob = plain(blob)
    script: list[int] | None = []
    n = 0
    while script is not None and n < ex.bound.end_choices:
        if n:
            ex.result.end_copies += 1
            s = thaw(blob, ex.driver, ex.setup) if blob is not None else ex.replay(node.steps, node.start)
            s.start = node.start
        with scripted(s.system, script, ex.ranges, extend=True) as chooser:
            for call in calls:
                s.apply(call)
        made = list(chooser.made) if chooser is not None else []
        found = ex.judge(s, node.steps, True, consume=True)
        release(s)  # judged: no later resolution steps this copy
        if found is not None:
            found.end = tuple(k for _, k, _ in made)
            return found
        script = next_resolution(made)
        n += 1
    return None
