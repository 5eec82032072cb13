"""What a person acts on: a failure's seed, shrunk steps, rule, requirement and seed section; replay files;
the rule table of a mechanism and the coverage of a run.

Rules are read at run time from each mechanism's table (`model/<m>/rules.py`: `RULES`), so rules added
later are listed without a change here. Requirements and their
seed sections come from `spec.catalogue`. Replay files are JSON written atomically.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from conformance.check import verdict
from conformance.harness.directed import directed
from conformance.harness.failure import Failure, where_in_seed
from conformance.harness.replayfile import REPLAY_FORMAT, ReplayFileError, full_setup, read_replay
from model.pf.state import default_params
from traces.io import write_jsonl
from traces.schema import Event

__all__ = ["REPLAY_FORMAT", "ReplayFileError", "read_replay"]  # the replay file's format: `replayfile.py`


def rule_table(mechanism: str) -> dict[str, str]:
    """Every monitor rule of a mechanism -> the requirement ID it enforces."""
    table = importlib.import_module(f"model.{mechanism}.rules").RULES
    return {name: rule.requirement for name, rule in table.items()}


def failure_json(f: Failure, sut: str | None = None) -> dict[str, Any]:
    """The replay file of a failure (`replayfile.FORMAT_DOC`): the full setup, defaults written out."""
    return {
        "format": REPLAY_FORMAT,
        "mechanism": f.mechanism,
        "sut": sut,
        "seed": f.setup.get("seed"),
        "setup": full_setup(f.mechanism, f.setup),
        "steps": [s.to_json() for s in f.steps],
        "violations": [{**v.to_json(), "seed_section": where_in_seed(v.requirement)} for v in f.violations],
        "problem": f.problem,
    }


def trace_path_for(replay: Path) -> Path:
    """Where `conform` writes a failure's trace by default: beside its replay file (`X.json` -> `X.trace.jsonl`)."""
    return replay.with_name(replay.name.removesuffix(".json") + ".trace.jsonl")


def write_trace(path: Path, events: Sequence[Event]) -> bool:
    """A failing run's events as a trace file (JSON Lines, `traces/README.md`, schema version 2): every event the
    run recorded, the harness's TRACE_START and context (`*_CONFIG`) and the system's set-up events included,
    with their seq numbers, so that `haconform check`, `shrink` and `report` take it as it is (issue 36).
    Written atomically; False (nothing written) when the run recorded no event."""
    if not events:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write_jsonl(tmp, events)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def write_json_atomic(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2, sort_keys=False)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# --- coverage --------------------------------------------------------------------------------------------
def _altered(v: Any, rng: random.Random, others: Sequence[Any]) -> Any:
    if isinstance(v, bool):
        return not v
    if isinstance(v, int):
        return rng.choice([0, v // 2, v * 2 + 1, -1 if v > 0 else 10**9])
    return rng.choice(others) if others else v


def _reconfigured(start: Event, rng: random.Random) -> Event | None:
    """TRACE_START with one boolean or integer setting of its recorded configuration changed (None: none)."""
    try:
        cfg = json.loads(start.attrs.get("config", ""))
    except (TypeError, ValueError):
        return None
    if not isinstance(cfg, dict):
        return None
    leaves = [(None, k) for k, v in cfg.items() if isinstance(v, (bool, int))]
    leaves += [
        (s, k) for s, sec in cfg.items() if isinstance(sec, dict) for k, v in sec.items() if isinstance(v, (bool, int))
    ]
    if not leaves:
        return None
    section, key = rng.choice(sorted(leaves, key=str))
    holder = cfg if section is None else cfg[section]
    holder[key] = _altered(holder[key], rng, ())
    return replace(start, attrs={**start.attrs, "config": json.dumps(cfg, sort_keys=True, separators=(",", ":"))})


def _pf_params() -> dict[str, Any]:
    """Every public folder parameter at its catalogue default (PF_CONFIG records only those changed)."""
    return asdict(default_params())


# Context events whose attribute holds settings as a JSON object, with the defaults of the settings it leaves
# out (None: it records them all): a perturbation changes one of them as it changes one of TRACE_START's (issue
# 36: PF_CONFIG's packing limits and backfill check interval, SR_CONFIG's servers' sites, DAGs and versions).
SETTINGS: dict[tuple[str, str], Callable[[], dict[str, Any]] | None] = {
    ("PF_CONFIG", "params"): _pf_params,
    ("SR_CONFIG", "topology"): None,
}
Path_ = tuple[str, ...]


def _settings(e: Event) -> tuple[str, dict[str, Any], list[Path_]] | None:
    """(attribute, every setting in force, the settings a perturbation can change) of a context event recording
    settings, else None. A setting is a boolean, an integer, or a string that another setting of the same name
    holds another value of (a server's site, DAG or version: changed to another's)."""
    for (kind, attr), defaults in SETTINGS.items():
        if e.kind == kind and isinstance(e.attrs.get(attr), str):
            try:
                own = json.loads(e.attrs[attr] or "{}")
            except ValueError:
                return None
            if isinstance(own, dict):
                full = {**(defaults() if defaults else {}), **own}
                leaves = [path for path, v in _leaves(full) if not isinstance(v, str) or _others(full, path)]
                return (attr, full, leaves) if leaves else None
    return None


def _leaves(cfg: dict[str, Any], at: Path_ = ()) -> list[tuple[Path_, Any]]:
    out: list[tuple[Path_, Any]] = []
    for k in sorted(cfg):
        v = cfg[k]
        if isinstance(v, dict):
            out += _leaves(v, (*at, k))
        elif isinstance(v, (bool, int, str)):
            out.append(((*at, k), v))
    return out


def _others(cfg: dict[str, Any], path: Path_) -> list[str]:
    """The other values the settings named as `path`'s last part hold (sorted)."""
    mine = _get(cfg, path)
    return sorted({v for p, v in _leaves(cfg) if p[-1] == path[-1] and isinstance(v, str) and v != mine})


def _get(cfg: dict[str, Any], path: Path_) -> Any:
    for k in path:
        cfg = cfg[k]
    return cfg


CHANGES = 4  # a setting's changes: to 1, to half, to twice and one, to a thousand times and one (never 0: a
# zero period or limit is no configuration a system runs with, and the pf monitor divides by its periods); a
# string to each other value in turn


def _changed(cfg: dict[str, Any], path: Path_, change: int) -> None:
    holder, key = _get(cfg, path[:-1]), path[-1]
    v = holder[key]
    if isinstance(v, bool):
        holder[key] = not v
    elif isinstance(v, int):
        holder[key] = [1, max(1, v // 2), v * 2 + 1, v * 1000 + 1][change % CHANGES]
    else:
        others = _others(cfg, path)
        holder[key] = others[change % len(others)]


def _resettled(e: Event, rng: random.Random, turn: int | None = None, change: int = 0) -> Event:
    """The context event with one setting changed: drawn (`turn` None), or the `turn`-th setting in order (turning
    with the run's number: `_tampered`'s sweep) given its `change`-th change of `CHANGES` (a much longer interval
    makes any two runs of a schedule too close, a smaller limit any packed message too big)."""
    attr, cfg, leaves = _settings(e) or ("", {}, [])
    if turn is None:
        _changed(cfg, rng.choice(leaves), rng.randrange(CHANGES))
    else:
        _changed(cfg, leaves[turn % len(leaves)], change)
    return replace(e, attrs={**e.attrs, attr: json.dumps(cfg, sort_keys=True, separators=(",", ":"))})


def _variant(e: Event) -> tuple[Any, ...]:
    """An event's variant within its kind, for drawing which event of a kind to perturb: its boolean and word-valued
    attributes (strings without digits: a message's type and reason, an outcome, a change's op, `new`), as
    `log.features` reads them."""
    return tuple(
        (k, v)
        for k, v in sorted(e.attrs.items())
        if isinstance(v, bool) or (isinstance(v, str) and len(v) <= 40 and not any(c.isdigit() for c in v))
    )


def _tampered(events: list[Event], rng: random.Random, n: int, sweep: int | None = None) -> list[list[Event]]:
    """One-event perturbations of a trace: drop, repeat, swap with the next, alter one attribute (to another value
    the same entity's events hold for it), or change one setting of the recorded configuration (a rule whose
    verdict hangs on a setting was reached too: TRACE_START's, or a context event's `SETTINGS`). The event is
    drawn kind first, then its variant (`_variant`), then among the events of that variant, so that the rare events
    rules judge (a BCSS run, a maintenance; a backfill response among the messages, a redirect among the client
    accesses) are perturbed as often as the common ones. `sweep` (a run's number): first one perturbation of
    each kind the trace holds, the kind of perturbation turning with the run's number, so that over the runs
    every kind gets every kind of perturbation; then `n` drawn as above; then one setting of each context
    event's `SETTINGS` changed, the setting and the change turning with the run's number."""
    out: list[list[Event]] = []
    idx = [i for i, e in enumerate(events) if e.kind != "TRACE_START"]
    if not idx:
        return out
    values: dict[tuple[str, str], list[Any]] = {}  # (entity, attribute) -> values seen
    by_kind: dict[str, dict[tuple[Any, ...], list[int]]] = {}
    for i, e in enumerate(events):
        for k, v in e.attrs.items():
            values.setdefault((e.entity, k), []).append(v)
        if e.kind != "TRACE_START":
            by_kind.setdefault(e.kind, {}).setdefault(_variant(e), []).append(i)
    kinds = sorted(by_kind)

    def pick(kind: str) -> int:
        variants = by_kind[kind]
        return rng.choice(variants[rng.choice(sorted(variants, key=repr))])

    starts = [i for i, e in enumerate(events) if e.kind == "TRACE_START"]
    plan = [(pick(k), (sweep + j) % 5) for j, k in enumerate(kinds)] if sweep is not None else []
    for _ in range(n):  # a kind first: rare kinds are perturbed as often as common ones
        plan.append((pick(rng.choice(kinds)), rng.randrange(5)))
    settled = {i for i, e in enumerate(events) if _settings(e) is not None}
    if sweep is not None:  # and one setting of each context event's settings, turning with the run's number
        plan += [(i, 5 + k) for i in sorted(settled) for k in range(CHANGES)]
    for i, what in plan:
        e = events[i]
        evs = list(events)
        if what >= 5:
            evs[i] = _resettled(e, rng, sweep, what - 5)
        elif what == 4 and i in settled:
            evs[i] = _resettled(e, rng)
        elif what == 4 and starts:
            j = rng.choice(starts)
            changed = _reconfigured(events[j], rng)
            if changed is not None:
                evs[j] = changed
        elif what == 0:
            del evs[i]
        elif what == 1:
            evs.insert(i + 1, replace(e, event_id=e.event_id + "+dup"))
        elif what == 2 and i + 1 < len(evs):
            evs[i], evs[i + 1] = evs[i + 1], evs[i]
        elif e.attrs:
            key = rng.choice(sorted(e.attrs))
            v = e.attrs[key]
            others = [x for x in values.get((e.entity, key), []) if x != v]
            if not others:  # nothing else in this entity: any value the trace holds for the attribute
                others = [x for (_, k), xs in values.items() if k == key for x in xs if x != v]
            new = _altered(v, rng, others)
            evs[i] = replace(e, attrs={**e.attrs, key: new})
        # renumber so that the core rules (seq order, unique IDs) do not fire on the perturbation itself
        evs = [replace(x, seq=k) for k, x in enumerate(evs)]
        out.append(evs)
    return out


def coverage(
    mechanism: str,
    monitor: Any,
    traces: Sequence[list[Event]],
    seed: int = 0,
    per_trace: int = 60,
    max_events: int = 60_000,
) -> dict:
    """Rules that had a chance to fail in this run: a rule counts as exercised when one perturbation of one
    event of a trace the run produced makes it fire (the run reached a state where the rule judges).

    Each perturbed trace is judged whole, so the work is the events judged: at most `max_events` (fewer
    perturbations per trace, never under 10, when the traces are long), which keeps the quick profile's
    report within its minute."""
    table = rule_table(mechanism)
    fired: set[str] = set()
    rng = random.Random(seed)
    total = sum(len(t) for t in traces)
    n = min(per_trace, max(10, max_events // total)) if total else per_trace
    for trace in traces:
        for variant in _tampered(trace, rng, n):
            for v in verdict(variant, [monitor]).violations:
                if v.mechanism == mechanism:
                    fired.add(v.rule)
    rules = {r: (r in fired) for r in sorted(table)}
    extra = sorted(fired - set(table))
    reqs = sorted({table[r] for r, hit in rules.items() if hit})
    return {
        "rules": rules,
        "exercised": sorted(r for r, hit in rules.items() if hit) + extra,
        "not_exercised": sorted(r for r, hit in rules.items() if not hit),
        "requirements": reqs,
        "traces": len(traces),
    }


def run_coverage(mechanism: str, monitor: Any, events: list[Event], seed: int, n: int = 8) -> set[str]:
    """The rules one finished run exercised: those that one-event perturbations of its trace make fire (the
    same perturbations as `coverage`, from a generator seeded by the run's number): one of each event kind
    the trace holds (`_tampered`'s sweep), then `n` more, then the mechanism's directed perturbations of rare
    structure (`directed.DIRECTED`, issue 34)."""
    fired: set[str] = set()
    aimed = [[replace(x, seq=k) for k, x in enumerate(evs)] for evs in directed(events, mechanism)]
    for variant in _tampered(events, random.Random(seed), n, sweep=seed) + aimed:
        fired.update(v.rule for v in verdict(variant, [monitor]).violations if v.mechanism == mechanism)
    return fired


def all_runs_coverage(mechanism: str, rule_runs: dict[str, int], runs: int, per_run: int) -> dict[str, Any]:
    """Coverage over every finished run of a search: for each rule, the runs that exercised it."""
    table = rule_table(mechanism)
    counts = {r: rule_runs.get(r, 0) for r in sorted(table)}
    extra = sorted(set(rule_runs) - set(table))
    return {
        "runs": runs,
        "perturbations_per_run": per_run,
        "rule_runs": {**counts, **{r: rule_runs[r] for r in extra}},
        "rules": {r: k > 0 for r, k in counts.items()},
        "exercised": sorted(r for r, k in counts.items() if k) + extra,
        "not_exercised": sorted(r for r, k in counts.items() if not k),
        "requirements": sorted({table[r] for r, k in counts.items() if k}),
    }


def all_runs_text(cov: dict[str, Any]) -> str:
    total = len(cov["rules"])
    lines = [
        f"coverage over all {cov['runs']} finished runs (one perturbation of each event kind and "
        f"{cov['perturbations_per_run']} more per run): "
        f"{len(cov['exercised'])} of {total} rules exercised"
    ]
    width = max((len(r) for r in cov["rule_runs"]), default=0)
    for rule, k in cov["rule_runs"].items():
        lines.append(f"  {rule:<{width}}  {k:>5} run(s)" + ("" if k else "  NOT EXERCISED"))
    return "\n".join(lines)


def coverage_text(cov: dict[str, Any]) -> str:
    total = len(cov["rules"])
    lines = [
        f"coverage: {len(cov['exercised'])} of {total} rules exercised over {cov['traces']} traces; "
        f"requirements {', '.join(cov['requirements']) or 'none'}"
    ]
    if cov["not_exercised"]:
        lines.append(f"  not exercised: {', '.join(cov['not_exercised'])}")
    return "\n".join(lines)
