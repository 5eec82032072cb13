"""JSON form of BCSS inputs and outputs, so that any implementation (any language) can be compared with
`select()` decision by decision (seed 002, "Best copy selection process"; requirements AM-033..AM-050).

A snapshot is `{"database", "source", "last_log_generated", "copies": [{server, status, lli, replay_queue,
content_index, preference, blocked, suspended, reachable}], "dials": {server: dial},
"health": {server: {component: [priority, state]}}}`; a trigger is `{"kind", "component", "lossless"}`.
"""

from __future__ import annotations

from typing import Any

from model.am.bcss import Options, Selection, select
from model.am.state import CopyState, Health, Snapshot, Trigger
from spec.catalogue import require

require("AM-033", "AM-039", "AM-050")


def snapshot_to_json(snap: Snapshot) -> dict[str, Any]:
    return {
        "database": snap.database,
        "source": snap.source,
        "last_log_generated": snap.last_log_generated,
        "copies": [dict(zip(c.__fields__, c._values(), strict=True)) for c in snap.copies],
        "dials": dict(snap.dials),
        "health": {s: {c: list(v) for c, v in h.components.items()} for s, h in snap.health.items()},
    }


def snapshot_from_json(doc: dict[str, Any]) -> Snapshot:
    copies = tuple(CopyState(**c) for c in doc["copies"])
    health = {s: Health({c: (v[0], v[1]) for c, v in comps.items()}) for s, comps in doc.get("health", {}).items()}
    return Snapshot(
        doc["database"], doc["source"], int(doc["last_log_generated"]), copies, dict(doc.get("dials", {})), health
    )


def trigger_to_json(t: Trigger) -> dict[str, Any]:
    return {"kind": t.kind, "component": t.component, "lossless": t.lossless}


def trigger_from_json(doc: dict[str, Any] | None) -> Trigger:
    doc = doc or {}
    return Trigger(doc.get("kind", "failure"), doc.get("component"), bool(doc.get("lossless", False)))


def selection_to_json(sel: Selection) -> dict[str, Any]:
    return {
        "sort": sel.sort,
        "order": [
            {"server": c.server, "tier": c.tier, "criteria_set": c.criteria_set, "why": c.why()} for c in sel.order
        ],
        "excluded": [{"server": s, "reason": r} for s, r in sel.excluded],
    }


def answer(request: dict[str, Any], opts: Options | None = None) -> dict[str, Any]:
    """One request `{"snapshot": ..., "trigger": ...}` -> the reference selection as JSON."""
    snap = snapshot_from_json(request["snapshot"])
    return selection_to_json(select(snap, trigger_from_json(request.get("trigger")), opts))


class ProcessSelector:
    """A `BestCopySelector` answered by another process speaking newline-delimited JSON on stdin/stdout:
    one request line `{"snapshot": ..., "trigger": ...}` in, one line `{"order": [{"server": ...}, ...]}`
    out. `python -m model.am.codec` is the reference such process."""

    def __init__(self, argv: list[str], cwd: str | None = None) -> None:
        import subprocess

        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=cwd)

    def select(self, snapshot: Snapshot, trigger: Trigger) -> list[str]:
        import json

        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"snapshot": snapshot_to_json(snapshot), "trigger": trigger_to_json(trigger)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        return [c["server"] if isinstance(c, dict) else c for c in reply["order"]]

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=10)


def main() -> int:
    """Serve `answer` over stdin/stdout, one JSON request per line."""
    import json
    import sys

    for line in sys.stdin:
        if line.strip():
            sys.stdout.write(json.dumps(answer(json.loads(line))) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
