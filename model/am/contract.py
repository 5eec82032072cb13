"""The Active Manager vocabulary's checked parts (issue 30): the recorders as roles, the formats and values, the
ordering rules as predicates, and the configuration fields the monitors read (TRACE_START `config.bcss`, the
`Options` of `model/am/bcss.py`). Used by `model/am/vocabulary.py`; checked on every simulated trace by
`tests/unit/test_vocabulary_contract.py`. Seed 002.

The simulator names the recorder after the event's own attributes (`model/am/sim.py`, `record`): the server in
`by`, else the one in `pam`, else the one in `server`, else the DAG (the cluster itself: DAG_VIEW, LOGS,
DB_CREATE, SWITCHOVER, a BCSS_END that mounted nothing). The roles below state exactly that.
"""

from __future__ import annotations

from collections.abc import Iterator

from model.am import events as ev
from model.am import state as st
from model.am.bcss import Options
from model.kernel.vocabulary import config_fields
from traces.contract import History, Hit, before, custom, pattern
from traces.schema import Event
from traces.vocabulary import ConfigField, Order, Role

STATUSES = st.COPY_STATUSES
CI = ("Healthy", "Crawling", "Failed", "Suspended", "Unknown")
DIALS = (st.LOSSLESS, st.GOOD_AVAILABILITY, st.BEST_AVAILABILITY)
PRIORITIES = tuple(st.PRIORITY_RANK)
COMPONENT_STATES = (st.C_HEALTHY, st.C_DEGRADED, st.C_UNHEALTHY)
GROUP = pattern("`A+B+C` (servers joined by `+`)", r"[^+\s]+(\+[^+\s]+)*")
HEALTH = pattern("`server/component/priority/state`", r"[^/]+/[^/]+/(High|Normal|Low)/(Healthy|Degraded|Unhealthy)")
ORDER_ITEM = pattern("`server:tier:criteria set`", r"[^:]+:\d+:\d+")


def _dag(h: History) -> set[str]:
    return {e.entity for k in ("DAG_VIEW", "AM_DAG_CONFIG") for e in h.by_kind.get(k, [])}


def _is_dag(e: Event, h: History) -> bool:
    return e.node in _dag(h) or (e.kind in ("DAG_VIEW", "AM_DAG_CONFIG") and e.node == e.entity)


def _attr_role(name: str) -> Role:
    return Role(f"the server in `{name}`", lambda e, h: e.node == e.attrs.get(name), strict=False)


# The am checker never reads `node`: these are the simulators' recorders (checked on simulated traces only).
DAG_ROLE = Role("the DAG (node: the DAG's name)", _is_dag, strict=False)
BY = _attr_role("by")


def _is_pam(e: Event, h: History) -> bool:
    """The node is the `pam` the event names, a PAM claimant of the DAG's latest AM_DAG_CONFIG (or, before
    the first, of a PAM_ACQUIRE not released since)."""
    if e.node != e.attrs.get("pam"):
        return False
    cfg = h.last("AM_DAG_CONFIG")
    if cfg is not None:
        return e.node in cfg.attrs.get("claims", [])
    acquired = [x.seq for x in h.by_kind.get("PAM_ACQUIRE", []) if x.attrs.get("server") == e.node]
    released = [x.seq for x in h.by_kind.get("PAM_RELEASE", []) if x.attrs.get("server") == e.node]
    return bool(acquired) and (not released or max(acquired) > max(released))


PAM = Role("the PAM (the server in `pam`, a PAM claimant of the latest AM_DAG_CONFIG)", _is_pam, strict=False)
SERVER_ROLE = _attr_role("server")
MOUNTED_OR_DAG = Role(
    "the server in `server` (the copy mounted), or the DAG when none was",
    lambda e, h: e.node == e.attrs.get("server") if e.attrs.get("server") else _is_dag(e, h),
    strict=False,
)

BATCH = frozenset({"DAG_VIEW", "PAM_ACQUIRE", "PAM_RELEASE", "SERVER_HEALTH"})


def _dag_config_after_batch(events: list[Event]) -> Iterator[Hit]:
    dirty: Event | None = None
    dags: set[str] = set()
    for e in events:
        if e.mechanism != "am":
            continue
        if e.kind in BATCH or e.kind == "AM_DAG_CONFIG":
            dags.add(e.entity)
            dirty = None if e.kind == "AM_DAG_CONFIG" else dirty or e
        elif dirty is not None and e.entity not in dags:  # an event of a database (a DAG event may come between)
            yield e.kind, "order", f"recorded before the AM_DAG_CONFIG of the batch from seq {dirty.seq}", e.seq
            dirty = None


def _acll_copy_state(events: list[Event]) -> Iterator[Hit]:
    """Between ACLL_START and its ACLL_END, a COPY_STATE of that copy carries the ACLL_END's `lli`."""
    open_: dict[tuple[str, object], list[Event]] = {}
    for e in events:
        key = (e.entity, e.attrs.get("server"))
        if e.kind == "ACLL_START":
            open_[key] = []
        elif e.kind == "COPY_STATE" and key in open_:
            open_[key].append(e)
        elif e.kind == "ACLL_END" and key in open_:
            states = open_.pop(key)
            if e.attrs.get("lli") != e.attrs.get("lli_before") and not any(
                s.attrs.get("lli") == e.attrs.get("lli") for s in states
            ):
                yield e.kind, "lli", "no COPY_STATE with the new last log inspected since its ACLL_START", e.seq


def _copy(e: Event) -> tuple[str, object]:
    return e.entity, e.attrs.get("server")


def _db(e: Event) -> str:
    return e.entity


ORDERING: tuple[Order, ...] = (
    custom(
        "AM_DAG_CONFIG after a batch of DAG_VIEW / PAM_ACQUIRE / PAM_RELEASE / SERVER_HEALTH events, before the next "
        "event of a database (the databases' monitors read the DAG from it; else `dag-record`); DAG events such as "
        "AM_CONFIG and MAINTENANCE may come between",
        _dag_config_after_batch,
    ),
    before(
        "DB_CREATE before every other event of its database (any distance)",
        {"DB_CREATE"},
        {"COPY_STATE", "LOGS", "FAILURE", "FAILOVER_REQUEST", "SWITCHOVER", "BCSS_START", "MOUNTED", "MOUNT_START"},
        _db, _db, instant=False,
    ),
    before(
        "a server's AM_CONFIG with its `dial` before the ACLL_END that compares that dial (any distance)",
        {"AM_CONFIG"}, {"ACLL_END"}, lambda e: e.attrs.get("server"), lambda e: e.attrs.get("server"),
        instant=False, required=True, when_first=lambda e: ev.DIAL_ATTR in e.attrs,
    ),
    before(
        "a copy's AM_CONFIG policy (`database`, `blocked` / `suspended`) before the COPY_STATE that restates a "
        "block or suspension (any distance)",
        {"AM_CONFIG"}, {"COPY_STATE"}, lambda e: (e.attrs.get("database"), e.attrs.get("server")), _copy,
        instant=False, required=True, when_first=lambda e: "database" in e.attrs,
        when=lambda e: bool(e.attrs.get("blocked") or e.attrs.get("suspended")),
    ),
    before(
        "MOUNTED before the COPY_STATE that reports the copy `Mounted` at the same instant",
        {"MOUNTED"}, {"COPY_STATE"}, _copy, _copy, when=lambda e: e.attrs.get("status") == st.MOUNTED,
    ),
    before(
        "a BCSS run: BCSS_START, then per copy tried ACLL_START, ACLL_END, (ACTIVE_MOVE), MOUNT_START, then "
        "MOUNT_FAIL or MOUNTED, then BCSS_END (AM-051: ACLL before the mount): each ACLL_END after its ACLL_START",
        {"ACLL_START"}, {"ACLL_END"}, _copy, _copy, required=True,
    ),
    before(
        "... an ACLL run's MOUNT_START (not a `remount`) after its ACLL_END at the same instant (AM-051)",
        {"ACLL_END"}, {"MOUNT_START"}, _copy, _copy, when=lambda e: not e.attrs.get("remount"),
    ),
    before(
        "... and BCSS_END after its BCSS_START at the same instant", {"BCSS_START"}, {"BCSS_END"}, _db, _db,
        required=True,
    ),
    custom(
        "ACLL_START is followed by a COPY_STATE of that copy carrying the new last log inspected (ACLL_END `lli`) "
        "before its ACLL_END (else `acll-record`)",
        _acll_copy_state,
    ),
    before(
        "FAILURE before the FAILOVER_REQUEST it causes at the same instant (AM-013)",
        {"FAILURE"}, {"FAILOVER_REQUEST"}, _copy, _copy, required=True,
    ),
    before(
        "FAILURE before the BCSS_START (`trigger` `failure` or `responder`) it causes at the same instant",
        {"FAILURE"}, {"BCSS_START"}, _db, _db, when=lambda e: e.attrs.get("trigger") in ("failure", "responder"),
    ),
    before(
        "DISMOUNTED before a new active's MOUNT_START at the same instant",
        {"DISMOUNTED"}, {"MOUNT_START"}, _db, _db,
    ),
    before(
        "PAM_RELEASE of the PAM before MAINTENANCE of that server at the same instant (AM-007)",
        {"PAM_RELEASE"}, {"MAINTENANCE"}, lambda e: e.attrs.get("server"), lambda e: e.attrs.get("server"),
    ),
)  # fmt: skip


_TABLE: dict[str, tuple[str, str, str]] = {
    "order": ("string", "BcssTierCriteriaOrder", "how the tier and criteria-set loops nest (AM-I01)"),
    "up_to_normal": ("string", "UpToNormalScope", "which components the tier 'Up to Normal Healthy' reads"),
    "require_status": ("boolean", "CriteriaRequireStatus", "the criteria sets require an acceptable copy status"),
    "dial_scope": ("string", "DialScope", "`TargetServer` (the target's dial) or `MostRestrictive`"),
    "responder": ("string", "ResponderConstraint", "how a responder failover restricts the candidates (AM-032)"),
    "below_source": ("boolean", "BcssBelowSourceFallback", "fall back to servers no healthier than the source"),
    "cq_below": ("integer", "CriteriaCopyQueueLengthBelow", "the copy queue bound of the criteria sets"),
    "rq_below": ("integer", "CriteriaReplayQueueLengthBelow", "the replay queue bound of the criteria sets"),
    "thresholds": (
        "list of `[dial, n]` pairs",
        "",
        "each AutoDatabaseMountDial value with the logs it may lose (AM-P02..AM-P04); a dial without a pair is an "
        "input fault (AM-I09)",
    ),
}
CONFIG: tuple[ConfigField, ...] = config_fields("TRACE_START `config.bcss`", Options(), _TABLE)
