"""Hand-built Active Manager traces (seed 002), written with the `tests/handbuilt` builder: events of a database
whose beginning (DB_CREATE) the trace does not show. Seed 002 names no configured period for any activity the
am vocabulary records (the Replication service monitors health "periodically", with no interval), so family 1
(two-sided schedules) has no am rule. Each case: (name, build, expected)."""

from __future__ import annotations

from collections.abc import Callable

from tests.handbuilt.am.build import Trace
from traces.schema import Event

Case = tuple[str, Callable[[], list[Event]], "set[str] | str"]
ORDER = ["MBX2:1:1", "MBX3:1:1"]


def _failover(name: str) -> Trace:
    """DB1 on MBX1 fails; the PAM on MBX3 runs BCSS and mounts MBX2 (3 logs behind, within GoodAvailability)."""
    t = Trace(name).boot().logs(20, {"MBX1": 20, "MBX2": 17, "MBX3": 17}).sam_failure().bcss(ORDER)
    return t.attempt("MBX2", lli_before=17, lli=20, lgen=20).end("mounted", "MBX2")


def unseen_failover_valid() -> list[Event]:
    """Valid: every database event follows its DB_CREATE."""
    return _failover("am18-unseen-ok").events


def unseen_database_without_its_creation() -> list[Event]:
    """Unknown: DB2's logs, copy state and mount are recorded, but not its DB_CREATE: nothing of DB2 is judged,
    and the notes say so (before issue 18 the replay stopped with a KeyError)."""
    t = _failover("am18-unseen-db2")
    t.db("LOGS", "DB2", lgen=5)
    t.db("MOUNT_START", "DB2", server="MBX1", by="MBX3")
    return t.db("MOUNTED", "DB2", server="MBX1").events


def unseen_database_mounted_twice() -> list[Event]:
    """Invalid: DB1 (whose beginning is in the trace) mounted on MBX1 while MBX2 holds it (one-active-copy)."""
    t = _failover("am18-unseen-twice")
    return t.db("MOUNTED", server="MBX1").events


CASES: list[Case] = [
    ("unseen_failover_valid", unseen_failover_valid, set()),
    ("unseen_database_without_its_creation", unseen_database_without_its_creation, "unknown"),
    ("unseen_database_mounted_twice", unseen_database_mounted_twice, {"mount-transition", "one-active-copy"}),
]
