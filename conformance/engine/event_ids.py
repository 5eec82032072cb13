"""Event IDs that name their own event, for the harness's incremental judge (`conformance.engine.growing.
Incremental`; TR-002, `conformance.engine.core_rules.EVENT_ID_UNIQUE`; issue 33, session 17).

The kernel's recorder writes `<trace_id>:<seq>` (`model.kernel.recorder`), the am and process harnesses
`<trace_id>-<seq>` (`conformance.harness.am`, `conformance.harness.process`). Such an ID repeats only with its own
trace and seq (`own_id`), which the incremental judge's seq order check refuses already: it keeps only the other IDs,
and breaks on one of them that may spell an own ID already fed (`spells_own`). Tests and twins:
`tests/engine/test_incremental_ids.py`.
"""

from __future__ import annotations

_SEPARATORS = frozenset(":-")


def own_id(eid: str, trace: str, seq: int) -> bool:
    """Whether `eid` is `<trace>:<seq>` or `<trace>-<seq>` (the kernel's recorder and the harnesses' IDs), for a
    seq the order check let through (an int above -1). Two such IDs are equal only for the same trace and seq:
    `str(seq)` of an int of at least 0 holds neither separator (digits; a bool's `True`/`False` neither), so the
    ID's last ':' or '-' splits it into that trace and that seq, whichever event it names. A repeated own ID is
    then an event of a trace fed at a seq it already passed: `Incremental.feed`'s order check breaks the fold."""
    n = len(trace)
    return type(seq) is int and eid[n + 1 :] == str(seq) and eid[n : n + 1] in _SEPARATORS and eid.startswith(trace)


def spells_own(eid: str, last: dict[str, int]) -> bool:
    """Whether `eid` (an ID that does not name its own event) might be the own ID of an event already fed: its
    last ':' or '-' splits it into a trace fed and a seq (digits, as `str` writes an int) no later than that
    trace's last. It may not be (the trace's seqs need not be consecutive): then the slow path judges the prefix
    whole, the same verdict (`Incremental`)."""
    cut = max(eid.rfind(":"), eid.rfind("-"))
    if cut < 0:
        return False
    tail, trace = eid[cut + 1 :], eid[:cut]
    if not (tail.isascii() and tail.isdigit()) or str(int(tail)) != tail or trace not in last:
        return False
    return int(tail) <= last[trace]
