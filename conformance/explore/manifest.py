"""The exploration manifest, `spec/explore.toml` (issue 22; the TLA+ Examples' `manifest.json`).

Each `[[bound]]` names a bound (mechanism, servers, messages, faults, the fault kinds, depth) and pins what
exploring it must give: the number of distinct states, the deepest level reached and the result (`clean`,
or `violation` with its rule and depth). `slow = true` bounds are left out of the default test run. A
change to the model that changes a count fails with both numbers (`compare`). Each `[mutants.<mechanism>]`
table names the bound a mechanism's mutants are explored in (`haconform explore --mutants`), per mutant the
depth at which exploration finds it (`found_at`; 0: at the fairness end of the initial state) and the mutants
it does not find within that bound (`not_found`).

Session 15: a bound may be listed before it is pinned (`pinned = false`: a shape projected to reach 10^6 states,
for a run on a quiet machine to pin). Such an entry holds no figures (`states`, `depth_reached`, `result` and
`rule` are refused), and is never judged: `compare` refuses it (`Unpinned`), `explore --check` refuses it before
exploring and `explore --all` leaves it out, saying so. An entry without `states` must say `pinned = false`: a
bound with no count is not judged, never taken as pinned.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conformance.explore.bfs import Result
from conformance.explore.spaces import SPACES, Bound, BoundError
from model.kernel.choice import RANGE_POINTS
from model.kernel.network import NET_DUPLICATE, NET_LATENCY, NET_LOST
from model.sr.choice_points import LABELS as SR_CHOICE_POINTS

SR_LABELS = (*SR_CHOICE_POINTS, NET_LOST, NET_DUPLICATE, NET_LATENCY)  # what an sr bound's `choices` list may name

MANIFEST = Path(__file__).resolve().parents[2] / "spec" / "explore.toml"


class ManifestError(BoundError):
    """An unusable manifest entry: names the file, the entry and the field."""


class Unpinned(ManifestError):
    """A bound the manifest lists without figures (`pinned = false`): nothing to judge an exploration against."""


@dataclass(frozen=True)
class Entry:
    bound: Bound
    states: int | None
    depth: int | None
    result: str
    rule: str
    slow: bool
    max_states: int | None = None
    pinned: bool = True  # False: listed, not yet pinned (no figures: never judged, session 15)


_INT = ("servers", "messages", "faults", "depth")


def bound_of(raw: dict[str, Any], where: str) -> Bound:
    """A bound from a manifest table (or the CLI's options as one)."""
    mech = raw.get("mechanism")
    if mech not in SPACES:
        raise ManifestError(f"{where}: field 'mechanism' must be one of {sorted(SPACES)}, not {mech!r}")
    for key in _INT:
        if not isinstance(raw.get(key), int) or raw[key] < 0:
            raise ManifestError(f"{where}: field {key!r} must be a non-negative integer")
    kinds = raw.get("kinds", [])
    if not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds):
        raise ManifestError(f"{where}: field 'kinds' must be a list of strings")
    waits = raw.get("waits_ms", [])
    if not isinstance(waits, list) or not all(isinstance(w, int) and w > 0 for w in waits):
        raise ManifestError(f"{where}: field 'waits_ms' must be a list of positive integers")
    setup = raw.get("setup", {})
    if not isinstance(setup, dict):
        raise ManifestError(f"{where}: field 'setup' must be a table")
    choices = _choices(raw.get("choices", True), mech, where)
    if raw.get("ranges", "ends") not in RANGE_POINTS:
        raise ManifestError(f"{where}: field 'ranges' must be one of {', '.join(RANGE_POINTS)}")
    if not isinstance(raw.get("construction", True), bool):
        raise ManifestError(f"{where}: field 'construction' must be true or false")
    ends = raw.get("end_choices", 2)
    if not isinstance(ends, int) or isinstance(ends, bool) or ends < 0:
        raise ManifestError(f"{where}: field 'end_choices' must be a non-negative integer")
    return Bound(
        mech,
        str(raw.get("name", "cli")),
        raw["servers"],
        raw["messages"],
        raw["faults"],
        tuple(kinds),
        raw["depth"],
        tuple(waits),
        dict(setup),
        bool(raw.get("symmetry", False)),
        choices,
        raw.get("ranges", "ends"),
        raw.get("construction", True),
        ends,
    )


def _choices(choices: Any, mech: str, where: str) -> bool | tuple[str, ...]:
    """A bound's `choices`: true (choice points on), false (every choice drawn by the seed), or for sr the labels
    branched on (`model/sr/choice_points.py`, `net.*`)."""
    if isinstance(choices, list):
        if mech != "sr" or not all(isinstance(x, str) for x in choices):
            raise ManifestError(f"{where}: field 'choices' must be true or false (sr: or a list of labels)")
        unknown = sorted(set(choices) - set(SR_LABELS))
        if unknown:
            raise ManifestError(f"{where}: field 'choices' names {unknown}, not sr choice points {list(SR_LABELS)}")
        return tuple(choices)
    if not isinstance(choices, bool):
        raise ManifestError(f"{where}: field 'choices' must be true or false (sr: or a list of labels)")
    return choices


def load(path: Path = MANIFEST) -> tuple[list[Entry], dict[str, MutantBound]]:
    """The bounds and, per mechanism, the mutant bound with each mutant's expected depth (0: not found)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: not a readable TOML manifest ({exc})") from exc
    entries = []
    names: set[str] = set()
    for i, raw in enumerate(data.get("bound", [])):
        where = f"{path}: bound[{i}] ({raw.get('name', '?')})"
        b = bound_of(raw, where)
        if b.name in names:
            raise ManifestError(f"{where}: field 'name' repeats an earlier bound")
        names.add(b.name)
        result = raw.get("result", "unchecked")
        if result not in ("clean", "violation", "unchecked"):
            raise ManifestError(f"{where}: field 'result' must be clean, violation or unchecked")
        pinned = _pinned(raw, where)
        entries.append(
            Entry(
                b,
                raw.get("states"),
                raw.get("depth_reached"),
                result,
                raw.get("rule", ""),
                bool(raw.get("slow")),
                raw.get("max_states"),
                pinned,
            )
        )
    mutants = {}
    for mech, raw in data.get("mutants", {}).items():
        where = f"{path}: mutants.{mech}"
        expected = raw.get("found_at", {})
        if not isinstance(expected, dict) or not all(isinstance(v, int) and v >= 0 for v in expected.values()):
            raise ManifestError(f"{where}: field 'found_at' must map mutant names to depths")
        missing = raw.get("not_found", [])
        if not isinstance(missing, list) or set(missing) & set(expected):
            raise ManifestError(f"{where}: field 'not_found' must list mutants not in found_at")
        expected = {**expected, **dict.fromkeys(missing, None)}
        setups = raw.get("setup_of", {})
        if not isinstance(setups, dict) or not all(isinstance(v, dict) for v in setups.values()):
            raise ManifestError(f"{where}: field 'setup_of' must map mutant names to setup tables")
        sizes = {k: v for k, v in raw.items() if k not in ("found_at", "not_found", "setup_of")}
        bound = bound_of({**sizes, "mechanism": mech, "name": f"{mech}-mutants"}, where)
        for name, v in setups.items():
            _check_setup_of(f"{where}.setup_of.{name}", v)
            if "choices" in v:  # checked here, kept as the manifest says it (`MutantBound.for_mutant`)
                _choices(v["choices"], mech, f"{where}.setup_of.{name}")
        mutants[mech] = MutantBound(bound, dict(expected), {k: dict(v) for k, v in setups.items()})
    return entries, mutants


def _pinned(raw: dict[str, Any], where: str) -> bool:
    """A bound's `pinned` (session 15): true (the default) needs its distinct states pinned; false forbids figures."""
    pinned = raw.get("pinned", True)
    if not isinstance(pinned, bool):
        raise ManifestError(f"{where}: field 'pinned' must be true or false")
    if pinned and not isinstance(raw.get("states"), int):
        raise ManifestError(f"{where}: field 'states' must pin the distinct states (or say pinned = false)")
    claimed = [k for k in ("states", "depth_reached", "rule") if k in raw] + (
        ["result"] if raw.get("result", "unchecked") != "unchecked" else []
    )
    if not pinned and claimed:
        raise ManifestError(f"{where}: field {claimed[0]!r} pins a figure of a bound that says pinned = false")
    if not pinned and not raw.get("slow"):
        raise ManifestError(f"{where}: field 'slow' must be true for a bound not yet pinned (it is not run by default)")
    return pinned


def _check_setup_of(where: str, v: dict[str, Any]) -> None:
    """A mutant's own settings: its kinds and waits as a bound's, its sizes non-negative integers."""
    for key in ("kinds", "more_kinds"):
        if key in v and (not isinstance(v[key], list) or not all(isinstance(k, str) for k in v[key])):
            raise ManifestError(f"{where}: field {key!r} must be a list of strings")
    waits = v.get("waits_ms", [])
    if not isinstance(waits, list) or not all(isinstance(w, int) and w > 0 for w in waits):
        raise ManifestError(f"{where}: field 'waits_ms' must be a list of positive integers")
    for key in _INT:
        if key in v and (not isinstance(v[key], int) or v[key] < 0):
            raise ManifestError(f"{where}: field {key!r} must be a non-negative integer")


@dataclass(frozen=True)
class MutantBound:
    """The bound a mechanism's mutants are explored in; a mutant's own setup (`setup_of`: the settings its bug
    needs, as its simulation scenario in `model/<m>/mutants.py` names them, and optionally `waits_ms`, `kinds`
    (instead of the shared bound's), `more_kinds` and the bound's sizes); the depth each is found at (issue 33:
    every mutant of sr, am and pf has one)."""

    bound: Bound
    found_at: dict[str, int | None]  # None: not found within the bound
    setup_of: dict[str, dict[str, Any]]

    def for_mutant(self, name: str) -> Bound:
        """The mutant's bound: its setup over the shared one; a `waits_ms` entry adds fixed waits to its steps, a
        `kinds` entry replaces the shared bound's kinds (a narrow bound for a deep path), `more_kinds` adds some, a
        `choices` entry replaces the shared bound's (session 12: a deep pf path with every network latency branched
        on has too many states; the seed draws them)."""
        extra = dict(self.setup_of.get(name, {}))
        waits = tuple(extra.pop("waits_ms", ()))
        sizes = {k: extra.pop(k) for k in _INT if k in extra}
        if "choices" in extra:
            sizes["choices"] = _choices(extra.pop("choices"), self.bound.mechanism, name)
        kinds = tuple(extra.pop("kinds", self.bound.kinds)) + tuple(extra.pop("more_kinds", ()))
        return self.bound.with_(
            setup={**self.bound.setup, **extra}, waits_ms=self.bound.waits_ms + waits, kinds=kinds, **sizes
        )


def find(name: str, path: Path = MANIFEST) -> Entry:
    entries, _ = load(path)
    for e in entries:
        if e.bound.name == name:
            return e
    raise ManifestError(f"{path}: no bound named {name!r} (known: {', '.join(e.bound.name for e in entries)})")


def compare(entry: Entry, got: Result) -> list[str]:
    """What differs between the manifest's pinned figures and an exploration, each with both numbers. A bound not
    yet pinned has none to differ from: `Unpinned` (not judged, never "as pinned")."""
    if not entry.pinned:
        raise Unpinned(f"bound {entry.bound.name!r} is not pinned (pinned = false): its figures are not judged")
    out = []
    name = entry.bound.name
    if entry.states is not None and got.states != entry.states:
        out.append(f"{name}: distinct states: manifest {entry.states}, explored {got.states}")
    if entry.depth is not None and got.depth != entry.depth:
        out.append(f"{name}: depth: manifest {entry.depth}, explored {got.depth}")
    if entry.result != "unchecked" and got.result != entry.result:
        out.append(f"{name}: result: manifest {entry.result}, explored {got.result}")
    if entry.rule and (got.found is None or got.found.rule != entry.rule):
        out.append(f"{name}: rule: manifest {entry.rule}, explored {got.found.rule if got.found else 'none'}")
    return out
