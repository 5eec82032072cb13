"""Planted bugs, one per invariant of `properties.py`: each must be caught by the monitor.

Seed 002. A mutant is the reference generator run with one flaw switched on in the shared rules
(`decisions.py`, `actions.py`); the flaw names and the property each one breaks are listed in `MUTANTS`.
Each mutant opens with a short scripted prelude that leads the system to the situation its flaw
concerns (then the random steps follow), so that every mutant trace, whatever the seed, shows the
violation its name announces (the shipped sample corpus relies on it).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from model.am import rules as R
from model.am.decisions import Out
from model.am.protocol import Layout, ModelSystem
from model.am.sim import simulate
from traces.schema import Event
from traces.verdict import Rule

# mutant name -> (flaw, the monitor rule that must catch it)
CATCHES: dict[str, tuple[str, Rule]] = {
    "activate-without-dial": ("no_dial", R.DIAL),
    "sam-activates": ("sam_activates", R.ONLY_PAM_ACTIVATES),
    "ignore-blocked": ("ignore_blocked", R.NEVER_BLOCKED),
    "second-pam-after-partition": ("second_pam", R.SINGLE_PAM),
    "wrong-order": ("wrong_order", R.SELECTION_ORDER),
    "retry-failed-mount": ("retry_mount", R.NEXT_BEST_COPY),
    "sort-by-preference": ("preference_sort", R.SORT_COPY_QUEUE),
    "lossless-switchover-by-queue": ("lossless_switchover_ignored", R.SORT_LOSSLESS_SWITCHOVER),
    "ignore-responder-constraint": ("ignore_responder", R.RESPONDER_TARGET),
    "no-pam-move-before-maintenance": ("no_pam_move", R.PAM_BEFORE_MAINTENANCE),
    "lossless-ignored-in-sort": ("lossless_ignored", R.SORT_LOSSLESS_DIAL),
    "mount-without-acll": ("skip_acll", R.ACLL_BEFORE_MOUNT),
    "stale-location-answer": ("stale_location", R.LOCATION_ANSWER),
    "minority-keeps-mounted": ("minority_keeps_mounted", R.MINORITY_MOUNT),
}
# the same as names, for the harness and the reports: mutant name -> (flaw, rule name, requirement ID)
MUTANTS: dict[str, tuple[str, str, str]] = {
    name: (flaw, rule.name, rule.requirement) for name, (flaw, rule) in CATCHES.items()
}
# Rules that also, and legitimately, catch a mutant. A wrong sort is recorded in BCSS_START, whose restated
# list must be one of the orders the seed allows (`bcss-record`): when the run's attempts happen to be right
# (the first copy mounts) the record is the only thing wrong; when an attempt is wrong, the behaviour rule
# leads and the record is its evidence (issue 24).
SORT_RULES = (R.SORT_COPY_QUEUE, R.SORT_LOSSLESS_DIAL, R.SORT_LOSSLESS_SWITCHOVER)
ALSO_CATCH: dict[str, tuple[Rule, ...]] = {
    "lossless-ignored-in-sort": (R.BCSS_RECORD,),
    "sort-by-preference": (R.BCSS_RECORD,),
    "lossless-switchover-by-queue": (R.BCSS_RECORD,),
    # the reversed list breaks the sort statement when the copies it swaps share a tier and criteria set
    "wrong-order": (*SORT_RULES, R.BCSS_RECORD),
    # a copy left mounted outside the quorum (minority-mount) is, once the majority mounts another, two
    # mounted copies (one-active-copy): the same requirement, AM-009
    "minority-keeps-mounted": (R.ONE_ACTIVE_COPY,),
    # mounting whatever the dial says is, first, an ACLL_END whose verdict (`ok`) is not the one the recorded
    # dial and threshold give for the missing logs (AM-024, the same requirement): the mount comes after it
    "activate-without-dial": (R.ACLL_RECORD,),
}
ALSO: dict[str, tuple[str, ...]] = {name: tuple(r.name for r in rules) for name, rules in ALSO_CATCH.items()}


def _db(layout: Layout) -> str:
    """The DAG database with the most copies (ties: the first by name)."""
    dag_dbs = [db for db, servers in sorted(layout.copies.items()) if servers[0] in layout.members]
    return max(dag_dbs, key=lambda db: len(layout.copies[db]))


def _active_on_a_sam(s: ModelSystem, layout: Layout, db: str) -> list[Out]:
    active, pams = s.world.dbs[db].active, s.pams()
    if active is None or active not in pams:
        return []
    return s.move_pam(next(m for m in layout.members if m != active))


def _lagging_then_crash(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    outs = s.generate_logs(db, 40, dict.fromkeys(layout.members, 25))
    return outs + s.crash(s.world.dbs[db].active or "")


def _sam_failure(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    return _active_on_a_sam(s, layout, db) + s.fail_database(db)


def _all_passives_blocked(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    active = s.world.dbs[db].active
    outs: list[Out] = []
    for server in layout.copies[db]:
        if server != active:
            outs += s.set_copy(db, server, suspended=True)
    return outs + s.fail_database(db)


def _partition_the_pam(s: ModelSystem, layout: Layout) -> list[Out]:
    return s.partition([sorted(s.pams())])


def _uneven_copies_fail(s: ModelSystem, layout: Layout) -> list[Out]:
    """Copies in different criteria sets (copy queue under and over the bound): reversing breaks AM-039."""
    db = _db(layout)
    lags = {m: 0 if i < 2 else 12 * i for i, m in enumerate(layout.copies[db])}
    return s.generate_logs(db, 40, lags) + s.fail_database(db)


def _every_mount_fails(s: ModelSystem, layout: Layout) -> list[Out]:
    """A failover in which no mount succeeds: the PAM must go on to the next copy each time (AM-025)."""
    db = _db(layout)
    env: Any = s.env
    before, env.mount_fail = env.mount_fail, 1.0
    try:
        return s.fail_database(db)
    finally:
        env.mount_fail = before


def _queue_against_preference(s: ModelSystem, layout: Layout) -> list[Out]:
    """Short copy queues on the copies of low preference, all within one criteria set."""
    db = _db(layout)
    servers = layout.copies[db]
    return s.generate_logs(db, 20, {m: len(servers) - i for i, m in enumerate(servers)})


def _queue_against_preference_then_fail(s: ModelSystem, layout: Layout) -> list[Out]:
    return _queue_against_preference(s, layout) + s.fail_database(_db(layout))


def _lossless_switchover(s: ModelSystem, layout: Layout) -> list[Out]:
    return _queue_against_preference(s, layout) + s.switchover(_db(layout), True)


def _responder_nowhere_better(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    source = s.world.dbs[db].active or ""
    outs: list[Out] = []
    for m in layout.members:
        if m != source:
            outs += s.set_health(m, "OutlookWeb", "Unhealthy")
    return outs + s.responder_failover(source, "OutlookWeb")


def _maintain_the_pam(s: ModelSystem, layout: Layout) -> list[Out]:
    return s.maintenance(sorted(s.pams())[0]) if s.pams() else []


def _lossless_somewhere_then_fail(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    servers = layout.copies[db]
    lags = {m: 2 * (len(servers) - i) for i, m in enumerate(servers)}  # low preference, short queue
    outs = s.set_dial(servers[-1], "Lossless") + s.generate_logs(db, 30, lags)
    return outs + s.fail_database(db)


def _fail_active(s: ModelSystem, layout: Layout) -> list[Out]:
    return s.fail_database(_db(layout))


def _move_then_ask(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    return s.switchover(db, False) + s.query(db, layout.members[0])


def _cut_off_the_active(s: ModelSystem, layout: Layout) -> list[Out]:
    db = _db(layout)
    active = s.world.dbs[db].active or ""
    return _active_on_a_sam(s, layout, db) + s.partition([[active]])


PRELUDES: dict[str, Callable[[ModelSystem, Layout], list[Out]]] = {
    "no_dial": _lagging_then_crash,
    "sam_activates": _sam_failure,
    "ignore_blocked": _all_passives_blocked,
    "second_pam": _partition_the_pam,
    "wrong_order": _uneven_copies_fail,
    "retry_mount": _every_mount_fails,
    "preference_sort": _queue_against_preference_then_fail,
    "lossless_switchover_ignored": _lossless_switchover,
    "ignore_responder": _responder_nowhere_better,
    "no_pam_move": _maintain_the_pam,
    "lossless_ignored": _lossless_somewhere_then_fail,
    "skip_acll": _fail_active,
    "stale_location": _move_then_ask,
    "minority_keeps_mounted": _cut_off_the_active,
}


def _mutant(flaw: str, seed: int, **opts: Any) -> list[Event]:
    opts.setdefault("prelude", PRELUDES[flaw])
    return simulate(seed, flaws=frozenset({flaw}), **opts)


SIMULATORS: dict[str, Callable[..., list[Event]]] = {
    name: partial(_mutant, flaw) for name, (flaw, _, _) in MUTANTS.items()
}
