"""What a person acts on: a failure's seed, shrunk steps, rule, requirement and seed section; replay files;
the rule table of a mechanism and the coverage of a run.

Rules are discovered at run time from each mechanism package (`rules.RULES`, `monitor.RULES` or
`properties.PROPERTIES`), so rules added later are listed without a change here. Requirements and their
seed sections come from `spec.catalogue`. Replay files are JSON written atomically.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from conformance.check import verdict
from conformance.harness.failure import Failure, where_in_seed
from traces.schema import Event

REPLAY_FORMAT = "haconform-replay/1"


def rule_table(mechanism: str) -> dict[str, str]:
    """Every monitor rule of a mechanism -> the requirement ID it enforces."""
    for module, attr in (("rules", "RULES"), ("breaches", "RULES"), ("monitor", "RULES"), ("properties", "PROPERTIES")):
        try:
            mod = importlib.import_module(f"model.{mechanism}.{module}")
        except ModuleNotFoundError:
            continue
        table = getattr(mod, attr, None)
        if isinstance(table, dict) and table:
            return {name: str(getattr(v, "requirement", v)) for name, v in table.items()}
    return {}


def failure_json(f: Failure, sut: str | None = None) -> dict[str, Any]:
    return {
        "format": REPLAY_FORMAT,
        "mechanism": f.mechanism,
        "sut": sut,
        "seed": f.setup.get("seed"),
        "setup": f.setup,
        "steps": [s.to_json() for s in f.steps],
        "violations": [{**v.to_json(), "seed_section": where_in_seed(v.requirement)} for v in f.violations],
        "problem": f.problem,
    }


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


class ReplayFileError(ValueError):
    pass


def read_replay(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ReplayFileError(f"{path}: not a readable replay file ({exc})") from exc
    if not isinstance(data, dict) or data.get("format") != REPLAY_FORMAT:
        raise ReplayFileError(f"{path}: field 'format' must be {REPLAY_FORMAT!r}")
    for key, kind in (("mechanism", str), ("setup", dict), ("steps", list)):
        if not isinstance(data.get(key), kind):
            raise ReplayFileError(f"{path}: field {key!r} is missing or not a {kind.__name__}")
    for i, step in enumerate(data["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("op"), str) or not isinstance(step.get("calls"), list):
            raise ReplayFileError(f"{path}: steps[{i}] needs 'op' (string) and 'calls' (list)")
    return data


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


def _tampered(events: list[Event], rng: random.Random, n: int) -> list[list[Event]]:
    """One-event perturbations of a trace: drop, repeat, swap with the next, alter one attribute, or change
    one setting of the recorded configuration (a rule whose verdict hangs on a setting was reached too)."""
    out: list[list[Event]] = []
    idx = [i for i, e in enumerate(events) if e.kind != "TRACE_START"]
    if not idx:
        return out
    values: dict[str, list[Any]] = {}
    for e in events:
        for k, v in e.attrs.items():
            values.setdefault(k, []).append(v)
    starts = [i for i, e in enumerate(events) if e.kind == "TRACE_START"]
    for _ in range(n):
        i = rng.choice(idx)
        e = events[i]
        what = rng.randrange(5)
        evs = list(events)
        if what == 4 and starts:
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
            new = _altered(v, rng, [x for x in values.get(key, []) if x != v])
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


def coverage_text(cov: dict[str, Any]) -> str:
    total = len(cov["rules"])
    lines = [
        f"coverage: {len(cov['exercised'])} of {total} rules exercised over {cov['traces']} traces; "
        f"requirements {', '.join(cov['requirements']) or 'none'}"
    ]
    if cov["not_exercised"]:
        lines.append(f"  not exercised: {', '.join(cov['not_exercised'])}")
    return "\n".join(lines)
