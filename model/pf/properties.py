"""Named invariants of public folder replication, each citing its requirement ID, as pure checks.

Each check returns None when the property holds, or one sentence saying why it does not. The monitor
(`monitor.py`) evaluates them on states replayed from a trace; the stateful tests on live model state.

Liveness (PF-035, convergence): *fairness assumption*: from the start of the quiescent phase T_q no store
is down, no mail is lost, every message is delivered within `lat` ms, and every store makes one hierarchy
change at T_q and every active replica one local change at T_q + `touch_gap_ms` (so that each replica
announces its CNSet once to every other). *Bound*: by T_q + `convergence_bound_ms` every active replica of
a folder holds the same CNSet, and every store the same hierarchy CNSet. The bound adds the longest wait an
entry filed before T_q may still have (the later retry, remote), the hierarchy interval, two backfill checks
and deliveries; then the content interval, the initial and first-retry time-outs (remote) for a source
that disappears, three backfill checks and deliveries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from model.pf import rules as R
from model.pf.cnset import CNSet
from model.pf.state import ACTIVE, Change, Params
from spec.catalogue import require

require("PF-026")


def touch_gap_ms(p: Params, lat_ms: int = 10 * 60_000) -> int:
    waits = max(p.initial_remote_ms, p.first_retry_remote_ms, p.later_retry_remote_ms)
    return p.hierarchy_interval_ms + waits + 2 * p.backfill_check_ms + 4 * lat_ms


def convergence_bound_ms(p: Params, lat_ms: int = 10 * 60_000) -> int:
    return (
        touch_gap_ms(p, lat_ms)
        + p.content_interval_ms
        + p.hierarchy_interval_ms
        + p.initial_remote_ms
        + p.first_retry_remote_ms
        + 3 * p.backfill_check_ms
        + 6 * lat_ms
    )


# --- checks ----------------------------------------------------------------------------------------------
def packing_limits(changes: Sequence[Change], hierarchy: bool, p: Params) -> str | None:
    if R.fits(changes, hierarchy, p):
        return None
    size = sum(c.size_kb for c in changes)
    deletes = sum(1 for c in changes if c.op == "delete")
    folders = len({c.target for c in changes if c.op != "delete"})
    kind = f"{folders} folders and {deletes} folder deletes" if hierarchy else f"{len(changes)} items"
    return (
        f"the message packs {kind} ({size} KB), over the limits ({p.message_count_limit} items, "
        f"{p.folder_count_limit} folders, {p.deleted_folder_limit} deletes, {p.message_size_limit_kb} KB)"
    )


def packing_data(changes: Sequence[Change], hierarchy: bool, p: Params) -> dict[str, object]:
    """The values `packing_limits` compares, and their bounds (PF-011: PF-P08..PF-P11), for a violation."""
    return {
        "items": len(changes),
        "folders": len({c.target for c in changes if c.op != "delete"}) if hierarchy else None,
        "deletes": sum(1 for c in changes if c.op == "delete"),
        "size_kb": sum(c.size_kb for c in changes),
        "limits": {
            "items": p.message_count_limit,
            "folders": p.folder_count_limit,
            "deletes": p.deleted_folder_limit,
            "size_kb": p.message_size_limit_kb,
        },
        "parameters": ["PF-P08", "PF-P09", "PF-P10", "PF-P11"],
    }


def cnset_carried(recorded: CNSet, actual: CNSet) -> str | None:
    if recorded == actual:
        return None
    return f"the message carries CNSet {recorded} but the sender holds {actual}"


def content_to_replicas(recipients: Sequence[str], allowed: Sequence[str]) -> str | None:
    extra = sorted(set(recipients) - set(allowed))
    return None if not extra else f"sent to {extra}, which are not replicas of the folder (replicas: {list(allowed)})"


def status_answer(requester: CNSet, own: CNSet, requires_response: bool) -> str | None:
    if R.should_answer(requester, own, requires_response):
        return None
    return f"answered a status request whose CNSet {requester} is not a strict subset of its own {own}"


def delete_after_status(
    statuses: Mapping[str, CNSet], view: Mapping[str, str], own: CNSet, store: str, p: Params
) -> str | None:
    others = sorted(s for s, st in view.items() if st == ACTIVE and s != store)
    ok = [s for s in others if s in statuses and statuses[s] >= own]
    if (p.delete_requires_all and others and len(ok) == len(others)) or (not p.delete_requires_all and ok):
        return None
    need = "every other active replica" if p.delete_requires_all else "another active replica"
    return (
        f"moved to delete now holding {own} without a status message from {need} "
        f"({others}) showing all of it (statuses received: {sorted(statuses)})"
    )


def no_content_loss(own: CNSet, others: Mapping[str, CNSet], restored: Mapping[str, CNSet] | None = None) -> str | None:
    """BF-033 at delete now. `restored` holds the statuses of replicas that confirmed and were then
    restored from an older backup: changes they confirmed are lost by the restore, not by the deletion
    (BF-I15)."""
    union = CNSet()
    for c in (*others.values(), *(restored or {}).values()):
        union = union | c
    lost = own - union
    if not lost:
        return None
    return f"deleting this replica loses {lost}: no other active replica ({sorted(others)}) holds it"


def converged(cnsets: Mapping[str, CNSet]) -> str | None:
    distinct = {c for c in cnsets.values()}
    if len(distinct) <= 1:
        return None
    return "active replicas differ after the convergence bound: " + "; ".join(
        f"{s}={c}" for s, c in sorted(cnsets.items())
    )
