"""Required orderings of a trace under clock skew (issue 6, "Trace ordering under clock skew").

Every node's recorded time is its true time plus an offset, |offset(n)| <= skew(n). A required ordering
("event X happens before event Y", e.g. TR-003: a NET_SEND before the NET_RECV of the same wire) between
X on node A at recorded time ta and Y on node B at tb holds in true time iff

    offset(B) - offset(A) <= tb - ta          (a difference constraint between two nodes' offsets)

so each instance gets one of four verdicts:

- consistent: it holds for every offsets within the bounds (tb - ta >= skew(A) + skew(B));
- violation: it fails for every offsets within the bounds (tb - ta < -(skew(A) + skew(B))), or the
  earlier event is missing, or both are on one node and recorded out of order (one clock, no skew);
- ambiguous: the bounds allow either order;
- inconsistent: ambiguous on its own, but no single choice of offsets within the bounds explains it
  together with the trace's other orderings (it is in an unsat core of the joint system).

The report also gives the smallest skew, one bound for all nodes, that explains every cross-node
instance (None when a cycle of orderings cannot be explained by any skew). Building formulas per event is
what costs time (FIELD-NOTES, "z3, in practice"), so instances are aggregated to the tightest bound per
ordered pair of nodes first and the joint step works on that small system of difference constraints
(`spec.claims.skew_graph`: Bellman-Ford, negative cycles as minimal unsat cores; z3 is its tested
reference). The Spark checker runs `classify` per entity, merges `pair_bounds` per trace and calls
`resolve` once per trace; `check_skew` does all three. `traces.schema.Event` objects or plain tuples
`(event_id, node, ts_ms, kind, entity, attrs)` are accepted.

Each built-in ordering judges a rule object of `spec.claims.skew_rules` (`ordering(rule, ...)`; issue 29), carried
by its instances (`Instance.check`), so a monitor counts what each rule judged (`Instance.tally`) without looking
a rule up by name; an `Ordering` built by name alone (a claim's, a test's) is judged but not counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from spec.catalogue import require
from spec.claims import skew_rules as rules
from spec.claims.skew_graph import conflicting_pairs, min_uniform_skew
from traces.verdict import Rule, Tally, Violation

SkewVerdict = Literal["consistent", "violation", "ambiguous", "inconsistent"]
SEVERITY: dict[str, int] = {"consistent": 0, "ambiguous": 1, "inconsistent": 2, "violation": 3}


@dataclass(frozen=True)
class Ordering:
    """`before` must happen before `after` for events of these kinds with the same key: one attribute, or
    several (`"entity"` names the event's entity). `where` keeps only the `after` events whose attributes
    have these values."""

    rule: str
    requirement: str
    before: str
    after: str
    key: str | tuple[str, ...] = "wire"
    mechanism: str | None = None  # only events of this mechanism (ignored for plain tuples)
    strict: bool = False  # strictly before (at least 1 ms of true time apart)
    where: tuple[tuple[str, Any], ...] = ()
    check: Rule | None = field(default=None, compare=False)  # the rule object it judges (issue 29)

    def key_of(self, entity: str, attrs: Mapping[str, Any]) -> Any:
        names = (self.key,) if isinstance(self.key, str) else self.key
        values = tuple(entity if n == "entity" else attrs.get(n) for n in names)
        if any(v is None for v in values):
            return None
        return values[0] if len(values) == 1 else values

    def selects(self, attrs: Mapping[str, Any]) -> bool:
        return all(attrs.get(k) == v for k, v in self.where)


def ordering(
    rule: Rule, before: str, after: str, key: str | tuple[str, ...] = "wire", mechanism: str | None = None, **kw: Any
) -> Ordering:
    """The ordering judging `rule` (its name and requirement, and the object itself for the tally)."""
    return Ordering(rule.name, rule.requirement, before, after, key, mechanism, check=rule, **kw)


NET_SEND_BEFORE_RECV = ordering(rules.NET_SEND_BEFORE_RECV, "NET_SEND", "NET_RECV", "wire", "core")
# Seed 000 (SR-031, SR-001): the primary acknowledges a message as made redundant only after the shadow
# server received its copy; HARECEIVE is recorded by the shadow, ACCEPT by the primary: two clocks.
SHADOW_BEFORE_ACCEPT = ordering(
    rules.SHADOW_RECEIVED_BEFORE_ACCEPT,
    "HARECEIVE",
    "ACCEPT",
    ("entity", "inst"),
    "sr",
    where=(("redundant", True),),
)
# SR-030: the shadow acknowledges its copy after storing it (HARECEIVE on the shadow, SHADOW_ACK on the
# primary when the acknowledgement arrives).
SHADOW_STORED_BEFORE_ACK = ordering(rules.SHADOW_STORED_BEFORE_ACK, "HARECEIVE", "SHADOW_ACK", ("entity", "inst"), "sr")
SR_ORDERINGS: tuple[Ordering, ...] = (SHADOW_BEFORE_ACCEPT, SHADOW_STORED_BEFORE_ACK)
DEFAULT_ORDERINGS: tuple[Ordering, ...] = (NET_SEND_BEFORE_RECV,)
require(*{o.requirement for o in (*DEFAULT_ORDERINGS, *SR_ORDERINGS)})


@dataclass(frozen=True)
class Instance:
    rule: str
    requirement: str
    before_event: str | None
    after_event: str
    before_node: str | None
    after_node: str
    gap_ms: int | None  # recorded after-time minus recorded before-time
    verdict: SkewVerdict
    explanation: str
    weight_ms: int | None = None  # w in offset(after_node) - offset(before_node) <= w (gap, minus 1 if strict)
    check: Rule | None = field(default=None, compare=False, repr=False)  # the ordering's rule object

    def tally(self, tally: Tally) -> None:
        """Count this instance in `tally` (issue 29): consistent, violated and inconsistent instances are
        judged; an ambiguous one is skipped, explainable either way within the bound. An ordering built
        without a rule object (`Ordering(...)` by name) is not counted."""
        if self.check is None:
            return
        if self.verdict == "ambiguous":
            tally.skip(self.check, rules.AMBIGUOUS)
        else:
            tally.judge(self.check)

    @property
    def pair(self) -> tuple[str, str] | None:
        """The ordered pair of nodes whose offsets this instance constrains (None: same node or unmatched)."""
        if self.before_node is None or self.before_node == self.after_node or self.weight_ms is None:
            return None
        return (self.before_node, self.after_node)


@dataclass(frozen=True)
class SkewReport:
    instances: tuple[Instance, ...]
    min_skew_ms: int | None
    nodes: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def verdict(self) -> SkewVerdict:
        worst = max((i.verdict for i in self.instances), key=SEVERITY.__getitem__, default="consistent")
        return worst  # type: ignore[return-value]

    def by_verdict(self, verdict: str) -> list[Instance]:
        return [i for i in self.instances if i.verdict == verdict]


def _row(ev: Any) -> tuple[str, str, int, str, str | None, Mapping[str, Any], str]:
    if isinstance(ev, tuple):
        event_id, node, ts, kind, entity, attrs = ev[:6]
        return str(event_id), str(node), int(ts), str(kind), None, attrs or {}, str(entity)
    return ev.event_id, ev.node, ev.ts_ms, ev.kind, ev.mechanism, ev.attrs, ev.entity


def _bound(skew: int | Mapping[str, int], node: str) -> int:
    if isinstance(skew, int):
        return skew
    if node in skew:
        return int(skew[node])
    if "*" in skew:
        return int(skew["*"])
    raise KeyError(f"no skew bound for node {node!r} (give one per node, or a '*' default)")


def _classify(o: Ordering, before: tuple | None, after: tuple, skew: int | Mapping[str, int]) -> Instance:
    aid, bnode, bts = after[0], after[1], after[2]
    if before is None:
        why = f"{o.after} {aid} on {bnode} has no {o.before} with the same {o.key}"
        return Instance(o.rule, o.requirement, None, aid, None, bnode, None, "violation", why, check=o.check)
    eid, anode, ats = before[0], before[1], before[2]
    gap = bts - ats
    w = gap - 1 if o.strict else gap
    slack = 0 if anode == bnode else _bound(skew, anode) + _bound(skew, bnode)
    when = f"{gap} ms after" if gap >= 0 else f"{-gap} ms before"
    where = f"{o.after} {aid} on {bnode} is recorded {when} {o.before} {eid} on {anode}"
    clocks = "one clock" if anode == bnode else f"clocks at most {slack} ms apart"
    if w >= slack:
        verdict, why = "consistent", f"{where}; {clocks} cannot reverse that"
    elif w < -slack:
        verdict, why = "violation", f"{where}; {clocks} cannot explain it"
    else:
        verdict, why = "ambiguous", f"{where}; with {clocks} either order is possible"
    return Instance(o.rule, o.requirement, eid, aid, anode, bnode, gap, verdict, why, w, o.check)  # type: ignore[arg-type]


def classify(
    events: Iterable[Any], skew: int | Mapping[str, int], orderings: Sequence[Ordering] = DEFAULT_ORDERINGS
) -> list[Instance]:
    """Step 1, per entity and without a solver: every instance of every ordering, classified as
    consistent, violation or ambiguous on its own."""
    rows = [_row(ev) for ev in events]
    out: list[Instance] = []
    for o in orderings:
        first: dict[Any, tuple] = {}
        afters: list[tuple] = []
        for r in rows:
            if o.mechanism is not None and r[4] is not None and r[4] != o.mechanism:
                continue
            if r[3] == o.before:
                k = o.key_of(r[6], r[5])
                if k is not None and k not in first:
                    first[k] = r
            elif r[3] == o.after and o.selects(r[5]):
                afters.append(r)
        out.extend(_classify(o, first.get(o.key_of(r[6], r[5])), r, skew) for r in afters)
    return out


def pair_bounds(instances: Iterable[Instance], verdicts: Iterable[str] = ("ambiguous",)) -> dict[tuple[str, str], int]:
    """Step 2: the tightest constraint per ordered pair of nodes (merge maps from several entities by
    taking the minimum per pair; `merge_pair_bounds` does it)."""
    wanted = set(verdicts)
    pairs: dict[tuple[str, str], int] = {}
    for i in instances:
        p = i.pair
        if p is None or i.verdict not in wanted:
            continue
        if p not in pairs or i.weight_ms < pairs[p]:  # type: ignore[operator]
            pairs[p] = i.weight_ms  # type: ignore[assignment]
    return pairs


def merge_pair_bounds(*maps: Mapping[tuple[str, str], int]) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for m in maps:
        for p, w in m.items():
            out[p] = min(w, out.get(p, w))
    return out


MAX_ROUNDS = 20


def apply_conflicts(
    instances: Sequence[Instance],
    conflicts: Mapping[tuple[str, str], int],
    tight: Mapping[tuple[str, str], int],
    *,
    all_on_pair: bool = False,
) -> list[Instance]:
    """Mark as inconsistent the ambiguous instances on a conflicting pair whose weight is at most the
    pair's conflicting limit, or equal to the pair's tightest weight (which is on the core). Pure and
    per instance, so a distributed checker can apply it after one joint step per trace."""
    names = ", ".join(f"{x}->{y}" for x, y in list(conflicts)[:6])
    out = []
    for i in instances:
        p = i.pair
        if (
            i.verdict == "ambiguous"
            and p in conflicts
            and (
                all_on_pair or i.weight_ms <= conflicts[p] or i.weight_ms == tight[p]  # type: ignore[operator]
            )
        ):
            why = (
                f"{i.explanation}, but not together with the orderings between {names}: no clock offsets "
                "within the bounds explain them all"
            )
            i = replace(i, verdict="inconsistent", explanation=why)
        out.append(i)
    return out


def _mark(instances: list[Instance], skew: int | Mapping[str, int]) -> list[Instance]:
    """Mark conflicting ambiguous instances, round after round, until the unmarked ones are jointly
    explainable (so removing every inconsistent instance always leaves a trace the bounds explain)."""
    for round_no in range(MAX_ROUNDS + 1):
        tight = pair_bounds(instances)
        conflicts = conflicting_pairs(tight, lambda n: _bound(skew, n))
        if not conflicts:
            break
        instances = apply_conflicts(instances, conflicts, tight, all_on_pair=round_no == MAX_ROUNDS)
    return instances


def resolve(instances: Sequence[Instance], skew: int | Mapping[str, int]) -> SkewReport:
    """Steps 2 and 3 for one trace: mark the ambiguous instances that conflict jointly as inconsistent and
    compute the smallest uniform skew explaining every cross-node instance."""
    out = _mark(list(instances), skew)
    counts = {v: 0 for v in SEVERITY}
    for i in out:
        counts[i.verdict] += 1
    nodes = tuple(sorted({n for i in out for n in (i.before_node, i.after_node) if n is not None}))
    return SkewReport(tuple(out), min_uniform_skew(pair_bounds(out, SEVERITY)), nodes, counts)


def check_skew(
    events: Iterable[Any],
    skew: int | Mapping[str, int],
    orderings: Sequence[Ordering] = DEFAULT_ORDERINGS,
) -> SkewReport:
    """Classify every instance of every required ordering in `events` under the skew bound(s)."""
    return resolve(classify(events, skew, orderings), skew)


def to_violations(report: SkewReport, trace_id: str, entity: str = "", mechanism: str = "core") -> list[Any]:
    """Violations (`traces.verdict.Violation`) for the instances that are definite violations or
    jointly inconsistent; consistent and ambiguous instances are not violations."""

    out = []
    for i in report.instances:
        if i.verdict in ("violation", "inconsistent"):
            rule = i.rule if i.verdict == "violation" else f"{i.rule}.skew_inconsistent"
            ids = tuple(x for x in (i.before_event, i.after_event) if x is not None)
            data = {"gap_ms": i.gap_ms, "verdict": i.verdict, "before_node": i.before_node, "after_node": i.after_node}
            out.append(Violation(rule, i.requirement, trace_id, entity, ids, i.explanation, mechanism, data))
    return out
