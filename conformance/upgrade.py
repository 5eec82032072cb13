"""`haconform upgrade OLD.jsonl --out NEW.jsonl`: a trace of schema version 1 rewritten as version 2 where the
change is mechanical, or exit 2 naming exactly what is missing and how to produce it (issue 18, a versioned
contract; `traces.schema.OLDER_VERSIONS`, `traces/README.md` Versions).

What version 2 changed, and how each change is made here:
- `schema_version` 1 -> 2 on every row; `seq` renumbered in recording order (inserted events take their place);
  every existing `event_id` kept, inserted events get `<trace>:upgrade-<n>`.
- am: `SERVER_DIAL` is `AM_CONFIG` (renamed); the DAG facts a database's monitor reads (`AM_DAG_CONFIG`) are
  folded from the trace's own DAG_VIEW / PAM_ACQUIRE / PAM_RELEASE / SERVER_HEALTH events with the model's
  transition (`model.am.step.apply`, `dag_attrs`) and recorded after each batch, before the next other am event,
  as the model records them; MOUNTED moves before the COPY_STATE that reports the copy mounted at that instant.
  A DAG database with no DAG event in the trace: not mechanical (the facts are nowhere).
- sr: the topology as `SR_CONFIG` (entity `config`), from TRACE_START `config.sr_topology`; XQUERYDISCARD moves
  before what it caused at its instant on its shadow server (notifications, release, promotion and what follows
  them). No topology anywhere: not mechanical.
- pf: `PF_CONFIG` built from what every store restated in its REPLICA_CREATE of the hierarchy 1-1 (costs from
  that store, versions, preferred backfill servers, parameters); a store without those attributes: not
  mechanical.
Rows already at version 2 are copied unchanged; a trace that already holds a context event keeps it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from model.am import events as am_ev
from model.am.state import empty_world
from model.am.step import apply as am_apply
from model.am.step import dag_attrs
from traces.io import write_jsonl
from traces.rows import check_line
from traces.schema import SCHEMA_VERSION, Event

OLD = 1
PF_RESTATED = ("costs", "versions", "preferred", "params")
CAUSED_BY_QUERY = frozenset(
    {"DISCARD_NOTIFY", "HADISCARD", "PROMOTE", "SAFETYNET", "DELIVER", "DUPLICATEDELIVER", "SEND"}
)


class UpgradeError(Exception):
    """The input cannot be upgraded: each line of `problems` names a file, trace or row and what to do."""

    def __init__(self, problems: Sequence[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


def read_rows(path: Path) -> list[Event]:
    """Every row of a JSON Lines file of version 1 or 2 (one definition of a valid row: `traces.rows`, read as if
    it were the current version); a bad row is an error naming the line and field."""
    out, problems = [], []
    with path.open("rb") as handle:
        for n, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw)
            except ValueError as exc:
                problems.append(f"{path}:{n}: not a JSON object ({exc})")
                continue
            version = row.get("schema_version") if isinstance(row, dict) else None
            if version not in (OLD, SCHEMA_VERSION):
                problems.append(f"{path}:{n}: field schema_version: {version!r}, not {OLD} or {SCHEMA_VERSION}")
                continue
            probe = json.dumps({**row, "schema_version": SCHEMA_VERSION}).encode()
            parsed, problem = check_line(probe, n == 1)
            if problem is not None or parsed is None:
                problems.append(f"{path}:{n}: {problem}")
                continue
            out.append(replace(Event.from_row(parsed), schema_version=version))
    if problems:
        raise UpgradeError(problems)
    return out


def _traces(events: Iterable[Event]) -> dict[str, list[Event]]:
    out: dict[str, list[Event]] = {}
    for e in events:
        out.setdefault(e.trace_id, []).append(e)
    return out


def _config_after_start(trace: list[Event], event: Event) -> list[Event]:
    """`event` placed after TRACE_START (or first)."""
    i = 1 if trace and trace[0].kind == "TRACE_START" else 0
    return [*trace[:i], event, *trace[i:]]


def _start_config(trace: list[Event]) -> dict:
    start = next((e for e in trace if e.kind == "TRACE_START"), None)
    try:
        cfg = json.loads(str(start.attrs.get("config") or "{}")) if start else {}
    except ValueError:
        cfg = {}
    return cfg if isinstance(cfg, dict) else {}


def upgrade_sr(trace: list[Event], problems: list[str]) -> list[Event]:
    if not any(e.mechanism == "sr" for e in trace) or any(e.kind == "SR_CONFIG" for e in trace):
        return _query_first(trace)
    topo = _start_config(trace).get("sr_topology")
    if not topo:
        problems.append(
            f"trace {trace[0].trace_id}: no sr topology (TRACE_START config.sr_topology): add an SR_CONFIG event "
            "(node sim, entity config, attrs topology = JSON object server -> {site, dag, version}) after "
            "TRACE_START, or re-record with haconform simulate/conform"
        )
        return trace
    text = topo if isinstance(topo, str) else json.dumps(topo, sort_keys=True, separators=(",", ":"))
    first = trace[0]
    cfg = Event(first.trace_id, 0, f"{first.trace_id}:upgrade-0", first.ts_ms, "sim", "sr", "config", "SR_CONFIG",
                {"topology": text}, SCHEMA_VERSION)  # fmt: skip
    return _query_first(_config_after_start(trace, cfg))


def _query_first(trace: list[Event]) -> list[Event]:
    """Version 1 recorded XQUERYDISCARD after what it caused at its instant: move it before them."""
    out: list[Event] = []
    for e in trace:
        if e.kind != "XQUERYDISCARD":
            out.append(e)
            continue
        i = len(out)
        while i and out[i - 1].ts_ms == e.ts_ms and out[i - 1].node == e.node and out[i - 1].kind in CAUSED_BY_QUERY:
            i -= 1
        out.insert(i, e)
    return out


def upgrade_pf(trace: list[Event], problems: list[str]) -> list[Event]:
    if not any(e.mechanism == "pf" for e in trace) or any(e.kind == "PF_CONFIG" for e in trace):
        return trace
    mounts = {e.node: e for e in trace if e.kind == "REPLICA_CREATE" and e.entity == "1-1"}
    lacking = sorted(s for s, e in mounts.items() if any(k not in e.attrs for k in PF_RESTATED))
    if not mounts or lacking:
        who = ", ".join(lacking) or "every store (no REPLICA_CREATE of 1-1)"
        problems.append(f"trace {trace[0].trace_id}: no PF_CONFIG and {who} restates no configuration "
                        f"({', '.join(PF_RESTATED)} in REPLICA_CREATE of 1-1): add a PF_CONFIG event (node sim, "
                        "entity config, attrs servers, costs [a>b=cost], versions [server=version], preferred, "
                        "params) after TRACE_START, or re-record with haconform simulate/conform")  # fmt: skip
        return trace
    anyone = next(iter(mounts.values())).attrs
    costs = sorted(f"{s}>{c}" for s, e in mounts.items() for c in e.attrs["costs"])
    attrs = {"servers": sorted(mounts), "costs": costs, "versions": list(anyone["versions"]),
             "preferred": list(anyone["preferred"]), "params": anyone["params"]}  # fmt: skip
    first = trace[0]
    cfg = Event(first.trace_id, 0, f"{first.trace_id}:upgrade-0", first.ts_ms, "sim", "pf", "config", "PF_CONFIG",
                attrs, SCHEMA_VERSION)  # fmt: skip
    return _config_after_start(trace, cfg)


def upgrade_am(trace: list[Event], problems: list[str]) -> list[Event]:
    trace = [replace(e, kind=am_ev.AM_CONFIG) if e.kind == "SERVER_DIAL" else e for e in trace]
    if not any(e.mechanism == "am" for e in trace):
        return trace
    trace = _mounted_first(trace)
    if any(e.kind == am_ev.AM_DAG_CONFIG for e in trace):
        return trace
    if not any(e.kind in am_ev.DAG_STATE_KINDS for e in trace):
        dag_dbs = sorted({e.entity for e in trace if e.kind == am_ev.DB_CREATE and e.attrs.get("dag")})
        if dag_dbs:
            problems.append(f"trace {trace[0].trace_id}: DAG databases {', '.join(dag_dbs)} but no DAG event "
                            "(DAG_VIEW, PAM_ACQUIRE, SERVER_HEALTH) to fold their DAG facts from: add AM_DAG_CONFIG "
                            "events (members, up, groups, claims, health) before the database events they hold for, "
                            "or re-record with haconform simulate/conform")  # fmt: skip
        return trace
    return _with_dag_facts(trace)


def _with_dag_facts(trace: list[Event]) -> list[Event]:
    """AM_DAG_CONFIG after each batch of DAG-state events, before the next other am event (`decide.Tx.emit`)."""
    world, out, changed, dirty, n, last = empty_world(), [], [], False, 0, None
    for e in [*trace, None]:
        ends = e is None or (e.mechanism == "am" and (e.kind == am_ev.DAG_VIEW or e.kind not in am_ev.DAG_KINDS))
        if dirty and ends and last is not None:
            at = e or last
            n += 1
            out.append(Event(last.trace_id, 0, f"{last.trace_id}:upgrade-{n}", at.ts_ms, last.entity, "am",
                             last.entity, am_ev.AM_DAG_CONFIG, dag_attrs(world, changed), SCHEMA_VERSION))  # fmt: skip
            dirty, changed = False, []
        if e is None:
            break
        if e.mechanism == "am" and e.kind in am_ev.DAG_STATE_KINDS:
            world = am_apply(world, e.entity, e.kind, dict(e.attrs))
            dirty, last = True, e
            if e.kind == am_ev.SERVER_HEALTH:
                changed.append((e.attrs["server"], e.attrs["component"]))
        out.append(e)
    return out


def _mounted_first(trace: list[Event]) -> list[Event]:
    """Version 1 recorded the COPY_STATE reporting a mount before the MOUNTED: put MOUNTED first."""
    out: list[Event] = []
    for e in trace:
        i = len(out)
        if e.kind == am_ev.MOUNTED:
            while i and (p := out[i - 1]).kind == am_ev.COPY_STATE and p.ts_ms == e.ts_ms and p.entity == e.entity:
                i -= 1
        out.insert(i, e)
    return out


def upgrade(events: Sequence[Event]) -> tuple[list[Event], dict[str, int]]:
    """The events at version 2 and counts of what changed; UpgradeError lists what is not mechanical."""
    out, problems, counts = [], [], {"traces": 0, "rows": 0, "inserted": 0, "renamed": 0}
    for trace in _traces(events).values():
        if all(e.schema_version == SCHEMA_VERSION for e in trace):
            out.extend(trace)
            continue
        counts["traces"] += 1
        counts["renamed"] += sum(e.kind == "SERVER_DIAL" for e in trace)
        new = upgrade_pf(upgrade_am(upgrade_sr(trace, problems), problems), problems)
        counts["inserted"] += len(new) - len(trace)
        out.extend(replace(e, seq=i, schema_version=SCHEMA_VERSION) for i, e in enumerate(new))
    if problems:
        raise UpgradeError(problems)
    counts["rows"] = len(out)
    return out, counts


def _cmd_upgrade(args: argparse.Namespace) -> int:
    src, dst = Path(args.old), Path(args.out)
    usage = None
    if not src.is_file():
        usage = f"{src}: no such file"
    elif dst.suffix not in (".jsonl", ".ndjson") or src.suffix not in (".jsonl", ".ndjson"):
        usage = "OLD and --out must be JSON Lines files (.jsonl or .ndjson)"
    elif dst.exists() and dst.resolve() == src.resolve():
        usage = "--out must not be the input file"
    if usage:
        print(f"haconform upgrade: {usage}", file=sys.stderr)
        return 2
    try:
        events, counts = upgrade(read_rows(src))
    except UpgradeError as exc:
        for p in exc.problems:
            print(f"haconform upgrade: {src}: not mechanical: {p}", file=sys.stderr)
        return 2
    write_jsonl(dst, events)
    print(f"haconform upgrade: {counts['traces']} trace(s) of {src} upgraded to schema version {SCHEMA_VERSION}: "
          f"{counts['rows']} rows, {counts['inserted']} context event(s) added, {counts['renamed']} SERVER_DIAL "
          f"renamed AM_CONFIG; written to {dst}", file=sys.stderr)  # fmt: skip
    return 0


def register(subparsers: object) -> None:
    p = subparsers.add_parser(  # type: ignore[attr-defined]
        "upgrade",
        help="rewrite a schema-version-1 trace as version 2 where the change is mechanical",
        description="Rewrite a JSON Lines trace of schema version 1 as version 2: schema_version, SERVER_DIAL "
        "renamed AM_CONFIG, the context events (SR_CONFIG from TRACE_START config.sr_topology, PF_CONFIG from "
        "the stores' REPLICA_CREATE of 1-1, AM_DAG_CONFIG folded from the DAG events) and the orders of version 2 "
        "(XQUERYDISCARD before what it causes, MOUNTED before its COPY_STATE). Exit 0 written; 2 when the input "
        "is unusable or the upgrade is not mechanical (each missing piece named with how to produce it); 3 "
        "internal error.",
    )
    p.add_argument("old", metavar="OLD", help="the version-1 trace (.jsonl)")
    p.add_argument("--out", required=True, help="the version-2 trace to write (.jsonl)")
    p.set_defaults(func=_cmd_upgrade)
