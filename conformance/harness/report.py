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
from conformance.harness.core import Failure
from spec.catalogue import catalogue
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


def where_in_seed(req_id: str) -> str:
    cat = catalogue()
    if not req_id or not cat.has(req_id):
        return ""
    return "; ".join(f"{s.seed} \u00a7 {s.section}" for s in cat.get(req_id).sources)


def _args_text(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in args.items())


def steps_text(failure: Failure) -> list[str]:
    lines = []
    for n, step in enumerate(failure.steps, 1):
        calls = "; ".join(f"{c['call']}({_args_text(c.get('args', {}))})" for c in step.calls)
        lines.append(f"  {n:>2}. {step.op}: {calls}")
    return lines


def describe_failure(f: Failure, replay_file: str | Path | None = None) -> str:
    out = [f"FAIL {f.mechanism}: seed {f.setup.get('seed')}, setup {json.dumps(f.setup, sort_keys=True)}"]
    out.append(f"steps ({len(f.steps)}):")
    out.extend(steps_text(f) or ["   (none: the failure happens at set-up or at the end of the run)"])
    if f.violations:
        for v in f.violations[:5]:
            out.append(f"violated: {v.rule} ({v.requirement}) - {v.explanation}")
            seed = where_in_seed(v.requirement)
            if seed:
                out.append(f"  seed: {seed}")
            out.append(f"  events: {', '.join(v.event_ids[:8])}")
        if len(f.violations) > 5:
            out.append(f"  ... and {len(f.violations) - 5} more violations")
    if f.problem:
        out.append(f"problem: {f.problem}")
    if replay_file:
        out.append(f"replay: haconform replay {replay_file}")
    return "\n".join(out)


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
def _tampered(events: list[Event], rng: random.Random, n: int) -> list[list[Event]]:
    """One-event perturbations of a trace: drop, repeat, swap with the next, or alter one attribute."""
    out: list[list[Event]] = []
    idx = [i for i, e in enumerate(events) if e.kind != "TRACE_START"]
    if not idx:
        return out
    values: dict[str, list[Any]] = {}
    for e in events:
        for k, v in e.attrs.items():
            values.setdefault(k, []).append(v)
    for _ in range(n):
        i = rng.choice(idx)
        e = events[i]
        what = rng.randrange(4)
        evs = list(events)
        if what == 0:
            del evs[i]
        elif what == 1:
            evs.insert(i + 1, replace(e, event_id=e.event_id + "+dup"))
        elif what == 2 and i + 1 < len(evs):
            evs[i], evs[i + 1] = evs[i + 1], evs[i]
        elif e.attrs:
            key = rng.choice(sorted(e.attrs))
            v = e.attrs[key]
            if isinstance(v, bool):
                new: Any = not v
            elif isinstance(v, int):
                new = rng.choice([0, v // 2, v * 2 + 1, -1 if v > 0 else 10**9])
            else:
                others = [x for x in values.get(key, []) if x != v]
                new = rng.choice(others) if others else v
            evs[i] = replace(e, attrs={**e.attrs, key: new})
        # renumber so that the core rules (seq order, unique IDs) do not fire on the perturbation itself
        evs = [replace(x, seq=k) for k, x in enumerate(evs)]
        out.append(evs)
    return out


def coverage(mechanism: str, monitor: Any, traces: Sequence[list[Event]], seed: int = 0, per_trace: int = 60) -> dict:
    """Rules that had a chance to fail in this run: a rule counts as exercised when one perturbation of one
    event of a trace the run produced makes it fire (the run reached a state where the rule judges)."""
    table = rule_table(mechanism)
    fired: set[str] = set()
    rng = random.Random(seed)
    for trace in traces:
        for variant in _tampered(trace, rng, per_trace):
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
