"""One harness shape for every mechanism: a Hypothesis state machine over any system, judged by the monitors.

Design card, "conformance suite": for each mechanism a `Driver` (in `sr.py`, `am.py`, `pf.py`) names the
generator's inputs and faults as operations on the mechanism's `typing.Protocol`; `machine_for(mechanism,
factory)` turns them into a `RuleBasedStateMachine` that builds a system with `factory(setup)` (the model
by default), applies the drawn steps, and after every step judges the events the system recorded with the
same monitor `haconform check` uses (`conformance.check.verdict`). Steps are recorded as plain data (the
protocol calls they made), so a failure can be written to a replay file and rerun against any system.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from conformance.check import verdict
from conformance.engine.growing import Incremental
from conformance.engine.stream import result_of
from conformance.harness.choosing import scripted, scripted_end
from conformance.harness.failure import (
    Call,
    EndProblem,
    Failure,
    InternalError,
    Step,
    StepError,
    describe_failure,
    judging,
)
from conformance.harness.log import FailureLog, OutOfBudget, features  # noqa: F401 (re-exported: search, tests)
from model.kernel.choice import ChoiceNeeded
from traces.schema import Event
from traces.verdict import Violation

SystemFactory = Callable[[dict[str, Any]], Any]


class SutFailure(AssertionError):
    """The system under test broke the adapter protocol (bad reply, unusable process): a failure, not a crash."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field
        self.session: Session | None = None  # the replay it stopped (`replay_steps`): its events so far


class Divergence(StepError):
    """A recorded call naming an object (`{"$folder": k}`) that the system replaying it never created: the
    system that recorded the steps answered differently (it created a folder where this one refused, or more
    of them). Raised by a driver's `resolve`; the floor's replay on the model skips the call and reports it
    (`replay_steps(..., follow=...)`), never a crash (issue 36)."""


NOT_RECORDED = object()  # `Session.recorded()` when the followed run has no answer at this call


@dataclass(frozen=True)
class Op:
    """One input or fault of a mechanism's generator: a strategy for its raw arguments and when it applies."""

    args: st.SearchStrategy[dict[str, Any]]
    enabled: Callable[[Session], bool] | None = None
    doc: str = ""


class Driver(Protocol):
    """What the harness needs to know about one mechanism (implemented in `sr.py`, `am.py`, `pf.py`)."""

    name: str
    setup: st.SearchStrategy[dict[str, Any]]
    ops: Mapping[str, Op]

    def model_factory(self, mutant: str | None = None) -> SystemFactory: ...
    def expand(self, session: Session, op: str, raw: dict[str, Any]) -> list[Call]: ...
    def resolve(self, session: Session, args: dict[str, Any]) -> dict[str, Any]: ...
    def absorb(self, session: Session, call: str, result: Any) -> None: ...
    def events(self, session: Session) -> list[Event]: ...
    def finish(self, session: Session) -> list[Call]: ...
    def end_checks(self, session: Session) -> list[EndProblem]: ...
    def mutants(self) -> dict[str, tuple[str, ...]]:
        """Mutant name -> the rule it was planted against, then the rules that may also legitimately catch it."""

    def monitor(self) -> Any: ...


class Session:
    """One run: the system, its setup, the steps applied so far and the verdicts so far."""

    def __init__(self, driver: Driver, system: Any, setup: dict[str, Any]) -> None:
        self.driver, self.system, self.setup = driver, system, setup
        self.steps: list[Step] = []
        self.state: dict[str, Any] = {}  # the driver's bookkeeping (created folders, last primary, ...)
        self.outs: list[Event] = []  # events collected by drivers whose systems return them per call
        self.judged = 0
        self.notes: list[str] = []
        self.incremental: Incremental | None = None  # the run's folds, fed each event once
        self.fed: tuple[int, Event | None] = (0, None)  # how many events were fed, and the last of them
        self.answers: list[Any] = []  # the system's answer to each call applied, in order (issue 36)
        self.follow: Sequence[Any] | None = None  # another system's answers to the same calls (the floor's replay)
        self.diverged: list[str] = []  # where this system could not follow `follow`'s (each names the request)
        self.where = ""  # the call being applied, `steps[i].calls[j] (call)`, during a replay
        self.start: tuple[int, ...] = ()  # the construction's choices the system was built under (issue 33)

    def apply(self, call: Call) -> Any:
        args = self.driver.resolve(self, call.get("args", {}))
        method = getattr(self.system, call["call"], None)
        if method is None and call["call"] == "kill_and_restart":
            self.notes.append("a process fault of the recorded run does not apply to an in-process system: skipped")
            self.answers.append(None)
            return None
        if method is None:
            raise SutFailure(f"the system has no protocol method {call['call']!r}", call["call"])
        result = method(**args)
        self.answers.append(result)
        self.driver.absorb(self, call["call"], result)
        return result

    def recorded(self) -> Any:
        """The followed system's answer to the call just applied (`NOT_RECORDED`: none is followed)."""
        n = len(self.answers) - 1
        if self.follow is None or not 0 <= n < len(self.follow):
            return NOT_RECORDED
        return self.follow[n]

    def diverge(self, why: str) -> None:
        """Note where this system's answer parts from the followed one's (the call being applied named)."""
        self.diverged.append(f"{self.where or 'a call'}: {why}")

    def step(self, op: str, raw: dict[str, Any]) -> Step:
        calls = self.driver.expand(self, op, raw)
        step = Step(op, calls)
        self.steps.append(step)
        for call in calls:
            self.apply(call)
        return step

    def events(self) -> list[Event]:
        return self.driver.events(self)

    def judge(self, final: bool = False, consume: bool = False) -> tuple[list[Violation], list[str]]:
        """Core rules plus the mechanism's monitor over every event recorded so far.

        Each event is fed once to the run's folds (`conformance.engine.growing.Incremental`); a verdict
        finishes a copy of them (the run's folds go on), taken once the record has grown by half since the
        last verdict and at the end, so a verdict costs a copy of the live state, not a replay of the run.
        Where the record is not a growing sequence in seq order (an event out of order, an ID repeated, an
        earlier event changed), the whole prefix is judged by
        `conformance.check.verdict` instead: the same verdict, by the slow path. `consume`: the session is not
        judged again (an explorer's copy into a state already seen, issue 33): the folds are finished themselves,
        not a copy of them, and a later verdict would start afresh."""
        events = self.events()
        n, last = self.fed
        if self.incremental is None or len(events) < n or (n and events[n - 1] is not last):
            self.incremental, n = None, 0
        if not final and len(events) < max(self.judged * 3 // 2, self.judged + 1):
            return [], []
        result = judging(f"the {self.driver.name} monitor", lambda: self._verdict(events, n, consume))
        self.fed = (len(events), events[-1] if events else None)
        if consume:
            self.incremental, self.fed = None, (0, None)
        self.judged = len(events)
        return list(result.violations), list(result.notes)

    def _verdict(self, events: list[Event], n: int, consume: bool = False) -> Any:
        """The verdict on `events`, the run's folds fed those from `n` on (rule code: `judging` wraps it)."""
        if self.incremental is None:
            self.incremental = Incremental([(self.driver.name, self.driver.monitor())])
        inc = self.incremental
        for e in events[n:]:
            inc.feed(e)
        if not inc.exact():
            return verdict(events, [self.driver.monitor()])
        if consume:  # the folds themselves finished (`Incremental.verdict` finishes a pickled copy of them)
            traces = inc.router.traces
            return result_of(traces[trace].finish() for trace in sorted(traces))
        return inc.verdict()


def machine_for(
    driver: Driver,
    factory: SystemFactory | None = None,
    log: FailureLog | None = None,
    watch: frozenset[str] | None = None,
) -> type[RuleBasedStateMachine]:
    """A `RuleBasedStateMachine` driving systems built by `factory(setup)` (default: the model).

    `watch`: only these rules fail a run (a mutant test asking for one rule's report); None: every rule."""
    build = factory or driver.model_factory()
    record = log if log is not None else FailureLog()

    def start(self: Any, setup: dict[str, Any]) -> None:
        record.check_time()
        record.runs += 1
        self.failed = False
        self.session = Session(driver, None, setup)
        try:
            self.session.system = build(setup)
            driver.absorb(self.session, "__init__", None)  # e.g. sr asks for the servers: a bad reply fails
        except SutFailure as exc:
            self._fail([], str(exc))
        opening = getattr(driver, "opening", None)
        for op, raw in opening(self.session) if opening else []:
            try:
                self.session.step(op, raw)
            except SutFailure as exc:
                self._fail([], str(exc))

    def _fail(self: Any, violations: list[Violation], problem: str = "", ends: Sequence[EndProblem] = ()) -> None:
        self.failed = True
        s = self.session
        events = s.events() if s.system is not None else []
        f = Failure(driver.name, s.setup, list(s.steps), violations, problem, events, end_problems=list(ends))
        record.record(f)
        raise AssertionError(describe_failure(f))

    def _judge(self: Any, final: bool = False) -> None:
        try:
            violations, notes = self.session.judge(final)
        except InternalError:
            self.failed = True  # the run ends here: its teardown judges nothing more
            raise
        if watch is not None:
            violations = [v for v in violations if v.rule in watch]
        if violations:
            self._fail(violations)
        if final and notes:
            record.unjudged_runs += 1
            record.unjudged_notes.extend(notes[: max(0, 3 - len(record.unjudged_notes))])

    def make_rule(name: str, op: Op) -> Any:
        def run(self: Any, raw: dict[str, Any]) -> None:
            record.steps_run += 1
            try:
                self.session.step(name, raw)
            except SutFailure as exc:
                self._fail([], str(exc))

        run.__name__ = name
        run.__doc__ = op.doc
        fn = rule(raw=op.args)(run)
        ready = op.enabled
        if ready is not None:
            fn = precondition(lambda self: hasattr(self, "session") and ready(self.session))(fn)
        return fn

    def judge(self: Any) -> None:
        if getattr(self, "session", None) is not None and self.session.system is not None and not self.failed:
            self._judge()

    def teardown(self: Any) -> None:
        # teardown runs in a `finally`: failing again here would hide the invariant's own failure
        s = getattr(self, "session", None)
        if s is None or s.system is None:
            return
        try:
            if not self.failed:
                _end_of_run(self, s)
        finally:
            close = getattr(s.system, "close", None)
            if close is not None:
                close()

    def _end_of_run(self: Any, s: Session) -> None:
        try:
            for call in driver.finish(s):
                s.apply(call)
        except SutFailure as exc:
            self._fail([], str(exc))
        self._judge(final=True)
        try:  # the end-of-run checks ask the system (a bad reply there is a failure naming it, too)
            problems = watched(driver.end_checks(s), watch)
        except SutFailure as exc:
            self._fail([], str(exc))
        if problems:
            self._fail([], "; ".join(map(str, problems)), problems)
        record.keep(list(s.events()), (dict(s.setup), [step.to_json() for step in s.steps], list(s.answers)))

    namespace: dict[str, Any] = {
        "start": initialize(setup=driver.setup)(start),
        "_fail": _fail,
        "_judge": _judge,
        "judge": invariant()(judge),
        "teardown": teardown,
        "failed": False,
    }
    for name, op in driver.ops.items():
        namespace[name] = make_rule(name, op)
    machine = type(f"{driver.name.capitalize()}ConformanceMachine", (RuleBasedStateMachine,), namespace)
    machine.failures = record  # type: ignore[attr-defined]
    return machine


def watched(problems: Sequence[EndProblem], watch: frozenset[str] | None) -> list[EndProblem]:
    """The end-of-run checks' findings that fail a run: all of them, or those of a rule in `watch` (by the rule
    each carries, never by its text)."""
    return [p for p in problems if watch is None or p.rule.name in watch]


def replay_steps(
    driver: Driver,
    system: Any,
    setup: dict[str, Any],
    steps: Sequence[dict[str, Any]],
    follow: Sequence[Any] | None = None,
    end: Any = None,
) -> tuple[Session, list[tuple[str, list[Event]]]]:
    """Apply recorded steps to a system; return the session and, per step, the events it recorded.

    `follow`: the answers of the system that recorded the steps, one per call (`Session.answers`): the replay
    follows that system where it can (a folder it created where this system refused is referred to by no
    later call of this one; one this system created where it refused is not numbered), and skips a call that
    names what this system never created, noting each such divergence with its request in
    `session.diverged`. Without it, such a call is a `StepError` (a replay file naming what the setup lacks).
    `end`: the fairness end's resolution an explorer found the violation under (a replay file's `"end"`,
    `{"choices": [...], "ranges": ...}`; issue 33), re-imposed on the model's end; None: the seed draws it."""
    session = Session(driver, system, setup)
    session.follow = follow
    try:
        return session, _replay(driver, session, steps, follow, end)
    except SutFailure as exc:
        exc.session = session  # `haconform replay --trace-out` writes what was recorded before the bad reply
        raise


def _replay(
    driver: Driver, session: Session, steps: Sequence[dict[str, Any]], follow: Sequence[Any] | None, end: Any = None
) -> list[tuple[str, list[Event]]]:
    driver.absorb(session, "__init__", None)
    per_step: list[tuple[str, list[Event]]] = []
    for i, raw in enumerate(steps):
        before = len(session.events())
        calls = list(raw["calls"])
        session.steps.append(Step(raw["op"], calls))
        if "choices" in raw:
            _scripted_step(session, i, raw, follow)
        else:
            _apply_step(session, i, calls, follow)
        per_step.append((raw["op"], session.events()[before:]))
    session.where = "(end of run)"
    before = len(session.events())
    if end is None:
        for call in driver.finish(session):
            session.apply(call)
    else:
        scripted_end(session, driver.finish(session), end)
    per_step.append(("(end of run: fairness)", session.events()[before:]))
    return per_step


def _apply_step(session: Session, i: int, calls: list[Call], follow: Sequence[Any] | None) -> None:
    for j, call in enumerate(calls):
        session.where = f"steps[{i}].calls[{j}] ({call.get('call')} {json.dumps(call.get('args', {}))})"
        try:
            session.apply(call)
        except Divergence as exc:
            if follow is None:
                raise StepError(f"steps[{i}].calls[{j}] ({call.get('call')}): {exc}") from exc
            session.answers.append(None)  # skipped: the calls stay aligned with the followed answers
            session.diverge(f"skipped: {exc}")
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise StepError(
                f"steps[{i}].calls[{j}] ({call.get('call')}): the system cannot apply it: {type(exc).__name__}: {exc}"
            ) from exc


def _scripted_step(session: Session, i: int, raw: dict[str, Any], follow: Sequence[Any] | None) -> None:
    """A step the explorer took with the model's random choices resolved (`"choices"`: the outcome indices, in
    the order the model made them; issue 33): re-imposed on a model, the same resolution; a system without a
    chooser (a system under test) decides for itself."""
    script, ranges = raw["choices"], raw.get("ranges", "ends")
    if not isinstance(script, list) or not all(isinstance(k, int) and k >= 0 for k in script):
        raise StepError(f"steps[{i}]: field 'choices' must be a list of non-negative integers, not {script!r}")
    with scripted(session.system, script, ranges) as chooser:
        try:
            _apply_step(session, i, list(raw["calls"]), follow)
        except ChoiceNeeded as exc:
            raise StepError(f"steps[{i}]: field 'choices': the model made more choices than recorded: {exc}") from exc
        if chooser is not None and chooser.pos != len(script):
            raise StepError(
                f"steps[{i}]: field 'choices': {len(script)} recorded, the model made {chooser.pos} "
                "(not this model's path)"
            )
