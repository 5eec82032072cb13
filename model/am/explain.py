""" "Why this copy?": the BCSS decisions of a recorded trace, recomputed and explained.

Seed 002, "Best copy selection process". For every `BCSS_START` of a trace, the monitor's replay state
at that point is turned into a snapshot and `select()` is asked again; the result lists each copy in the
order BCSS may try it with its health tier and criteria set, the copies left out with the reason, and
what the trace then did. Usage: `python -m model.am.explain TRACE.jsonl [--db DB1]`, or
`python -m model.am.explain request.json` for one snapshot in the JSON form of `codec.py`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from model.am.bcss import select
from model.am.codec import answer
from model.am.decisions import snapshot
from model.am.monitor import Config, Replay
from model.am.state import Trigger
from spec.catalogue import require
from traces.io import read_events
from traces.schema import Event

require("AM-039", "AM-034", "AM-050")


def explain(events: Sequence[Event], db: str | None = None) -> list[str]:
    """One paragraph per BCSS run: trigger, sort, the ordered candidates and the exclusions."""
    cfg = Config.from_events([e for e in events if e.kind == "TRACE_START" or e.kind.endswith("_CONFIG")])
    replay = Replay(cfg.opts, cfg.thresholds_recorded)
    lines: list[str] = []
    for e in events:
        if e.mechanism != "am":
            continue
        if e.kind == "BCSS_START" and (db is None or e.entity == db):
            trigger = replay.pending.get(e.entity, Trigger())
            sel = select(snapshot(replay.w, e.entity, e.attrs["pam"]), trigger, replay.opts)
            lines.append(
                f"{e.event_id} {e.entity}: BCSS by {e.attrs['pam']} ({trigger.kind}"
                f"{' ' + str(trigger.component) if trigger.component else ''}), sort {sel.sort}"
            )
            lines += [f"  {i + 1}. {c.why()}" for i, c in enumerate(sel.order)] or ["  no candidate (AM-050)"]
            lines += [f"  left out: {server}: {why}" for server, why in sel.excluded]
        elif e.kind in ("ACLL_END", "MOUNT_FAIL", "MOUNTED", "BCSS_END") and (db is None or e.entity == db):
            detail = {k: v for k, v in e.attrs.items() if k != "op"}
            lines.append(f"    {e.kind} {detail}")
        replay.step(e)
    return lines


def main(argv: Sequence[str] | None = None) -> int:

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace", help="a trace (.jsonl/.parquet), or a request .json {snapshot, trigger}")
    ap.add_argument("--db", default=None, help="only this database")
    args = ap.parse_args(argv)
    if args.trace.endswith(".json"):
        import json

        with open(args.trace, encoding="utf-8") as fh:
            print(json.dumps(answer(json.load(fh)), indent=2))
        return 0
    print("\n".join(explain(read_events(args.trace).events, args.db)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
