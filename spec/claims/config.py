"""Configuration check: a deployment's settings against every constraint the seeds state between them.

The file (TOML or JSON) maps catalogue parameter names to values; a parameter left out takes its
catalogue default. Durations are numbers in the parameter's own unit (`ShadowHeartbeatFrequency = 2`
means 2 minutes), or strings with a unit (`"90s"`, `"10min"`, `"3h"`, `"2d"`, `"500ms"`) or an Exchange
time span (`"00:02:00"`, `"2.00:00:00"`). Unknown keys and ill-typed values raise `ConfigError` (exit
status 2). The values are asserted in z3 and every constraint is tracked by name, so an unsat core names
the broken constraints; cores are removed and the check repeated until the rest is satisfiable, so every
broken constraint is reported, in plain words with the values involved.

Constraints marked "stated" are sentences of the seeds (SMTP timeouts: "must be smaller than";
Backfill Array: later attempts "wait longer"); "derived" ones follow from the proved claims in
spec/claims (a configuration that breaks them breaks a claim).
"""

from __future__ import annotations

import itertools
import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import z3

from spec.catalogue import DURATION_MS, Parameter, catalogue, require
from traces.textfile import TextInputError, read_text


class ConfigError(ValueError):
    """Unknown keys or ill-typed values; the message lists every problem found."""


V = dict[str, Any]  # parameter name -> z3 term


@dataclass(frozen=True)
class Constraint:
    name: str
    basis: str  # "stated" (a seed sentence) or "derived" (follows from a proved claim)
    requirements: tuple[str, ...]
    words: str  # plain words; {Name} is replaced by that parameter's value
    formula: Callable[[V], z3.BoolRef]
    severity: str = "error"  # "warning": reported, never fails the check


def _lt(a: str, b: str) -> Callable[[V], z3.BoolRef]:
    return lambda v: v[a] < v[b]


def _chain(*names: str) -> Callable[[V], z3.BoolRef]:
    return lambda v: z3.And(*(v[a] < v[b] for a, b in itertools.pairwise(names)))


def _receive(role: str) -> Constraint:
    i, t = f"ReceiveConnectionInactivityTimeout{role}", f"ReceiveConnectionTimeout{role}"
    ids = ("SR-049", catalogue().param_requirement(i).id, catalogue().param_requirement(t).id)
    return Constraint(
        f"sr.receive_connector_timeouts.{role.lower()}",
        "stated",
        ids,
        f"ConnectionInactivityTimeout of the {role} receive connector ({{{i}}}) must be smaller "
        f"than its ConnectionTimeout ({{{t}}}).",
        _lt(i, t),
    )


def _backfill(side: str) -> Constraint:
    names = [f"Backfill{r}{side}" for r in ("Initial", "FirstRetry", "LaterRetry")]
    return Constraint(
        f"bf.timeout_ladder.{side.lower()}",
        "stated",
        ("BF-005", *(catalogue().param_requirement(n).id for n in names)),
        f"Backfill time-outs ({side.lower()} routing group) must grow: initial ({{{names[0]}}}) < "
        f"first retry ({{{names[1]}}}) < later retries ({{{names[2]}}}).",
        _chain(*names),
    )


CONSTRAINTS: tuple[Constraint, ...] = (
    _receive("Mailbox"),
    _receive("FrontEnd"),
    _receive("Edge"),
    _backfill("Local"),
    _backfill("Remote"),
    Constraint(
        "sr.heartbeat_below_resubmit",
        "derived",
        ("SR-P13", "SR-P14"),
        "ShadowHeartbeatFrequency ({ShadowHeartbeatFrequency}) must be smaller than ShadowResubmitTimeSpan "
        "({ShadowResubmitTimeSpan}), or a shadow server gives up on a primary before asking it once.",
        _lt("ShadowHeartbeatFrequency", "ShadowResubmitTimeSpan"),
    ),
    Constraint(
        "sr.discard_events_outlive_decision",
        "derived",
        ("SR-P15",),
        "ShadowResubmitTimeSpan ({ShadowResubmitTimeSpan}) + ShadowHeartbeatFrequency "
        "({ShadowHeartbeatFrequency}) + the Mailbox ConnectionTimeout ({ReceiveConnectionTimeoutMailbox}) "
        "must be smaller than ShadowMessageAutoDiscardInterval ({ShadowMessageAutoDiscardInterval}), or "
        "discard events are deleted before a silent shadow server decides (claim "
        "sr.discard_events_outlive_decision).",
        lambda v: (
            v["ShadowResubmitTimeSpan"] + v["ShadowHeartbeatFrequency"] + v["ReceiveConnectionTimeoutMailbox"]
            < v["ShadowMessageAutoDiscardInterval"]
        ),
    ),
    Constraint(
        "sr.promote_before_safety_net_expiry",
        "derived",
        ("SR-P16", "SR-P17"),
        "ShadowResubmitTimeSpan ({ShadowResubmitTimeSpan}) + ShadowHeartbeatFrequency "
        "({ShadowHeartbeatFrequency}) + the Mailbox ConnectionTimeout ({ReceiveConnectionTimeoutMailbox}) "
        "must be smaller than SafetyNetHoldTime ({SafetyNetHoldTime}), or an unacknowledged shadow can "
        "expire before it is promoted (claim sr.promote_before_safety_net_expiry).",
        lambda v: (
            v["ShadowResubmitTimeSpan"] + v["ShadowHeartbeatFrequency"] + v["ReceiveConnectionTimeoutMailbox"]
            < v["SafetyNetHoldTime"]
        ),
    ),
    Constraint(
        "bf.check_period_below_timeouts",
        "derived",
        ("PF-P07", "BF-P07"),
        "ReplicationTimeout ({ReplicationTimeout}), the period of backfill-array checks, must not exceed "
        "the shortest backfill delay, BackfillNewReplicaDelay ({BackfillNewReplicaDelay}).",
        lambda v: v["ReplicationTimeout"] <= v["BackfillNewReplicaDelay"],
    ),
    Constraint(
        "bf.new_replica_delay_below_initial",
        "derived",
        ("BF-P07", "BF-P01"),
        "BackfillNewReplicaDelay ({BackfillNewReplicaDelay}) should not exceed BackfillInitialLocal "
        "({BackfillInitialLocal}).",
        lambda v: v["BackfillNewReplicaDelay"] <= v["BackfillInitialLocal"],
        "warning",
    ),
    Constraint(
        "bf.remote_not_shorter_than_local",
        "derived",
        ("BF-P01", "BF-P02"),
        "Remote-routing-group backfill time-outs (Long) should not be shorter than the local ones (Short): "
        "{BackfillInitialRemote} vs {BackfillInitialLocal}, {BackfillFirstRetryRemote} vs "
        "{BackfillFirstRetryLocal}, {BackfillLaterRetryRemote} vs {BackfillLaterRetryLocal}.",
        lambda v: z3.And(
            *(v[f"Backfill{r}Local"] <= v[f"Backfill{r}Remote"] for r in ("Initial", "FirstRetry", "LaterRetry"))
        ),
        "warning",
    ),
    Constraint(
        "pf.status_thread_offset_within_period",
        "derived",
        ("PF-P05", "PF-P06"),
        "ReplicationStatusThreadOffset ({ReplicationStatusThreadOffset}) must be smaller than "
        "ReplicationStatusThreadPeriod ({ReplicationStatusThreadPeriod}).",
        _lt("ReplicationStatusThreadOffset", "ReplicationStatusThreadPeriod"),
    ),
    Constraint(
        "am.dial_thresholds_ordered",
        "derived",
        ("AM-P02", "AM-P03", "AM-P04"),
        "Dial thresholds must be ordered: Lossless ({DialLosslessMaxLogs}) <= GoodAvailability "
        "({DialGoodAvailabilityMaxLogs}) <= BestAvailability ({DialBestAvailabilityMaxLogs}).",
        lambda v: z3.And(
            v["DialLosslessMaxLogs"] <= v["DialGoodAvailabilityMaxLogs"],
            v["DialGoodAvailabilityMaxLogs"] <= v["DialBestAvailabilityMaxLogs"],
        ),
    ),
    Constraint(
        "sr.reject_needs_shadow_redundancy",
        "stated",
        ("SR-P02",),
        "RejectMessageOnShadowFailure ({RejectMessageOnShadowFailure}) only has an effect when "
        "ShadowRedundancyEnabled ({ShadowRedundancyEnabled}) is true.",
        lambda v: z3.Implies(v["RejectMessageOnShadowFailure"], v["ShadowRedundancyEnabled"]),
        "warning",
    ),
    Constraint(
        "sr.shadow_attempts_possible",
        "derived",
        ("SR-P03", "SR-P04", "SR-P05", "SR-P18"),
        "With ShadowMessagePreference {ShadowMessagePreference} at least one shadow attempt must be allowed "
        "(MaxRetriesForRemoteSiteShadow {MaxRetriesForRemoteSiteShadow}, MaxRetriesForLocalSiteShadow "
        "{MaxRetriesForLocalSiteShadow}, counted as {ShadowRetryCountMeaning}).",
        lambda v: z3.Or(
            v["ShadowRetryCountMeaning"] == 1,  # 'retries': a first try is always made
            z3.And(
                z3.Implies(v["ShadowMessagePreference"] == 1, v["MaxRetriesForRemoteSiteShadow"] >= 1),
                z3.Implies(v["ShadowMessagePreference"] == 2, v["MaxRetriesForLocalSiteShadow"] >= 1),
                z3.Implies(
                    v["ShadowMessagePreference"] == 0,
                    v["MaxRetriesForRemoteSiteShadow"] + v["MaxRetriesForLocalSiteShadow"] >= 1,
                ),
            ),
        ),
        "warning",
    ),
)
require(*{r for c in CONSTRAINTS for r in c.requirements})
assert catalogue().param("ShadowMessagePreference").values == ("PreferRemote", "RemoteOnly", "LocalOnly")
assert catalogue().param("ShadowRetryCountMeaning").values == ("attempts", "retries")

_UNIT_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|min|h|d)\s*$")
_SPAN_RE = re.compile(r"^\s*(?:(\d+)\.)?(\d{1,2}):(\d{2}):(\d{2})\s*$")


def _duration(p: Parameter, raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise TypeError(f"expected a number of {p.unit} or a string such as '10min', got {raw!r}")
    if not isinstance(raw, str):
        return p.to_ms(raw)
    if m := _UNIT_RE.match(raw):
        return round(float(m[1]) * DURATION_MS[m[2]])
    if m := _SPAN_RE.match(raw):
        days, h, mi, s = (int(x or 0) for x in m.groups())
        return ((days * 24 + h) * 60 + mi) * 60_000 + s * 1_000
    raise TypeError(f"cannot read {raw!r} as a duration (use e.g. '90s', '10min', '3h', '2d' or 'd.hh:mm:ss')")


def _value(p: Parameter, raw: Any) -> int | bool:
    """The value in z3 units: milliseconds, a count, a bool, or the index of an enum value."""
    if p.is_duration:
        return _duration(p, raw)
    if p.unit == "bool":
        if not isinstance(raw, bool):
            raise TypeError(f"expected true or false, got {raw!r}")
        return raw
    if p.unit == "enum":
        if raw not in p.values:
            raise TypeError(f"expected one of {list(p.values)}, got {raw!r}")
        return p.values.index(raw)
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise TypeError(f"expected a whole number of {p.unit}, got {raw!r}")
    return raw


def _flatten(doc: dict[str, Any]) -> dict[str, Any]:
    """Allow one level of tables (e.g. `[sr]`) to group parameters."""
    out: dict[str, Any] = {}
    for k, v in doc.items():
        out.update(_flatten(v) if isinstance(v, dict) else {k: v})
    return out


def load_config(path: str | Path) -> dict[str, Any]:
    try:  # UTF-8 with or without a byte-order mark, UTF-16 with one (Notepad, PowerShell): traces.textfile
        text = read_text(Path(path))
    except TextInputError as exc:
        raise ConfigError(str(exc)) from None
    try:
        doc = json.loads(text) if str(path).endswith(".json") else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: not valid {'JSON' if str(path).endswith('.json') else 'TOML'}: {exc}") from exc
    if not isinstance(doc, dict):
        raise ConfigError(f"{path}: expected a table of parameter names to values")
    return _flatten(doc)


@dataclass(frozen=True)
class ConfigReport:
    violated: tuple[tuple[Constraint, str], ...]  # (constraint, its words with the values filled in)
    warnings: tuple[tuple[Constraint, str], ...]
    given: tuple[str, ...]
    checked: int

    @property
    def valid(self) -> bool:
        return not self.violated


def _values(settings: dict[str, Any]) -> tuple[dict[str, int | bool], dict[str, Parameter]]:
    params = {p.name: p for p in catalogue().parameters() if p.unit != "list"}
    lists = {p.name for p in catalogue().parameters() if p.unit == "list"}
    problems = [
        f"unknown parameter {k!r} (not in the catalogue)" for k in settings if k not in params and k not in lists
    ]
    for k in lists & set(settings):
        if not (isinstance(settings[k], list) and all(isinstance(x, str) for x in settings[k])):
            problems.append(f"{k}: expected a list of names, got {settings[k]!r}")
    values: dict[str, int | bool] = {}
    for name, p in params.items():
        try:
            values[name] = _value(p, settings.get(name, p.default))
        except TypeError as exc:
            problems.append(f"{name}: {exc}")
    if problems:
        raise ConfigError("; ".join(problems))
    return values, params


def _show(p: Parameter, value: int | bool) -> str:
    if p.is_duration:
        amount = value / DURATION_MS[p.unit]
        return f"{amount:g} {p.unit}"
    if p.unit == "enum":
        return p.values[int(value)]
    return str(value).lower() if isinstance(value, bool) else f"{value} {p.unit}"


def _range_constraint(p: Parameter) -> Constraint:
    lo, hi = p.range  # type: ignore[misc]
    conv = p.to_ms if p.is_duration else int
    name, low, high = p.name, conv(lo), conv(hi)
    return Constraint(
        f"range.{p.name}",
        "stated",
        (catalogue().param_requirement(p.name).id,),
        f"{p.name} ({{{p.name}}}) must lie within [{lo}, {hi}] {p.unit}.",
        lambda v: z3.And(v[name] >= low, v[name] <= high),
    )


def check_config(settings: dict[str, Any]) -> ConfigReport:
    """Check `settings` (parameter name -> raw value) against every constraint; see the module docstring."""
    values, params = _values(settings)
    terms: V = {n: (z3.Bool(n) if isinstance(v, bool) else z3.Int(n)) for n, v in values.items()}
    words = {n: _show(params[n], v) for n, v in values.items()}
    errors = [c for c in CONSTRAINTS if c.severity == "error"]
    errors += [_range_constraint(p) for p in params.values() if p.range is not None and p.unit not in ("bool", "enum")]
    remaining = {c.name: c for c in errors}
    violated: list[Constraint] = []
    while remaining:
        s = z3.Solver()
        s.add(*(terms[n] == v for n, v in values.items()))
        for c in remaining.values():
            s.assert_and_track(c.formula(terms), z3.Bool(c.name))
        if s.check() == z3.sat:
            break
        core = [remaining.pop(str(lab)) for lab in s.unsat_core()]
        violated += core
    model = z3.Solver()
    model.add(*(terms[n] == v for n, v in values.items()))
    model.check()
    m = model.model()
    warned = [c for c in CONSTRAINTS if c.severity == "warning" and z3.is_false(m.eval(c.formula(terms), True))]
    fill = lambda c: c.words.format(**words)  # noqa: E731
    return ConfigReport(
        tuple((c, fill(c)) for c in violated),
        tuple((c, fill(c)) for c in warned),
        tuple(sorted(settings)),
        len(errors),
    )
