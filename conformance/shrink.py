"""`haconform shrink TRACE --rule RULE [--entity E] --out MIN.jsonl`: the smallest sub-trace that still fails.

An auditor holding a violation in a large recorded trace needs the few events that make it, to hand to an
implementer. Shrinking never invents events: the result is a subset of the recorded events, unchanged (IDs,
seq, timestamps, attributes), so it is a trace `haconform check` reads and the report draws like any other.

How (monitors are folds over one group, `traces/verdict.py`; `conformance.engine.folds.GroupFolds`):
1. the real engine checks the input, read once whole (`conformance.pycheck.check_held`: the engine's one
   read, its events kept), and names the violation to keep: the first of rule RULE (of entity E when
   given), with its trace, whose events come from that read;
2. the trace is cut, smallest first, until the rule still fires on the cut (`CUTS`): the violation's own
   events; its entity's events up to the violation's last event; its mechanism's events up to there;
   every event up to there; the whole trace. The trace's first event and its context events (TRACE_START,
   `*_CONFIG`: what the monitors need in order to judge at all) are always kept;
3. delta debugging (Zeller's ddmin) over the cut's other events, each candidate judged by the monitors of
   the violation's mechanism (`Oracle`), until no single chunk can go. A candidate counts only when it breaks
   the rule and no rule the input trace did not break: dropping an event must not make a new failure (a
   shadow's receipt dropped would be an "unconfirmed shadow" of its own), so the result shows the input's bug;
4. the result is written to a temporary file and checked again by the real engine; only when the same rule
   (and entity, when given) fires on it is it renamed to `--out`. A `--skew` bound is recorded in the first
   event's `check_options` and the re-check uses what the file records, as `check` of it will
   (`conformance.recorded_options`): the one change to a recorded event.

RULE is a rule name (`shadow-before-ack`) or a requirement ID (`SR-031`: every rule enforcing it; the first
violation of any of them is kept, and the output says which of them fired). A name that is neither a rule of
any table (`model/{sr,am,pf,msgtrk}/rules.py` `RULES`, the core rules `CORE_RULES`, the schema rule, the
clock-skew orderings, or a rule the input's violations name) nor a requirement ID of one is "no such rule",
with the closest names (difflib), exit 2; a real rule that does not fire on the input says so and lists the
rules that do.

Exit status: 0 written; 2 unusable input or usage, no such rule, or the rule (entity) does not fire on the
input; 3 internal error, which includes a result the re-check does not confirm (nothing is written then).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from conformance import pycheck
from conformance.check import verdict
from conformance.engine.core_fold import CORE_RULES
from conformance.engine.outcome import SCHEMA_RULE
from conformance.engine.rulesets import IMPORTED_KIND
from conformance.recorded_options import record, recorded_skew
from model.registry import monitor_runs
from traces.io import TraceFileError, discover, write_events
from traces.schema import Event, is_context_kind
from traces.verdict import Monitor

EXIT_WRITTEN, EXIT_UNUSABLE, EXIT_INTERNAL = 0, 2, 3
T = TypeVar("T")
MAX_TESTS = 20_000  # candidates judged by ddmin at most; its result is then valid but maybe not 1-minimal


RULE_TABLES = ("model.sr.rules", "model.am.rules", "model.pf.rules", "model.msgtrk.rules")
CLOSEST = 5  # names suggested for a misspelt rule


class NotFiring(ValueError):
    """The rule (and entity) does not fire on the input: nothing to shrink."""


class NoSuchRule(ValueError):
    """`--rule` names no rule of any table and no requirement ID of one (a misspelling): nothing to shrink."""


def known_rules() -> dict[str, str]:
    """Every rule of every table, name -> requirement ID: the mechanisms' `RULES` (`RULE_TABLES`), the core
    rules (`CORE_RULES`: name -> requirement, or name -> rule object), the schema rule (TR-005), and the
    clock-skew orderings `check --skew` judges (`spec.claims.skew`)."""
    from spec.claims.skew import DEFAULT_ORDERINGS, SR_ORDERINGS

    out: dict[str, str] = {}
    for module in RULE_TABLES:
        for name, row in getattr(importlib.import_module(module), "RULES", {}).items():
            out[name] = _requirement(row)
    for name, row in CORE_RULES.items():
        out[name] = _requirement(row)
    out[SCHEMA_RULE[0]] = SCHEMA_RULE[1]
    for o in (*DEFAULT_ORDERINGS, *SR_ORDERINGS):
        out[o.rule] = o.requirement
    return out


def _requirement(row: Any) -> str:
    return str(getattr(row, "requirement", row))


def resolve_rule(given: str, seen: dict[str, str] | None = None) -> tuple[str, ...]:
    """The rules `--rule GIVEN` means: itself when it is a rule name; every rule enforcing it when it is a
    requirement ID (case-insensitive), in table order. `seen` adds the rules the input's violations name
    (name -> requirement). Raise `NoSuchRule` with the closest names otherwise."""
    rules = {**known_rules(), **(seen or {})}
    if given in rules:
        return (given,)
    by_req = tuple(name for name, req in rules.items() if req.upper() == given.strip().upper())
    if by_req:
        return by_req
    words = [*rules, *dict.fromkeys(rules.values())]
    close = difflib.get_close_matches(given, words, n=CLOSEST, cutoff=0.6)
    if not close:  # a requirement ID typed in lower case or with a wrong digit: compare case-insensitively
        upper = {w.upper(): w for w in words}
        close = [upper[w] for w in difflib.get_close_matches(given.upper(), list(upper), n=CLOSEST, cutoff=0.6)]
    hint = f"; closest: {', '.join(close)}" if close else ""
    raise NoSuchRule(f"no such rule {given!r} (neither a rule name nor a requirement ID of one){hint}")


class RecheckFailed(RuntimeError):
    """The shrunk trace does not violate the rule when checked again by the engine: never written."""


@dataclass(frozen=True)
class Target:
    """What must still fail: a rule, in one trace, of one entity when the user named it."""

    rule: str
    trace_id: str
    entity: str | None
    mechanism: str

    def hit(self, v: dict | object) -> bool:
        get = v.get if isinstance(v, dict) else lambda k: getattr(v, k)
        return (
            get("rule") == self.rule
            and get("trace_id") == self.trace_id
            and (self.entity is None or get("entity") == self.entity)
        )


class Oracle:
    """Whether a candidate (the kept context plus some events, in recording order) still breaks the target: the
    monitors of the violation's mechanism (core rules for a core rule), all of them when those alone do not
    reproduce it on the cut."""

    def __init__(self, target: Target, skew_ms: int | None, allowed: frozenset[str]) -> None:
        self.target, self.allowed = target, allowed
        self.every: list[Monitor] = [m for _, m in monitor_runs(skew_ms)]
        self.monitors = [m for m in self.every if m.mechanism == target.mechanism]  # core rules: always
        self.tests = 0

    def widen(self) -> None:
        self.monitors = self.every

    def __call__(self, events: Sequence[Event]) -> bool:
        self.tests += 1
        found = verdict(events, self.monitors).violations
        return any(self.target.hit(v) for v in found) and all(v.rule in self.allowed for v in found)


def ddmin(items: list[T], fails: Callable[[list[T]], bool], max_tests: int = MAX_TESTS) -> list[T]:
    """Zeller's ddmin: a subset of `items` on which `fails` holds, from which no chunk at the final
    granularity can be removed (1-minimal when it ends by granularity, not by `max_tests`). `fails(items)`
    must hold."""
    if fails([]):
        return []
    n, tests = 2, 0
    while len(items) >= 2 and tests < max_tests:
        size = -(-len(items) // n)
        chunks = [items[i : i + size] for i in range(0, len(items), size)]
        reduced = False
        for chunk in chunks if len(chunks) > 2 else ():  # a chunk alone (with two, it is a complement)
            tests += 1
            if fails(chunk):
                items, n, reduced = chunk, 2, True
                break
        if not reduced:
            for i in range(len(chunks)):
                rest = [e for j, c in enumerate(chunks) if j != i for e in c]
                tests += 1
                if fails(rest):
                    items, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(items):
                break
            n = min(len(items), 2 * n)
    return items


def _find_target(
    trace: str, rule: str, entity: str | None, skew_ms: int | None
) -> tuple[Target, dict, frozenset[str], str, list[Event]]:
    """The real engine's first violation of `rule` (a name, or a requirement ID: any of its rules) of `entity`:
    the target, the violation, the rules its trace breaks, a note naming which rules of a requirement
    fired ('' for a rule name), and the valid events of its trace in recording order (a trace recorded out
    of seq order stays so: TR-001), from the engine's one read."""
    found = discover([trace])
    if not found.files:
        raise TraceFileError(f"{trace}: no trace file ({'; '.join(s['reason'] for s in found.skipped) or 'none'})")
    outcome, held = pycheck.check_held([trace], skew_ms=skew_ms)
    names = resolve_rule(rule, {v["rule"]: v.get("requirement", "") for v in outcome.violations})
    wanted = set(names)
    fired = [v for v in outcome.violations if v["rule"] in wanted and (entity is None or v["entity"] == entity)]
    if not fired:
        rules = sorted({v["rule"] for v in outcome.violations})
        where = f" on entity {entity!r}" if entity else ""
        what = f"rule {rule!r}" if names == (rule,) else f"no rule of {rule} ({', '.join(names)})"
        raise NotFiring(
            f"{what} does not fire{where} on {trace} (rules that do: {', '.join(rules) or 'none'}; "
            f"{outcome.rows_quarantined} row(s) quarantined)"
        )
    v = fired[0]
    note = ""
    if names != (rule,):
        counts = {n: sum(w["rule"] == n for w in fired) for n in names}
        did = ", ".join(f"{n} ({k} violation(s))" for n, k in counts.items() if k)
        did_not = [n for n, k in counts.items() if not k]
        note = f"{rule} is enforced by {len(names)} rule(s); fired: {did}" + (
            f"; did not fire: {', '.join(did_not)}" if did_not else ""
        )
        note += f"; shrinking the first violation, of {v['rule']}"
    broken = frozenset(w["rule"] for w in outcome.violations if w["trace_id"] == v["trace_id"])
    events = [e for e in held if e.trace_id == v["trace_id"]]
    return Target(v["rule"], v["trace_id"], entity, v.get("mechanism", "core")), v, broken, note, events


def kept(events: Sequence[Event]) -> list[int]:
    """What every candidate keeps (positions in recording order): the trace's first event (TR-006/TR-008
    judge by it) and its context events."""
    return [i for i, e in enumerate(events) if i == 0 or is_context_kind(e.kind) or e.kind == IMPORTED_KIND]


def cuts(events: list[Event], v: dict) -> list[tuple[str, list[int]]]:
    """The candidate cuts of the trace, smallest first: each its name and its positions beyond `kept`."""
    ids = set(v["event_ids"])
    keep = set(kept(events))
    involved = [i for i, e in enumerate(events) if e.event_id in ids]
    last = max(involved, default=len(events) - 1)
    rest = [i for i in range(len(events)) if i not in keep]
    upto = [i for i in rest if i <= last]
    mech = v.get("mechanism", "core")
    return [
        ("the violation's events", [i for i in involved if i not in keep]),
        (f"entity {v['entity']!r} up to the violation", [i for i in upto if events[i].entity == v["entity"]]),
        (f"mechanism {mech} up to the violation", [i for i in upto if events[i].mechanism == mech]),
        ("the trace up to the violation", upto),
        ("the whole trace", rest),
    ]


@dataclass
class Shrunk:
    events: list[Event]
    before: int
    cut: str
    cut_events: int
    tests: int
    target: Target
    broken: frozenset[str]  # the rules the input trace breaks: the result breaks no other
    note: str = ""  # for a requirement ID: which of its rules fired


def shrink(
    trace: str,
    rule: str,
    entity: str | None = None,
    *,
    skew_ms: int | None = None,
) -> Shrunk:
    """The smallest sub-trace found that still breaks `rule` (a rule name or a requirement ID; not yet
    re-checked nor written)."""
    target, v, broken, note, events = _find_target(trace, rule, entity, skew_ms)
    base = kept(events)
    oracle = Oracle(target, skew_ms, broken)

    seen: dict[tuple[int, ...], bool] = {}  # ddmin meets the same candidate again: judge it once

    def fails(extra: Sequence[int], context: Sequence[int] = base) -> bool:
        key = tuple(sorted({*context, *extra}))
        if key not in seen:
            seen[key] = oracle([events[i] for i in key])
        return seen[key]

    candidates = cuts(events, v)
    if not fails(candidates[-1][1]):
        oracle.widen()  # the mechanism's monitors alone do not reproduce it: judge with every monitor
    for name, extra in candidates:
        if fails(extra):
            reduced = ddmin(extra, fails)  # looked up here: a test replaces it
            last = max(reduced, default=0)
            early = [i for i in base if i <= last]  # context recorded after the last event kept goes
            context = early if len(early) < len(base) and fails(reduced, early) else base
            out = [events[i] for i in sorted({*context, *reduced})]
            return Shrunk(out, len(events), name, len(base) + len(extra), oracle.tests, target, broken, note)
    raise NotFiring(f"rule {target.rule!r} fires on {trace} only beside other traces' events (TR-002?); not shrunk")


def recheck(path: Path, result: Shrunk, skew_ms: int | None) -> None:
    """The written candidate, checked by the real engine: raise unless the target fires on it and it breaks
    no rule the input did not."""
    recorded = recorded_skew(str(path))  # checked as `check` will check it: with the options it records
    if recorded != skew_ms:
        raise RecheckFailed(f"the shrunk trace records --skew {recorded}, not {skew_ms}; nothing written")
    outcome = pycheck.check_paths([str(path)], skew_ms=recorded)
    rules = sorted({v["rule"] for v in outcome.violations})
    if not any(result.target.hit(v) for v in outcome.violations):
        raise RecheckFailed(
            f"the shrunk trace does not violate {result.target.rule!r} when checked again "
            f"(it violates: {', '.join(rules) or 'nothing'}); nothing written"
        )
    new = [r for r in rules if r not in result.broken]
    if new:
        raise RecheckFailed(f"the shrunk trace breaks rules the input did not ({', '.join(new)}); nothing written")


def write_checked(result: Shrunk, out: Path, skew_ms: int | None) -> None:
    """Write `result` to a temporary file beside `out`, re-check it, then rename it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".shrink-", suffix=out.suffix, dir=out.parent)
    os.close(fd)
    try:
        write_events(tmp, record(result.events, skew_ms))  # --skew recorded: `check` of the file judges alike
        recheck(Path(tmp), result, skew_ms)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _cmd_shrink(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.suffix not in (".jsonl", ".ndjson", ".parquet"):
        print(f"haconform shrink: --out {out}: give a file ending in .jsonl, .ndjson or .parquet", file=sys.stderr)
        return EXIT_UNUSABLE
    began = time.monotonic()
    if args.skew is None:  # a shrunk trace shrunk again: the options it records
        args.skew = recorded_skew(args.trace)
    try:
        result = shrink(args.trace, args.rule, args.entity, skew_ms=args.skew)
    except (NoSuchRule, NotFiring, TraceFileError, OSError) as exc:
        print(f"haconform shrink: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        write_checked(result, out, args.skew)
    except RecheckFailed as exc:
        print(f"haconform shrink: internal error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    t = result.target
    if result.note:
        print(f"haconform shrink: {result.note}", file=sys.stderr)
    print(
        f"haconform shrink: {t.rule} in trace {t.trace_id}" + (f", entity {t.entity}" if t.entity else "") + ": "
        f"{result.before} events -> {len(result.events)} events (cut: {result.cut}, {result.cut_events} events; "
        f"{result.tests} candidates judged; {time.monotonic() - began:.1f} s); re-checked and written to {out}"
        + (f" (recording --skew {args.skew}: haconform check {out} uses it)" if args.skew is not None else ""),
        file=sys.stderr,
    )
    return EXIT_WRITTEN


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "shrink",
        help="reduce a recorded trace to a small sub-trace that still violates a rule",
        description="Reduce a recorded trace to a small sub-trace (recorded events only, unchanged) that "
        "still violates RULE (of entity E when given): cut to the violation's trace, entity and events up to "
        "it, then delta debugging over events, always keeping the context events; the result is checked "
        "again by the engine before it is written. Exit 0 written, 2 unusable input or the rule does not fire "
        "on it, 3 internal error (a result the re-check does not confirm is never written).",
    )
    p.add_argument("trace", help="a trace file (.jsonl, .jsonl.gz, .parquet) or a directory")
    p.add_argument(
        "--rule",
        required=True,
        help="a rule name, as in violations.jsonl (e.g. shadow-before-ack), or a requirement ID (e.g. SR-031: "
        "any of its rules)",
    )
    p.add_argument("--entity", help="only a violation of this entity")
    p.add_argument("--out", required=True, help="the shrunk trace, .jsonl or .parquet")
    p.add_argument("--skew", type=int, metavar="MS", help="as for check: judge cross-server orders, clocks ±MS")
    p.set_defaults(func=_cmd_shrink)
