"""Retiring a message the monitor's fold can no longer learn anything from, and reviving it if it must.

Seed 000, "How shadow messages are maintained" (SR-057, SR-065..SR-067) and "Message processing after an
outage" (SR-075): a message is *settled* when every copy of every instance is in a state no recorded fault
changes and no end-of-run rule reads (`DEAD`: refused, aborted, failed, expired, gone, lost) and the
end-of-run liveness rules (`liveness.liveness_findings`: no loss, SR-075; shadow released, SR-057) would
report nothing for it. Such a message is retired: its state leaves `World.msgs` and the node index
`World.at` and is kept as compressed bytes (`retire`), and the fold brings it back (`revive`) before any later
event that names it, except its end-of-run SNAPSHOT. That is why retiring never changes a verdict:

- no event about another message reads it: the only scans over messages are a CRASH's or a RESTART's
  (`step._apply`), and `step.LIFECYCLE` changes no `DEAD` state; the heartbeat and promotion checks read
  `World.held`, `World.contact` and `World.owed`, which are not per message and stay live;
- its SNAPSHOT finds no message and reports nothing of it (`liveness.end_of_run`), which is what the live
  message would have given: the age checks there read only shadows, Safety Net and queued copies (not
  `DEAD`), and the liveness findings read the instance and its message, never the time, and were empty;
- any other event about it (a sender's redelivery, a stray record of a faulty transport) meets the very
  state it would have met: pickle gives back the same dataclasses, and every explanation sorts its sets.

So a retired message costs one compressed blob (a few hundred bytes) instead of its objects, and the work
of a CRASH no longer grows with the messages already settled.
"""

from __future__ import annotations

import pickle
import zlib

from model.sr import events as ev
from model.sr.liveness import liveness_findings
from model.sr.world import ABORTED, EXPIRED, FAILED, GONE, LOST, REFUSED, Msg, World

# states of a copy that no recorded fault changes (`step.LIFECYCLE`) and no end-of-run age check reads
DEAD = frozenset({REFUSED, ABORTED, FAILED, EXPIRED, GONE, LOST})
# event kinds that can put a message's last live copy into a `DEAD` state (faults: CRASH and RESTART)
SETTLING = frozenset({ev.REJECT, ev.FAIL, ev.SHADOW_EXPIRE, ev.SAFETYNET_EXPIRE, ev.LOST})


def settled(m: Msg) -> bool:
    """Every copy of every instance `DEAD`, and nothing for the liveness rules to report (module docstring)."""
    for iv in m.insts.values():
        for copy in iv.copies.values():
            if copy.state not in DEAD:
                return False
    return not any(liveness_findings(iv, m.delivered, m.licences) for iv in m.insts.values())


def retire(w: World, name: str) -> bytes:
    """Take message `name` out of the world (and the node index); return its state as compressed bytes."""
    m = w.msgs.pop(name)
    for iv in m.insts.values():
        for node in iv.copies:
            w.at[node].pop((iv.msg, iv.inst), None)
    return zlib.compress(pickle.dumps(m, protocol=pickle.HIGHEST_PROTOCOL), 1)


def revive(w: World, name: str, blob: bytes) -> None:
    """Put a retired message back exactly as it was retired (a later event names it)."""
    m: Msg = pickle.loads(zlib.decompress(blob))
    w.msgs[name] = m
    for iv in m.insts.values():
        for node in iv.copies:
            w.at.setdefault(node, {})[(iv.msg, iv.inst)] = iv
