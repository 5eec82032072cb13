"""A small builder for hand-written Active Manager traces (seed 002), independent of the generator.

Nothing here calls the model: every event is written out as a real DAG would record it, so the traces
measure the monitor rather than the model's agreement with itself. The default DAG1 has members MBX1..MBX3,
the PAM on MBX3, and DB1 with copies on MBX1 (active, preference 1), MBX2 (2) and MBX3 (3).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from traces.schema import Event

COMPONENTS = (("OutlookWeb", "High"), ("ActiveSync", "Normal"), ("Transport", "High"), ("Search", "Low"))
BCSS = {
    "below_source": False,
    "cq_below": 10,
    "dial_scope": "TargetServer",
    "order": "TierMajor",
    "require_status": True,
    "responder": "Better",
    "rq_below": 50,
    "up_to_normal": "NormalAndAbove",
    "thresholds": [["Lossless", 0], ["GoodAvailability", 6], ["BestAvailability", 12]],
}


class Trace:
    """Events appended in order; `boot` records the DAG, the configuration and DB1 mounted on MBX1.

    Like a recording system, the builder records the DAG facts (view, PAM claims, changed health) as
    AM_DAG_CONFIG after each batch of DAG-level changes, before the next other event: the context each
    database's monitor reads them from."""

    def __init__(
        self, name: str, *, bcss: Mapping[str, Any] | None = None, drop: Sequence[str] = (), dag_facts: bool = True
    ) -> None:
        self.name = name
        self._events: list[Event] = []
        self.copies: dict[str, dict[str, Any]] = {}
        self.dag_facts = dag_facts
        self.facts: dict[str, Any] = {"members": [], "up": [], "groups": [], "claims": []}
        self.health: list[str] = []  # health entries changed since the last AM_DAG_CONFIG
        self.dirty = False
        config = {k: v for k, v in {**BCSS, **(bcss or {})}.items() if k not in drop}
        self._add(
            "sim",
            "core",
            name,
            "TRACE_START",
            seed=0,
            model="am",
            config=json.dumps({"bcss": config}, sort_keys=True, separators=(",", ":")),
        )

    def _add(self, node: str, mechanism: str, entity: str, kind: str, **attrs: Any) -> Trace:
        seq = len(self._events)
        stamp = 1_767_225_600_000 + seq * 1000
        self._events.append(Event(self.name, seq, f"{self.name}:{seq}", stamp, node, mechanism, entity, kind, attrs))
        return self

    @property
    def events(self) -> list[Event]:
        self.flush()
        return self._events

    def flush(self, **lie: Any) -> Trace:
        """Record the DAG facts changed since the last time (AM_DAG_CONFIG); `lie` overrides some of them."""
        if (self.dirty or lie) and self.dag_facts:
            self._add("DAG1", "am", "DAG1", "AM_DAG_CONFIG", **{**self.facts, "health": self.health, **lie})
        self.dirty, self.health = False, []
        return self

    def dag(self, kind: str, **a: Any) -> Trace:
        if kind == "DAG_VIEW":
            self.flush()  # each view starts a new batch
            self.facts.update(members=a["members"], up=a["up"], groups=a["groups"])
        elif kind == "PAM_ACQUIRE":
            self.facts["claims"] = sorted({*self.facts["claims"], a["server"]})
        elif kind == "PAM_RELEASE":
            self.facts["claims"] = sorted(set(self.facts["claims"]) - {a["server"]})
        elif kind == "SERVER_HEALTH":
            self.health.append(f"{a['server']}/{a['component']}/{a['priority']}/{a['state']}")
        self.dirty = self.dirty or kind in ("DAG_VIEW", "PAM_ACQUIRE", "PAM_RELEASE", "SERVER_HEALTH")
        return self._add(str(a.get("server", "DAG1")), "am", "DAG1", kind, **a)

    def db(self, kind: str, db: str = "DB1", **a: Any) -> Trace:
        self.flush()
        return self._add(str(a.get("by") or a.get("pam") or a.get("server") or db), "am", db, kind, **a)

    def view(self, members: Sequence[str], up: Sequence[str], groups: Sequence[str]) -> Trace:
        return self.dag("DAG_VIEW", members=list(members), up=sorted(up), groups=list(groups))

    def copy(self, server: str, db: str = "DB1", **changes: Any) -> Trace:
        """COPY_STATE: the full state of a copy, changed by `changes` (status, lli, rq, ci, pref, ...)."""
        c = self.copies.setdefault(
            f"{db}/{server}",
            {
                "server": server,
                "status": "Healthy",
                "lli": 0,
                "rq": 0,
                "ci": "Healthy",
                "pref": 1,
                "blocked": False,
                "suspended": False,
            },
        )
        c.update(changes)
        return self.db("COPY_STATE", db, **c)

    def boot(
        self,
        members: Sequence[str] = ("MBX1", "MBX2", "MBX3"),
        pam: str = "MBX3",
        copies: Sequence[str] = ("MBX1", "MBX2", "MBX3"),
        dials: Mapping[str, str] | None = None,
        prefs: Mapping[str, int] | None = None,
    ) -> Trace:
        self.view(members, members, ["+".join(sorted(members))])
        self.dag("PAM_ACQUIRE", server=pam, quorum=sorted(members))
        for s in members:
            self.dag("AM_CONFIG", server=s, dial=(dials or {}).get(s, "GoodAvailability"))
            for comp, prio in COMPONENTS:
                self.dag("SERVER_HEALTH", server=s, component=comp, priority=prio, state="Healthy")
        self.db("DB_CREATE", dag="DAG1", servers=list(copies))
        for i, s in enumerate(copies):
            self.copy(s, pref=(prefs or {}).get(s, i + 1))
        self.db("ACTIVE_MOVE", src=None, dst=copies[0], by=pam)
        self.db("MOUNT_START", server=copies[0], by=pam)
        self.db("MOUNTED", server=copies[0])
        return self.copy(copies[0], status="Mounted")

    def logs(self, lgen: int, lli: Mapping[str, int]) -> Trace:
        """The active copy writes up to `lgen`; each named copy has inspected up to `lli[server]`."""
        self.db("LOGS", lgen=lgen)
        for s, n in lli.items():
            self.copy(s, lli=n)
        return self

    def sam_failure(self, server: str = "MBX1", pam: str = "MBX3", role: str = "SAM") -> Trace:
        """The SAM on `server` finds its mounted database failed and asks the PAM (AM-012, AM-013)."""
        self.db("FAILURE", server=server, what="database", component=None, detector=server, role=role)
        self.db("DISMOUNTED", server=server, reason="database")
        self.copy(server, status="Failed")
        return self.db("FAILOVER_REQUEST", server=server, pam=pam)

    def bcss(
        self,
        order: Sequence[str] | None,
        *,
        pam: str = "MBX3",
        source: str = "MBX1",
        sort: str | None = "CopyQueue",
        trigger: str = "failure",
        **extra: Any,
    ) -> Trace:
        a: dict[str, Any] = {
            "pam": pam,
            "trigger": trigger,
            "component": None,
            "lossless": False,
            "source": source,
            **extra,
        }
        if sort is not None:
            a["sort"] = sort
        if order is not None:
            a["order"] = list(order)
        return self.db("BCSS_START", **a)

    def attempt(
        self,
        server: str,
        *,
        lli_before: int,
        lli: int,
        lgen: int,
        threshold: int = 6,
        ok: bool | None = None,
        mounts: bool = True,
        pam: str = "MBX3",
        source: str = "MBX1",
        active: str | None = "MBX1",
        missing: int | None = None,
    ) -> Trace:
        """ACLL, the dial comparison, the designation move, the mount request and its outcome."""
        self.db("ACLL_START", server=server, source=source)
        if lli != lli_before:
            self.copy(server, lli=lli)
        miss = max(0, lgen - lli) if missing is None else missing
        passed = (max(0, lgen - lli) <= threshold) if ok is None else ok
        self.db("ACLL_END", server=server, lli_before=lli_before, lli=lli, missing=miss, threshold=threshold, ok=passed)
        if not passed:
            return self
        if active != server:
            self.db("ACTIVE_MOVE", src=active, dst=server, by=pam)
        self.db("MOUNT_START", server=server, by=pam)
        if not mounts:
            self.db("MOUNT_FAIL", server=server)
            return self.copy(server, status="Dismounted")
        self.db("MOUNTED", server=server)
        return self.copy(server, status="Mounted")

    def end(self, outcome: str = "mounted", server: str | None = None) -> Trace:
        return self.db("BCSS_END", outcome=outcome, server=server)
