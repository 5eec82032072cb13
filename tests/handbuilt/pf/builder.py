"""A small hand-writing kit for public folder traces: events are written out attribute by
attribute, as an implementation under test would record them; nothing here calls the model.

Times are minutes after T0 (2026-01-01 00:00 UTC). Each scenario is a list of steps `(minute, node,
entity, kind, attrs)`; `build` numbers them and adds TRACE_START and PF_CONFIG.
"""

from __future__ import annotations

import json
from typing import Any

from traces.schema import Event

T0 = 1_767_225_600_000
MIN = 60_000
Step = tuple[float, str, str, str, dict[str, Any]]
CORE_KINDS = ("TRACE_START", "CRASH", "RESTART", "PARTITION", "HEAL")  # recorded by the kernel (mechanism core)


def build(
    name: str,
    steps: list[Step],
    *,
    servers: tuple[str, ...] = ("A", "B", "C"),
    costs: dict[tuple[str, str], int] | None = None,
    versions: dict[str, int] | None = None,
    params: dict[str, Any] | None = None,
) -> list[Event]:
    costs = costs or {}
    versions = versions or {}
    pairs = [f"{a}>{b}={costs.get((a, b), costs.get((b, a), 0))}" for a in servers for b in servers if a != b]
    head: list[Step] = [
        (0, "sim", name, "TRACE_START", {"seed": 0, "model": "pf", "config": "{}"}),
        (
            0,
            "sim",
            "config",
            "PF_CONFIG",
            {
                "servers": list(servers),
                "costs": pairs,
                "versions": [f"{s}={versions.get(s, 2003)}" for s in servers],
                "preferred": [],
                "params": json.dumps(params or {}, sort_keys=True, separators=(",", ":")),
                "latency_ms": [1000, 60_000],
            },
        ),
    ]
    out = []
    for i, (minute, node, entity, kind, attrs) in enumerate([*head, *steps]):
        mech = "core" if kind in CORE_KINDS else "pf"
        out.append(Event(name, i, f"{name}:{i}", T0 + int(minute * MIN), node, mech, entity, kind, attrs))
    return out


def mount(minute: float, *stores: str) -> list[Step]:
    """Each store mounts its hierarchy replica, then records the hierarchy replica list of all of them."""
    steps: list[Step] = [(minute, s, "1-1", "REPLICA_CREATE", {"origin": f"{s}#0", "new": False}) for s in stores]
    view = [f"{s}=active" for s in sorted(stores)]
    steps += [(minute, s, "1-1", "REPLICA_VIEW", {"replicas": view}) for s in stores]
    return steps


def change(minute: float, node: str, fid: str, cn: str, op: str, target: str = "", detail: str = "") -> Step:
    attrs = {
        "cn": cn,
        "op": op,
        "mid": f"{fid}/{cn}",
        "size_kb": 1,
        "target": target,
        "detail": detail,
        "stamp": T0 + int(minute * MIN),
    }
    return (minute, node, fid, "CHANGE", attrs)


def send(
    minute: float,
    node: str,
    fid: str,
    msg: str,
    code: int,
    to: list[str],
    cnset: list[str],
    cns: list[str] | None = None,
    *,
    reply_to: str = "",
    requires_response: bool = False,
    request: list[str] | None = None,
    reason: str = "broadcast",
) -> Step:
    attrs = {
        "msg": msg,
        "code": code,
        "type": "",
        "recipients": to,
        "cnset": cnset,
        "cns": cns or [],
        "reply_to": reply_to,
        "requires_response": requires_response,
        "request": request or [],
        "reason": reason,
    }
    return (minute, node, fid, "REPL_SEND", attrs)


def recv(minute: float, node: str, fid: str, msg: str) -> Step:
    return (minute, node, fid, "REPL_RECV", {"msg": msg})


def without(steps: list[Step], *drop: tuple[str, str, str]) -> list[Step]:
    """The steps minus those matching (node, kind, msg-or-entity) triples."""

    def hit(s: Step) -> bool:
        key = s[4].get("msg", s[2])
        return any(s[1] == n and s[3] == k and key == m for n, k, m in drop)

    return [s for s in steps if not hit(s)]
