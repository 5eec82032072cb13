"""A small builder for hand-written shadow redundancy traces (an independent corpus).

The traces are written by hand from the seed's text (000, all sections), not derived from the model or its
mutants: a `Trace` starts with TRACE_START (the recorded `sr` settings) and an SR_CONFIG event with the
topology, then takes one event per call. Times are minutes (floats allowed) after the trace's start.
"""

from __future__ import annotations

import json
from typing import Any

from traces.schema import Event

T0 = 1_767_225_600_000
MIN = 60_000
# A DAG spanning two sites, a server outside any DAG, and an Exchange 2010 Hub (seed: "Requirements for
# shadow redundancy", "Shadow redundancy with Exchange 2010 Hub Transport servers in the same site").
TOPOLOGY = {
    "EX01": {"site": "Redmond", "dag": "DAG1", "version": "2013"},
    "EX02": {"site": "Dublin", "dag": "DAG1", "version": "2013"},
    "EX03": {"site": "Redmond", "dag": "DAG1", "version": "2013"},
    "EX04": {"site": "Dublin", "dag": "DAG1", "version": "2013"},
    "EX05": {"site": "Redmond", "dag": None, "version": "2013"},
    "HUB1": {"site": "Redmond", "dag": None, "version": "2010"},
}


class Trace:
    def __init__(self, name: str, topology: dict[str, Any] | None = None, **sr: Any) -> None:
        self.name, self.events = name, []
        self._add(0, "harness", "core", name, "TRACE_START", seed=0, model="sr", config=json.dumps({"sr": sr}))
        self._add(0, "harness", "sr", "config", "SR_CONFIG", topology=json.dumps(topology or TOPOLOGY))

    def _add(self, minutes: float, node: str, mech: str, entity: str, kind: str, **attrs: Any) -> Trace:
        seq = len(self.events)
        ts = T0 + round(minutes * MIN)
        self.events.append(Event(self.name, seq, f"{self.name}:{seq}", ts, node, mech, entity, kind, attrs))
        return self

    def ev(self, minutes: float, node: str, kind: str, msg: str = "m1", **attrs: Any) -> Trace:
        attrs.setdefault("inst", 1)
        return self._add(minutes, node, "sr", msg, kind, **attrs)

    def query(self, minutes: float, shadow: str, primary: str, ok: bool = True, **attrs: Any) -> Trace:
        return self._add(minutes, shadow, "sr", f"hb:{shadow}>{primary}", "XQUERYDISCARD", primary=primary, ok=ok,
                         reason=attrs.pop("reason", "heartbeat"), **attrs)  # fmt: skip

    def crash(self, minutes: float, node: str) -> Trace:
        return self._add(minutes, node, "core", node, "CRASH")

    def restart(self, minutes: float, node: str, new: bool = False) -> Trace:
        return self._add(minutes, node, "core", node, "RESTART", storage="new" if new else "same")

    def isolate(self, minutes: float, node: str) -> Trace:
        return self._add(minutes, "harness", "core", "network", "PARTITION", groups=[node])

    def heal(self, minutes: float) -> Trace:
        return self._add(minutes, "harness", "core", "network", "HEAL")

    def snapshot(self, minutes: float, *msgs: str) -> Trace:
        for m in msgs or ("m1",):
            self._add(minutes, "harness", "sr", m, "SNAPSHOT", quiesced=True)
        return self

    # --- common openings --------------------------------------------------------------------------------
    def received(self, t: float, primary: str, forks: list[str], msg: str = "m1", inst: int = 1) -> Trace:
        return self.ev(t, primary, "RECEIVE", msg, inst=inst, sender="smtp.contoso.example", origin="outside",
                       db=f"{primary}-a", forks=forks, sender_xshadow=False, xshadow_advertised=False)  # fmt: skip

    def shadowed(self, t: float, primary: str, shadow: str, forks: list[str], msg: str = "m1", n: int = 1) -> Trace:
        """HAREDIRECT attempt `n` to `shadow`, its store, the acknowledgement and the acceptance."""
        self.ev(t, primary, "HAREDIRECT", msg, shadow=shadow, **{"try": n})
        self.ev(t + 0.01, shadow, "HARECEIVE", msg, primary=primary, primary_db=f"{primary}-a", forks=forks)
        self.ev(t + 0.02, primary, "SHADOW_ACK", msg, shadow=shadow)
        return self.ev(t + 0.03, primary, "ACCEPT", msg, redundant=True, acked=True, response="250 2.6.0 Queued")

    def delivered(self, t: float, primary: str, forks: list[str], msg: str = "m1") -> Trace:
        for f in forks:
            if f == "mbx":
                self.ev(t, primary, "DELIVER", msg, fork=f, via="primary")
            else:
                self.ev(t, primary, "SEND", msg, fork=f, next_hop=f.split(":")[-1], via="primary")
        return self.ev(t, primary, "SAFETYNET", msg, role="primary")

    def released(self, t: float, shadow: str, primary: str, forks: list[str], msg: str = "m1") -> Trace:
        self.query(t, shadow, primary, db=f"{primary}-a")
        for f in forks:
            self.ev(t, shadow, "DISCARD_NOTIFY", msg, fork=f, primary=primary)
        self.ev(t, shadow, "HADISCARD", msg, primary=primary)
        return self.ev(t, shadow, "SAFETYNET", msg, role="shadow")


def story(name: str, **sr: Any) -> Trace:
    """The seed's creation sequence and a clean release, EX01 primary in Redmond, EX02 shadow in Dublin."""
    forks = ["mbx", "ext:fabrikam.example"]
    t = Trace(name, **sr).received(0, "EX01", forks).shadowed(0.1, "EX01", "EX02", forks)
    return t.delivered(1, "EX01", forks).released(1.5, "EX02", "EX01", forks)
