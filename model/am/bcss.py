"""Best copy and server selection (BCSS) as pure functions: candidates, sort, tiers, criteria, dial, ACLL.

Seed 002, sections "Best Copy Selection" and "Best copy selection process". `select` returns the ordered
list of copies BCSS would try, each with the criteria set and health tier that admitted it, so that an
auditor can ask "why this copy?". `BcssRun` steps through that list (ACLL, dial comparison, mount, fall
through); the simulator and the monitor both drive it. Interpretations: AM-I01 (tier-major by default),
AM-I02, AM-I03, AM-I04, AM-I05, AM-I06, AM-I07, AM-I08, AM-I11, AM-I12.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from model.am import rules as R
from model.am.state import (
    ACCEPTABLE_STATUSES,
    C_HEALTHY,
    CI_CRAWLING,
    CI_HEALTHY,
    LOSSLESS,
    PRIORITY_RANK,
    CopyState,
    Health,
    Snapshot,
    Trigger,
)
from model.kernel.records import Value, compiled, fill
from spec.catalogue import param_default, require
from traces.verdict import InputFault, Rule

require(
    "AM-020",
    "AM-024",
    "AM-025",
    "AM-027",
    "AM-028",
    "AM-029",
    "AM-030",
    "AM-031",
    "AM-032",
    "AM-033",
    "AM-034",
    "AM-035",
    "AM-036",
    "AM-037",
    "AM-038",
    "AM-039",
    "AM-040",
    "AM-041",
    "AM-042",
    "AM-043",
    "AM-044",
    "AM-045",
    "AM-046",
    "AM-047",
    "AM-048",
    "AM-049",
    "AM-050",
    "AM-051",
)

# Criteria set n -> (content index required or None, copy queue bound?, replay queue bound?, requirement).
CRITERIA: dict[int, tuple[str | None, bool, bool, str]] = {
    1: (CI_HEALTHY, True, True, "AM-040"),
    2: (CI_CRAWLING, True, True, "AM-041"),
    3: (CI_HEALTHY, False, True, "AM-042"),
    4: (CI_CRAWLING, False, True, "AM-043"),
    5: (None, False, True, "AM-044"),
    6: (CI_HEALTHY, True, False, "AM-045"),
    7: (CI_CRAWLING, True, False, "AM-046"),
    8: (CI_HEALTHY, False, False, "AM-047"),
    9: (CI_CRAWLING, False, False, "AM-048"),
    10: (None, False, False, "AM-049"),
}
TIERS: dict[int, tuple[str, str]] = {
    1: ("All Healthy", "AM-028"),
    2: ("Up to Normal Healthy", "AM-029"),
    3: ("All Better than Source", "AM-030"),
    4: ("Same as Source", "AM-031"),
}
BELOW_SOURCE_TIER = 5  # only with BcssBelowSourceFallback (AM-I04)


@dataclass(frozen=True, slots=True)
class Options:
    """Every knob BCSS reads, defaulting to the catalogue (never restated here)."""

    order: str = field(default_factory=lambda: param_default("BcssTierCriteriaOrder"))
    up_to_normal: str = field(default_factory=lambda: param_default("UpToNormalScope"))
    require_status: bool = field(default_factory=lambda: param_default("CriteriaRequireStatus"))
    dial_scope: str = field(default_factory=lambda: param_default("DialScope"))
    responder: str = field(default_factory=lambda: param_default("ResponderConstraint"))
    below_source: bool = field(default_factory=lambda: param_default("BcssBelowSourceFallback"))
    cq_below: int = field(default_factory=lambda: param_default("CriteriaCopyQueueLengthBelow"))
    rq_below: int = field(default_factory=lambda: param_default("CriteriaReplayQueueLengthBelow"))
    thresholds: tuple[tuple[str, int], ...] = field(
        default_factory=lambda: (
            ("Lossless", param_default("DialLosslessMaxLogs")),
            ("GoodAvailability", param_default("DialGoodAvailabilityMaxLogs")),
            ("BestAvailability", param_default("DialBestAvailabilityMaxLogs")),
        )
    )

    def threshold(self, dial: str) -> int:
        """The recorded threshold of a dial value; a value the recorded thresholds do not name is an input fault
        of the trace (a foreign AM_CONFIG dial or a threshold list without it: `model.am.faults`)."""
        n = dict(self.thresholds).get(dial)
        if n is not None:
            return n
        raise InputFault(f"dial {dial!r} has no threshold in the recorded configuration (AM-P02..AM-P04)")

    def with_(self, **changes: Any) -> Options:
        return replace(self, **changes)


def _probe() -> None:
    """Says which path this module runs: its type is Cython's when compiled."""


_COMPILED = compiled(_probe)


# `Choice` and `Selection` are plain classes, not dataclasses (issue 32, session 15): one `select` per BCSS run
# makes one per copy; the compiled build declares them `cdef class`es in `bcss.pxd` on the bases of
# `model.kernel.records` (a frozen dataclass's methods; see there).
class Choice(Value):
    """One entry of the ordered list: the copy, and why it is where it is. `key`: (tier, set) in the configured
    order, then the seed's sort keys (no server)."""

    __fields__ = ("server", "criteria_set", "tier", "copy_queue", "replay_queue", "preference", "key")
    __slots__ = __fields__

    def __init__(
        self,
        server: str,
        criteria_set: int,
        tier: int,
        copy_queue: int,
        replay_queue: int,
        preference: int,
        key: tuple[int, ...] = (),
    ) -> None:
        if _COMPILED:
            self.server, self.criteria_set, self.tier, self.copy_queue, self.replay_queue, self.preference, self.key = (
                server, criteria_set, tier, copy_queue, replay_queue, preference, key)  # fmt: skip
        else:
            fill(self, (server, criteria_set, tier, copy_queue, replay_queue, preference, key))

    def _values(self) -> tuple:
        return (self.server, self.criteria_set, self.tier, self.copy_queue, self.replay_queue, self.preference,
                self.key)  # fmt: skip

    def why(self) -> str:
        tier = TIERS.get(self.tier, ("below source (fallback)", "AM-027"))[0]
        return (
            f"{self.server}: tier {self.tier} ({tier}), criteria set {self.criteria_set} "
            f"({CRITERIA[self.criteria_set][3]}), copy queue {self.copy_queue}, "
            f"replay queue {self.replay_queue}, preference {self.preference}"
        )


class Selection(Value):
    """BCSS's ordered list (`order`), the copies excluded with why, `(server, reason)` (AM-034 and the responder
    constraint), the sort used (`sort`: "CopyQueue", AM-035, or "ActivationPreference", AM-036, AM-037) and the
    sort statement that applies (`sort_rule`, as the function `sort_rule` gives it: the rule a wrong sort breaks)."""

    __fields__ = ("order", "excluded", "sort", "sort_rule")
    __slots__ = __fields__

    def __init__(
        self, order: tuple[Choice, ...], excluded: tuple[tuple[str, str], ...], sort: str, sort_rule: Rule
    ) -> None:
        if _COMPILED:
            self.order, self.excluded, self.sort, self.sort_rule = order, excluded, sort, sort_rule
        else:
            fill(self, (order, excluded, sort, sort_rule))

    def _values(self) -> tuple:
        return (self.order, self.excluded, self.sort, self.sort_rule)

    @property
    def servers(self) -> tuple[str, ...]:
        return tuple(c.server for c in self.order)


# ---- health tiers (AM-027..AM-031) -------------------------------------------------------------------


def _all_healthy(h: Health) -> bool:
    return all(state == C_HEALTHY for _, state in h.components.values())


def _up_to_normal(h: Health, scope: str) -> bool:
    normal = PRIORITY_RANK["Normal"]

    def counts(prio: str) -> bool:
        return PRIORITY_RANK[prio] == normal if scope == "NormalOnly" else PRIORITY_RANK[prio] >= normal

    return all(state == C_HEALTHY for prio, state in h.components.values() if counts(prio))


def _names(a: Health, b: Health) -> set[str]:
    return set(a.components) | set(b.components)


def better_than(target: Health, source: Health) -> bool:
    """AM-I03: nowhere worse than the source, strictly better somewhere."""
    names = _names(target, source)
    return all(target.rank(n) >= source.rank(n) for n in names) and any(target.rank(n) > source.rank(n) for n in names)


def same_as(target: Health, source: Health) -> bool:
    return all(target.state(n) == source.state(n) for n in _names(target, source))


def health_tier(target: Health, source: Health, opts: Options) -> int | None:
    """The first of the four tiers (in order, AM-027) the server passes, or None."""
    if _all_healthy(target):
        return 1
    if _up_to_normal(target, opts.up_to_normal):
        return 2
    if better_than(target, source):
        return 3
    if same_as(target, source):
        return 4
    return BELOW_SOURCE_TIER if opts.below_source else None


def responder_ok(target: Health, source: Health, component: str, opts: Options) -> bool:
    """AM-032 with AM-I11: the triggering component is better on the target (or Healthy there)."""
    if opts.responder == "Healthy":
        return target.state(component) == C_HEALTHY
    return target.rank(component) > source.rank(component)


# ---- criteria sets (AM-038..AM-049) ------------------------------------------------------------------


def meets(copy: CopyState, n: int, lgen: int, opts: Options) -> bool:
    """Whether a copy meets criteria set `n` (1..10)."""
    ci, cq_bound, rq_bound, _ = CRITERIA[n]
    if (n == 10 or opts.require_status) and copy.status not in ACCEPTABLE_STATUSES:
        return False
    if ci is not None and copy.content_index != ci:
        return False
    if cq_bound and copy.copy_queue(lgen) >= opts.cq_below:
        return False
    return not (rq_bound and copy.replay_queue >= opts.rq_below)


# ---- candidates and sort (AM-033..AM-037) ------------------------------------------------------------


def candidates(snap: Snapshot, trigger: Trigger, opts: Options) -> tuple[list[CopyState], list[tuple[str, str]]]:
    keep: list[CopyState] = []
    excluded: list[tuple[str, str]] = []
    src_health = snap.health_of(snap.source)
    for c in snap.copies:
        if c.server == snap.source:
            continue
        if not c.reachable:
            excluded.append((c.server, "unreachable (AM-034)"))
        elif c.administratively_blocked:
            excluded.append((c.server, "blocked from activation (AM-034)"))
        elif trigger.kind == "responder" and not responder_ok(
            snap.health_of(c.server), src_health, trigger.component or "", opts
        ):
            excluded.append((c.server, f"{trigger.component} not better than on source (AM-032)"))
        else:
            keep.append(c)
    return keep, excluded


def sort_rule(snap: Snapshot, trigger: Trigger) -> Rule:
    """The sort statement that applies to a run, as its rule (AM-035/AM-036/AM-037 with AM-I06): a lossless
    switchover without a target (AM-037), else Lossless on any copy's server (AM-036), else copy queue length
    (AM-035). The one place this is decided: the sort keys (`SORT_MODE`) and the rule a wrong sort breaks
    (`diagnose`, `monitor_bcss`) both follow from it."""
    if trigger.kind == "switchover" and trigger.lossless:
        return R.SORT_LOSSLESS_SWITCHOVER
    if any(snap.dial(c.server) == LOSSLESS for c in snap.copies):
        return R.SORT_LOSSLESS_DIAL
    return R.SORT_COPY_QUEUE


SORT_MODE: dict[Rule, str] = {  # each sort statement's keys (`sort_key`): the mode BCSS_START records
    R.SORT_COPY_QUEUE: "CopyQueue",
    R.SORT_LOSSLESS_DIAL: "ActivationPreference",
    R.SORT_LOSSLESS_SWITCHOVER: "ActivationPreference",
}


def sort_mode(snap: Snapshot, trigger: Trigger) -> str:
    """The sort keys of the statement that applies (`sort_rule`): "CopyQueue" or "ActivationPreference"."""
    return SORT_MODE[sort_rule(snap, trigger)]


def sort_key(c: CopyState, snap: Snapshot, mode: str) -> tuple[int, ...]:
    """The keys the seed names (AM-035..AM-037): copy queue then activation preference, or preference only."""
    if mode == "ActivationPreference":
        return (c.preference,)
    return (c.copy_queue(snap.last_log_generated), c.preference)


def sort_candidates(cands: list[CopyState], snap: Snapshot, mode: str) -> list[CopyState]:
    """Sorted by the seed's keys; the server name is the model's own tie-break (one allowed choice)."""
    return sorted(cands, key=lambda c: (*sort_key(c, snap, mode), c.server))


def select(snap: Snapshot, trigger: Trigger | None = None, opts: Options | None = None) -> Selection:
    """The ordered list of copies BCSS would try, each with the (tier, criteria set) that admitted it.

    Literally (AM-I01, TierMajor): for each tier in order, for each criteria set in order, take the
    sorted candidates on a server passing that tier and meeting that set, skipping those already taken.
    A copy is therefore taken at (its best tier, its best set) (CriteriaMajor: (best set, best tier)),
    and copies taken at the same pair keep the sort order; that is how it is computed here.
    """
    opts = opts or default_options()
    trigger = trigger or Trigger()
    cands, excluded = candidates(snap, trigger, opts)
    rule = sort_rule(snap, trigger)
    mode = SORT_MODE[rule]
    ordered = sort_candidates(cands, snap, mode)
    src = snap.health_of(snap.source)
    lgen = snap.last_log_generated
    placed: list[tuple[tuple[int, int], int, Choice]] = []
    for rank, c in enumerate(ordered):
        tier = health_tier(snap.health_of(c.server), src, opts)
        n = next((n for n in CRITERIA if meets(c, n, lgen, opts)), None)
        if tier is None or n is None:
            why = "meets no criteria set (AM-050)" if n is None else "server passes no health tier (AM-I04)"
            excluded.append((c.server, why))
            continue
        key = (tier, n) if opts.order == "TierMajor" else (n, tier)
        full = (*key, *sort_key(c, snap, mode))
        placed.append((key, rank, Choice(c.server, n, tier, c.copy_queue(lgen), c.replay_queue, c.preference, full)))
    placed.sort(key=lambda p: (p[0], p[1]))
    return Selection(tuple(p[2] for p in placed), tuple(excluded), mode, rule)


# ---- the choices the seed leaves open (copies equal on every key it names) -----------------------------


def allowed_next(order: Sequence[Choice], tried: Collection[str]) -> tuple[Choice, ...]:
    """The copies BCSS may try next: among those not yet tried, every one equal on all the seed's keys
    to the first (the model's server-name tie-break picks one of them; any is conformant, AM-039)."""
    rest = [c for c in order if c.server not in tried]
    return tuple(c for c in rest if c.key == rest[0].key) if rest else ()


def is_allowed_order(order: Sequence[Choice], servers: Sequence[str]) -> bool:
    """Whether `servers` lists exactly the copies of `order`, each once, in an order the seed allows."""
    tried: list[str] = []
    for s in servers:
        if s not in {c.server for c in allowed_next(order, tried)}:
            return False
        tried.append(s)
    return len(tried) == len(order)


_DEFAULT: list[Options] = []


def default_options() -> Options:
    """The catalogue's defaults, read once."""
    if not _DEFAULT:
        _DEFAULT.append(Options())
    return _DEFAULT[0]


# ---- ACLL and the dial (AM-023, AM-024, AM-I08, AM-I09) ----------------------------------------------


def acll(copy: CopyState, source_last_log: int | None) -> int:
    """LastLogInspected after ACLL: the source provides logs up to `source_last_log` (None: unavailable)."""
    return copy.lli if source_last_log is None else max(copy.lli, source_last_log)


DIAL_PARAM = {"Lossless": "AM-P02", "GoodAvailability": "AM-P03", "BestAvailability": "AM-P04"}  # thresholds


def threshold_dial(snap: Snapshot, target: str, opts: Options) -> str:
    """The dial value whose threshold bounds `target` (AM-024): its server's, or with DialScope MostRestrictive
    (AM-P10) the strictest of the database's copies' servers."""
    if opts.dial_scope == "MostRestrictive":
        return min((snap.dial(c.server) for c in snap.copies), key=opts.threshold)
    return snap.dial(target)


def dial_threshold(snap: Snapshot, target: str, opts: Options) -> int:
    return opts.threshold(threshold_dial(snap, target, opts))


def dial_allows(missing: int, snap: Snapshot, target: str, opts: Options) -> bool:
    """AM-024: mount only if the missing logs are at most the dial's threshold (equality passes)."""
    return missing <= dial_threshold(snap, target, opts)
