"""One BCSS run as the Active Manager monitor replays it, and how the run's record findings are reported.

Seed 002, "Best copy selection process" (AM-022..AM-025, AM-039; interpretation AM-I12: the list is computed
once per run). A `Run` holds the choices the seed allows and how far the trace has gone; `RunRecords` is the
issue 24 reporting: what a run's own events restate wrongly is kept as evidence until the run ends, unless a
rule on the run's behaviour fires first and carries it. Split from `monitor_bcss.py` (issue 29).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the compiled build: the replay's fields read as C struct members (`replay_state.pxd`)
    import cython
else:  # pure Python: the decorators change nothing (`traces.fastpath.shadow`)
    from traces.fastpath import shadow as cython

from model.am import events as ev
from model.am.bcss import DIAL_PARAM, Choice, Options, is_allowed_order, threshold_dial
from model.am.diagnose import context
from model.am.replay_state import ReplayState
from model.am.state import Snapshot, Trigger
from spec.catalogue import cite
from traces.schema import Event
from traces.verdict import Rule

cite("AM-024", "AM-025", "AM-039", "AM-I12", "AM-P10")

FAILURE = Trigger()  # a detected failure (AM-021), the trigger when nothing else is pending; a frozen value


@dataclass
class Run:
    """One BCSS run being replayed: the choices the seed allows and how far the trace has gone."""

    start: Event
    snap: Snapshot
    trigger: Trigger
    pam: str
    expected: tuple[Choice, ...]
    recorded: tuple[str, ...] | None  # the run's own list, when it is one the seed allows
    judged: bool  # False when the configuration needed to judge the order is not recorded
    dial_known: bool
    sort: Rule  # the sort statement that applies to the run (`bcss.sort_rule`, decided once in `select`)
    tried: list[str] = field(default_factory=list)
    acll_ok: dict[str, bool] = field(default_factory=dict)
    lli_before: dict[str, int] = field(default_factory=dict)
    acll_done: set[str] = field(default_factory=set)
    broken: bool = False
    outcome: str | None = None  # BCSS_END's outcome, once the run has ended
    excluded: tuple[tuple[str, str], ...] = ()  # (server, why) left out of the candidates (AM-032, AM-034)
    refused: dict[str, str] = field(default_factory=dict)  # server -> why it did not mount in this run
    failed: set[str] = field(default_factory=set)  # servers whose mount failed in this run
    # what the run's own record restates wrongly (rule, event, sentence, values compared): reported at BCSS_END
    # unless a rule on the run's behaviour fires first, which then leads and carries these as its evidence
    deferred: list[tuple[Rule, Event, str, dict[str, Any]]] = field(default_factory=list)


class RunRecords(ReplayState):
    """Reporting within a run (issue 24): record findings kept as evidence, the behaviour rule that leads."""

    __slots__ = ()

    @cython.locals(self=ReplayState)
    def v(self, rule: Rule, e: Event, why: str, *others: Event, entity: str | None = None, **data: Any) -> None: ...

    # --- record findings and the behaviour rule that leads (issue 24) --------------------------------
    @cython.locals(self=ReplayState)
    def record(self, run: Run | None, rule: Rule, e: Event, why: str, **data: Any) -> None:
        """A restated fact of the run is wrong: kept as evidence until the run ends (or reported now, outside
        a run)."""
        if run is None:
            self.v(rule, e, why, **data)
        else:
            run.deferred.append((rule, e, why, data))

    @cython.locals(self=ReplayState)
    def lead(self, run: Run | None, rule: Rule, e: Event, why: str, *others: Event, **data: Any) -> None:
        """A behaviour rule fires: it is reported, with the run's record findings so far as its evidence."""
        if run is not None and run.deferred:
            why += " [evidence, the run's own record: " + "; ".join(f"{r.name}: {w}" for r, _, w, _ in run.deferred)
            why += "]"
            others = (*others, *(x for _, x, _, _ in run.deferred if x is not e and x not in others))
            data["evidence"] = [{"rule": r.name, "explanation": w, **d} for r, _, w, d in run.deferred]
            run.deferred.clear()
        self.v(rule, e, why, *others, **data)

    @cython.locals(self=ReplayState)
    def flush_record(self, run: Run) -> None:
        for rule, e, why, data in run.deferred:
            self.v(rule, e, why, *((run.start,) if e is not run.start else ()), **data)
        run.deferred.clear()


def recorded_order(
    a: dict[str, Any],
    order: tuple[Choice, ...],
    excluded: tuple[tuple[str, str], ...],
    found: list[tuple[str, dict[str, Any]]],
) -> tuple[tuple[str, ...] | None, tuple[str, str] | None]:
    """BCSS_START's own list when it is one the seed allows (with the right tier and set for each copy); else
    None, and why it is not in `found`. Second: a copy AM-034 leaves out that the list holds, with why."""
    if "order" not in a:
        return None, None
    entries = [str(x).split(":") for x in a["order"]]
    servers = tuple(x[0] for x in entries)
    by_server = {c.server: ev.encode_choice(c.server, c.tier, c.criteria_set) for c in order}
    if is_allowed_order(order, servers) and all(
        by_server[s] == str(x) for s, x in zip(servers, a["order"], strict=True)
    ):
        return servers, None
    allowed = context(order, excluded, {})
    expected = [ev.encode_choice(c.server, c.tier, c.criteria_set) for c in order]
    found.append(
        (
            f"BCSS records the list {list(a['order'])}, not an order the seed allows; {allowed}",
            {"observed": list(a["order"]), "expected": expected, "excluded": [list(x) for x in excluded]},
        )
    )
    left_out = dict(excluded)
    listed = [s for s in servers if "(AM-034)" in left_out.get(s, "")]
    # the candidate list itself holds a copy AM-034 leaves out: that statement's rule
    return None, ((listed[0], left_out[listed[0]]) if listed else None)


DIAL_UNKNOWN = {  # why an ACLL's dial is not judged (Run.judged: the dials are recorded)
    False: "the AutoDatabaseMountDial of a copy of the run is not recorded (AM_CONFIG)",
    True: "dial thresholds not recorded in TRACE_START config.bcss.thresholds (AM-I09)",
}


def bound(snap: Snapshot, s: str, opts: Options, threshold: int) -> dict[str, Any]:
    """The dial bound an ACLL is compared with (AM-024): the threshold, the dial it is taken from and that
    dial's parameter ID (AM-P02..AM-P04), and the dial scope (AM-P10)."""
    dial = threshold_dial(snap, s, opts)
    return {"bound": threshold, "setting": dial, "parameter": DIAL_PARAM.get(dial), "dial_scope": opts.dial_scope}


def policy(c: Any) -> str:
    """Why a reachable copy is blocked from activation, from its recorded activation policy (AM_CONFIG)."""
    flags = [k for k in ("blocked", "suspended") if getattr(c, k, False)]
    return f"blocked from activation (its recorded policy: {', '.join(f'{k}=true' for k in flags) or 'blocked'})"
