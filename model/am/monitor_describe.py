"""What an Active Manager fold knows now, for the report (`conformance.audit`): `AmFold.describe`.

Seed 002, "Active Manager" (the DAG view, the PAM claim) and "Best copy and server selection" (each copy's
status). Read only: it never changes the fold.
"""

from __future__ import annotations

from typing import Any


def describe(fold: Any, entity: str | None = None) -> dict[str, Any]:
    """A compact, JSON-able summary of the replay's state now, for the report (`conformance.audit`): the
    DAG view and the PAM claim (seed 002, "Active Manager"), and for `entity` (a database) its active copy,
    mounted copies and each copy's status (AM-009, BCSS). Read only."""
    r, w = fold.replay, fold.replay.w
    out: dict[str, Any] = {
        "DAG": w.dag or "-",
        "members up": sorted(w.up),
        "PAM claimed by": sorted(w.claims),
        "judging": "stopped: " + fold.stopped if fold.stopped else ("on" if fold.live else "off"),
        "violations so far": len(r.out),
    }
    db = w.dbs.get(entity) if entity is not None else None
    if db is not None:
        out[f"database {db.name}"] = {
            "active copy": db.active or "-",
            "mounted on": sorted(db.on),
            "mount requested on": db.mounting or "-",
            "last log generation": db.lgen,
            "copies": {
                c.server: f"{c.status}, last log inspected {c.lli}, replay queue {c.replay_queue}"
                + (", blocked" if c.blocked else "")
                + (", suspended" if c.suspended else "")
                for c in sorted(db.copies.values(), key=lambda c: c.server)
            },
        }
    elif entity is not None:
        out[entity] = "no database of that name in the replay yet"
    return out
