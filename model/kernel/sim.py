"""Discrete-event simulation kernel: virtual time, a stable scheduler, node lifecycle and the recorder.

Virtual time is an integer number of milliseconds since the Unix epoch, UTC (so that wall-clock rules
such as the public folder status thread at 00:15 and 12:15 GMT have a meaning); a run starts at
`DEFAULT_START_MS` (2026-01-01T00:00:00Z) unless told otherwise. Events scheduled for the same
millisecond run in the order they were scheduled: the queue key is (time, insertion number), a total and
stable order. All randomness comes from the one `KernelRandom(seed)` (a `random.Random`) in `Simulator.rng`; nothing
here reads a clock, sleeps or touches the global `random`, so the same seed gives the same trace.
"""

from __future__ import annotations

import heapq
import json
import random
import types
from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from model.kernel.choice import Chooser, seeded
from model.kernel.recorder import Recorder
from traces.schema import Event

MS = 1
SECOND = 1_000
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE
DAY = 24 * HOUR
DEFAULT_START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

Lifecycle = Callable[[str, str], None]  # (node, "crash" | "restart" | "restart-new-storage")


class SimulationError(RuntimeError):
    """Misuse of the kernel (time going backwards, unknown node)."""


# A function of a module compiled by the optional build (`scripts/build_fast.py`, Cython with `binding`): a named
# function like a Python one, with its `__code__`, `__closure__` and `__qualname__` (session 13: the generators'
# modules whose methods are timers are compiled).
COMPILED_FUNCTION = "cython_function_or_method"
_RECORDS: set[Any] = set()  # functions `closure_in` found to be records (module-level and methods: they live on)


def _is_record(fn: Callable[..., Any]) -> bool:
    """`closure_in(fn) == ''`, remembered per function (session 11: checked at every timer scheduled)."""
    f = fn.__func__ if isinstance(fn, types.MethodType) else fn
    if f in _RECORDS:
        return True
    if closure_in(fn):
        return False
    _RECORDS.add(f)
    return True


def closure_in(fn: Callable[..., Any]) -> str:
    """Why `fn` is not a timer record ('' when it is): a timer's action is a named method or module-level
    function called with its arguments, never a lambda or nested function (whose captured cells a copy of the
    state would share with the original)."""
    f = fn.__func__ if isinstance(fn, types.MethodType) else fn
    python = isinstance(f, types.FunctionType) or type(f).__name__ == COMPILED_FUNCTION
    captured = f.__code__.co_freevars if python else ()
    if python and (
        # a method calling super() holds only its class in `__class__`: a constant, not live state
        (f.__closure__ and captured != ("__class__",)) or "<lambda>" in f.__qualname__ or "<locals>" in f.__qualname__
    ):
        return f"{f.__module__}.{f.__qualname__} is a closure"
    if not python and not isinstance(f, (types.BuiltinFunctionType, types.BuiltinMethodType)):
        return f"{type(fn).__name__} is not a named function or method"
    return ""


class _Item(list):  # type: ignore[type-arg]
    """A timer as a record: due time, insertion order, the action (a bound method or module function), its
    arguments, its node, the node's incarnation, cancelled. No closure, so a copy of the whole system copies its
    timers with it (issue 33). A list, so the queue's heap compares (time, insertion order) in C (session 11: a
    dataclass's generated `__lt__` was 9% of exploring pf); the order is unique, so the action is never compared.
    Made from the tuple (time_ms, order, fn, args, node, incarnation, cancelled)."""

    __slots__ = ()

    time_ms = property(itemgetter(0))
    order = property(itemgetter(1))
    fn = property(itemgetter(2))
    args = property(itemgetter(3))
    node = property(itemgetter(4))
    incarnation = property(itemgetter(5))

    @property
    def cancelled(self) -> bool:
        return self[6]  # type: ignore[no-any-return]

    @cancelled.setter
    def cancelled(self, value: bool) -> None:
        self[6] = value

    def __repr__(self) -> str:
        return f"_Item(time_ms={self[0]}, order={self[1]}, fn={self[2]!r}, args={self[3]!r}, node={self[4]!r})"


@dataclass(frozen=True, slots=True)
class TimerHandle:
    item: _Item

    @property
    def time_ms(self) -> int:
        return self.item.time_ms


@dataclass(slots=True)
class NodeState:
    up: bool = True
    incarnation: int = 0  # bumps on every crash: timers of an old incarnation never fire
    storage_epoch: int = 0  # bumps when the node comes back with new, empty storage


class KernelRandom(random.Random):
    """The kernel's generator: `random.Random` (the same Mersenne Twister, the same draws for a seed), which keeps
    its state words while nothing drew from it (issue 33, session 14). A copy of a model state is rebuilt from
    them (`conformance.explore.state`) without setting them: they are set at the first draw, so a state whose
    generator does not draw (exploration's choices are scripted, not drawn) is thawed, copied and fingerprinted
    from the words it was thawed from, not from 625 ints that `getstate` makes each time.

    `words` is the state as `getstate` gives it (version, the words as `array("I").tobytes()`, gauss_next) or None
    once something drew; `pending`: the generator's own state is not yet set to it. Every draw goes through
    `random` or `getrandbits` (`random.Random`'s two primitives; its other methods call them), and `gauss`, which
    also keeps a value of the state (`gauss_next`), is one."""

    words: tuple[int, bytes, float | None] | None = None
    pending = False

    def _drawn(self) -> None:
        if self.pending:
            version, words, gauss = self.words  # type: ignore[misc]
            super().setstate((version, tuple(array("I", words)), gauss))
            self.pending = False
        self.words = None

    def random(self) -> float:
        if self.words is not None:
            self._drawn()
        return super().random()

    def getrandbits(self, k: int) -> int:
        if self.words is not None:
            self._drawn()
        return super().getrandbits(k)

    def gauss(self, mu: float = 0.0, sigma: float = 1.0) -> float:
        if self.words is not None:  # it reads and sets `gauss_next`, part of the state, without always drawing
            self._drawn()
        return super().gauss(mu, sigma)

    def getstate(self) -> tuple[Any, ...]:
        if self.pending:
            version, words, gauss = self.words  # type: ignore[misc]
            return (version, tuple(array("I", words)), gauss)
        return super().getstate()

    def setstate(self, state: tuple[Any, ...]) -> None:
        super().setstate(state)
        self.words, self.pending = None, False

    def seed(self, a: Any = None, version: int = 2) -> None:
        super().seed(a, version)
        self.words, self.pending = None, False

    @classmethod
    def thawed(cls, version: int, words: bytes, gauss: float | None) -> KernelRandom:
        """A generator in the state `words` (as `KernelRandom.words` holds it), set at its first draw."""
        rng = cls.__new__(cls)
        rng.gauss_next = gauss
        rng.words, rng.pending = (version, words, gauss), True
        return rng


class Simulator:
    """The event loop every mechanism model runs on.

    `strict_timers`: refuse a timer whose action is a closure (`closure_in`); `choices` resolves every random
    decision of the model (`model.kernel.choice`): seeded in simulation, scripted in exploration."""

    strict_timers = True

    def __init__(
        self,
        seed: int,
        *,
        trace_id: str,
        mechanism: str,
        config: Mapping[str, Any] | None = None,
        start_ms: int = DEFAULT_START_MS,
    ) -> None:
        self.seed = seed
        self.rng: random.Random = KernelRandom(seed)
        self.choices: Chooser = seeded(self.rng)  # a `SeededChooser`; scripted while a root is built (issue 33)
        # the labels exploration branches on (None: every one); the others stay drawn by `rng` (issue 33: an
        # exploration bound's `choices = [...]`, read by `conformance.harness.choosing.scripted`)
        self.branching: frozenset[str] | None = None
        self.now_ms = start_ms
        self.start_ms = start_ms
        self.mechanism = mechanism
        self.recorder = Recorder(trace_id)
        self._queue: list[_Item] = []
        self._order = 0
        self._nodes: dict[str, NodeState] = {}
        self._lifecycle: list[Lifecycle] = []
        self.steps = 0
        cfg = json.dumps(dict(config or {}), sort_keys=True, separators=(",", ":"), default=str)
        self.emit("sim", "core", trace_id, "TRACE_START", seed=seed, model=mechanism, config=cfg)

    # --- scheduling -------------------------------------------------------------------------------
    def at(self, time_ms: int, fn: Callable[..., None], *args: Any, node: str | None = None) -> TimerHandle:
        """Run `fn(*args)` at `time_ms`; a timer tied to `node` is dropped if the node crashed meanwhile."""
        if time_ms < self.now_ms:
            raise SimulationError(f"cannot schedule at {time_ms} before now {self.now_ms}")
        if self.strict_timers and not _is_record(fn) and (why := closure_in(fn)):
            raise SimulationError(f"a timer is a record (action and arguments), not a closure: {why}")
        incarnation = self._node(node).incarnation if node is not None else 0
        item = _Item((time_ms, self._order, fn, args, node, incarnation, False))
        self._order += 1
        heapq.heappush(self._queue, item)
        return TimerHandle(item)

    def after(self, delay_ms: int, fn: Callable[..., None], *args: Any, node: str | None = None) -> TimerHandle:
        return self.at(self.now_ms + max(0, int(delay_ms)), fn, *args, node=node)

    def cancel(self, handle: TimerHandle | None) -> None:
        if handle is not None:
            handle.item.cancelled = True

    def run(self, *, until_ms: int | None = None, max_steps: int | None = None) -> int:
        """Process events in order until the queue empties, `until_ms` passes or `max_steps` ran."""
        ran = 0
        while self._queue:
            if max_steps is not None and ran >= max_steps:
                break
            item = self._queue[0]
            if until_ms is not None and item.time_ms > until_ms:
                break
            heapq.heappop(self._queue)
            if item.cancelled or not self._live(item):
                continue
            self.now_ms = item.time_ms
            item.fn(*item.args)
            ran += 1
        if until_ms is not None and (max_steps is None or ran < max_steps):
            self.now_ms = max(self.now_ms, until_ms)
        self.steps += ran
        return ran

    def _live(self, item: _Item) -> bool:
        if item.node is None:
            return True
        state = self._nodes[item.node]
        return state.up and state.incarnation == item.incarnation

    # --- nodes ------------------------------------------------------------------------------------
    def add_node(self, name: str) -> None:
        self._nodes.setdefault(name, NodeState())

    def _node(self, name: str | None) -> NodeState:
        try:
            return self._nodes[name]  # type: ignore[index]
        except KeyError:
            raise SimulationError(f"unknown node {name!r}") from None

    def nodes(self) -> list[str]:
        return sorted(self._nodes)

    def is_up(self, name: str) -> bool:
        return self._node(name).up

    def incarnation(self, name: str) -> int:
        return self._node(name).incarnation

    def storage_epoch(self, name: str) -> int:
        return self._node(name).storage_epoch

    def on_lifecycle(self, callback: Lifecycle) -> None:
        self._lifecycle.append(callback)

    def crash(self, name: str) -> None:
        """Stop a node: its pending timers are dropped and messages to it are lost until it restarts."""
        state = self._node(name)
        if not state.up:
            return
        state.up = False
        state.incarnation += 1
        self.emit(name, "core", name, "CRASH")
        for cb in self._lifecycle:
            cb(name, "crash")

    def restart(self, name: str, *, new_storage: bool = False) -> None:
        """Bring a node back, with the storage it had or with new, empty storage (a new database)."""
        state = self._node(name)
        if state.up:
            return
        state.up = True
        if new_storage:
            state.storage_epoch += 1
        self.emit(
            name, "core", name, "RESTART", storage="new" if new_storage else "same", storage_epoch=state.storage_epoch
        )
        for cb in self._lifecycle:
            cb(name, "restart-new-storage" if new_storage else "restart")

    # --- recording --------------------------------------------------------------------------------
    def emit(self, node: str, mechanism: str, entity: str, kind: str, **attrs: Any) -> Event:
        """Record an observable event at the current virtual time."""
        return self.recorder.emit(self.now_ms, node, mechanism, entity, kind, attrs)

    @property
    def events(self) -> list[Event]:
        return self.recorder.events
