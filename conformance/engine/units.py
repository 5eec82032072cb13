"""Units of work of a corpus check, and one unit judged: the engine's work, whichever driver runs it.

A check needs every trace whole (core rules TR-001..TR-006 and every monitor). The files are indexed first
(`conformance.engine.trace_index.index_file`: rows per trace, whether each trace is recorded in seq order,
rows), then split into units of whole traces (`plan_units`):
- files that share a trace are one component (union-find over the index): a trace never spans two of them;
- a component of at most `budget` events is read whole, packed with its neighbours up to the budget;
- a larger one is cut into chunks of whole traces (in the order their first rows appear), each reading its
  slice of the component's files (`traces.slices`: only its traces' rows are judged; the first chunk that
  reads a file also owns the rows whose trace the index does not hold), so every row is judged once.

`judge_unit` reads a unit's files once into the engine's one driver (`conformance.engine.driver.Engine`):
each event, as it is read, goes to its trace's folds, a streamed trace is finished at its last indexed row
with its violations' events kept from the read, and a trace recorded out of seq order is held and judged
whole. The
single-process driver (`conformance.pycheck`) judges the units one after another; the Spark driver
(`spark_trace_check.units`) one task per bin of units. Both end in `finish_units`, so their reports are
the same by construction. `budget` bounds memory: the folds of one unit are live at a time.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from conformance.engine.driver import Engine, InternalError, duplicates_among
from conformance.engine.outcome import CheckOutcome, attach_from, finish_outcome
from conformance.engine.tally import RuleCounts
from conformance.engine.trace_index import FileIndex, hash_ids, index_file, seq_order, unique_ids
from traces.dataset import id_hash
from traces.io import Discovery, TraceFile, iter_trace_file
from traces.slices import Slice, iter_slice

Index = FileIndex

# Session 29: a Parquet file whose every event ID names its own event (`<trace_id>:<seq>`) is not hashed by the
# index; when every file indexed together is so and every trace in seq order, TR-002 has nothing to find among
# them (`trace_index.unique_ids`). False: every ID hashed, as before (the reference for tests/engine/test_own_ids.py
# and tests/spark/test_probed_own_ids.py).
SKIP_OWN_IDS = True


@dataclass
class Unit:
    """Whole traces judged together: the files read (ranks, in order), each file's slice (None: every
    file read whole), the traces, those recorded in seq order (streamed into folds), each streamed trace's
    rows as indexed (`sizes`: the engine finishes a trace at its last row, `conformance.engine.driver`),
    and the events."""

    files: list[int] = field(default_factory=list)
    slices: dict[int, Slice] | None = None
    traces: set[str] = field(default_factory=set)
    streamed: set[str] = field(default_factory=set)
    sizes: dict[str, int] = field(default_factory=dict)
    events: int = 0


@dataclass
class UnitResult:
    """What judging one unit found and counted (the rows of the unit's files or slices)."""

    violations: list[dict] = field(default_factory=list)
    unknown: list[dict] = field(default_factory=list)
    quarantine: list[dict] = field(default_factory=list)
    rows_read: int = 0
    rows_checked: int = 0
    rows_by_file: dict[int, int] = field(default_factory=dict)
    by_mechanism: Counter[str] = field(default_factory=Counter)
    hashes: array = field(default_factory=lambda: array("Q"))
    counts: RuleCounts = field(default_factory=RuleCounts)  # what each rule judged
    candidates: list = field(default_factory=list)  # (file rank, arrival, event) of hashes known to repeat


def components(traces: list[Iterable[str]]) -> list[list[int]]:
    """Files that share a trace, transitively (union-find over each file's trace names, `traces[rank]`), each
    component in rank order, in the order of its first file."""
    parent = list(range(len(traces)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    home: dict[str, int] = {}
    for rank, names in enumerate(traces):
        for trace in names:
            other = home.setdefault(trace, rank)
            a, b = root(other), root(rank)
            if a != b:
                parent[max(a, b)] = min(a, b)
    out: dict[int, list[int]] = {}
    for rank in range(len(traces)):
        out.setdefault(root(rank), []).append(rank)
    return list(out.values())


def _ordered(index: list[Index]) -> set[str]:
    """The traces whose rows are in strictly increasing seq order across their files, read in rank order."""
    return seq_order(index).ordered()


def plan_units(index: list[Index], budget: int) -> list[Unit]:
    """The units of a corpus (see the module): every file in exactly one unit's reading as its owner."""
    ordered = _ordered(index)
    units: list[Unit] = []
    packing: Unit | None = None
    for component in components([entry.counts for entry in index]):
        sizes: Counter[str] = Counter()
        for rank in component:
            sizes.update(index[rank][0])
        events = sum(sizes.values())
        if events <= budget:
            if packing is None or (packing.events and packing.events + events > budget):
                packing = Unit()
                units.append(packing)
            packing.files.extend(component)
            packing.traces.update(sizes)
            packing.streamed.update(t for t in sizes if t in ordered)
            packing.sizes.update((t, n) for t, n in sizes.items() if t in ordered)
            packing.events += events
            continue
        packing = None
        units.extend(_chunks(index, component, sizes, ordered, budget))
    for unit in units:
        unit.files.sort()
    return units


def _chunks(
    index: list[Index], component: list[int], sizes: Counter[str], ordered: set[str], budget: int
) -> list[Unit]:
    """A component larger than the budget, cut into chunks of whole traces, each reading slices."""
    chunks: list[Unit] = []
    chunk_of: dict[str, int] = {}
    for rank in component:
        for trace in index[rank][0]:
            if trace in chunk_of:
                continue
            if not chunks or (chunks[-1].events and chunks[-1].events + sizes[trace] > budget):
                chunks.append(Unit(slices={}))
            chunks[-1].traces.add(trace)
            chunks[-1].events += sizes[trace]
            if trace in ordered:
                chunks[-1].streamed.add(trace)
                chunks[-1].sizes[trace] = sizes[trace]
            chunk_of[trace] = len(chunks) - 1
    if not chunks:
        chunks.append(Unit(slices={}))
    for rank in component:
        counts = index[rank][0]
        here = sorted({chunk_of[t] for t in counts}) or [0]
        for n, c in enumerate(here):
            mine = frozenset(t for t in counts if chunk_of[t] == c)
            chunks[c].files.append(rank)
            chunks[c].slices[rank] = Slice(mine, frozenset(counts) if n == 0 else None)  # type: ignore[index]
    return chunks


def read_amplification(index: list[Index], units: list[Unit]) -> float:
    """Rows read over rows held: 1.0 when every file is read by one unit (its slices cost a cheap scan)."""
    rows = [entry.rows for entry in index]
    total = sum(rows)
    return sum(rows[r] for u in units for r in u.files) / total if total else 1.0


def judge_unit(
    files: list[TraceFile],
    unit: Unit,
    runs: list,
    hash_of: Callable[[str], int] = id_hash,
    advance: Callable[[int], None] | None = None,
    candidates: set[int] | None = None,
    told: bool = False,
) -> UnitResult:
    """Read a unit's files (or slices) once into the engine (`conformance.engine.driver.Engine`): every event
    fed to its trace's folds as it is read, the violations' events from that read, the events of the ID
    hashes in `candidates` kept (TR-002); `told`: the index hashed every event ID, the unit returns none."""
    engine = Engine(
        runs, unit.streamed, traces=unit.traces, sizes=unit.sizes, hash_of=hash_of, candidates=candidates, told=told
    )
    with engine.reading():
        for rank in unit.files:
            tf = files[rank]
            engine.read(
                rank,
                tf.name,
                iter_trace_file(tf) if unit.slices is None else iter_slice(tf, unit.slices[rank]),
                advance,
            )
        found, unknown, held = engine.finish()
    if not engine.complete:  # more events than the engine keeps at once: the unit's files read again
        attach_from(found, held, [files[r] for r in unit.files], unit.traces)
    return result_of(engine, found, unknown)


def index_files(
    files: list[TraceFile], ranks: Sequence[int], hash_of: Callable[[str], int], skip_own: bool = SKIP_OWN_IDS
) -> tuple[list[Index], bool]:
    """The index of the files `ranks`, in that order, with their event-ID hashes, and whether no ID repeats among
    them (`trace_index.unique_ids`: every file's IDs its own, every trace in seq order; nothing hashed then).
    With `skip_own`, the own files are not hashed while every file before was own (a file of other IDs: the
    rest hashed as they are indexed, not read twice); when the files are not `unique_ids`, another file's IDs
    may spell the own ones, so those are hashed after all (`trace_index.hash_ids`, their `event_id` column)."""
    index: list[Index] = []
    skip = skip_own
    for rank in ranks:
        index.append(index_file(files[rank], hash_of=hash_of, skip_own=skip))
        skip = skip and index[-1].own
    unique = unique_ids(index)
    if not unique:
        for n, entry in enumerate(index):
            if entry.own:
                index[n] = entry._replace(ids=hash_ids(files[ranks[n]], hash_of), own=False)
    return index, unique


def judge_component(
    files: list[TraceFile],
    ranks: list[int],
    runs: list,
    hash_of: Callable[[str], int] = id_hash,
    skip_own: bool = SKIP_OWN_IDS,
) -> tuple[list[Index], list[UnitResult], array]:
    """Files known to hold whole traces among them (a component, `conformance.engine.trace_probe`), indexed and
    judged by one caller: the index of each file (without its hashes), the results of its units (one, unless
    the files share less than the probe said), and the event-ID hashes for TR-002: the index's when it told
    every row's ID, else the units' own. No candidate's events are kept: the hashes seen twice are known only
    once every component has been judged. A component whose IDs are all its own and in order (`index_files`;
    every entry `own`) returns no hash: none of its IDs repeats within it, nor any own ID of another component
    (that names another trace); whether another component's other IDs spell one is the caller's question
    (`spark_trace_check.probed_units`)."""
    index, unique = index_files(files, ranks, hash_of, skip_own)
    told = unique or all(len(entry.ids) == entry.rows for entry in index)
    hashes = array("Q")
    if told:
        for entry in index:
            hashes.extend(entry.ids)
    index = [entry._replace(ids=array("Q")) for entry in index]
    results: list[UnitResult] = []
    for unit in plan_units(index, max(1, sum(entry.rows for entry in index))):
        unit.files = [ranks[i] for i in unit.files]
        result = judge_unit(files, unit, runs, hash_of, told=told)
        if not told:
            hashes.extend(result.hashes)
        result.hashes = array("Q")
        results.append(result)
    return index, results, hashes


def result_of(engine: Engine, found: list[dict], unknown: list[dict]) -> UnitResult:
    """What one engine read found and counted, as a unit's result."""
    return UnitResult(
        violations=found,
        unknown=unknown,
        quarantine=engine.quarantine,  # type: ignore[arg-type]
        rows_read=engine.rows_read,
        rows_checked=engine.rows_checked,
        rows_by_file=engine.rows_by_file,
        by_mechanism=engine.by_mechanism,
        hashes=engine.hashes,
        counts=engine.router.counts,
        candidates=engine.candidates,
    )


def kept_duplicates(
    results: list[UnitResult], repeated: set[int] | None, predicted: set[int]
) -> tuple[list[dict], dict] | None:
    """TR-002 exactly over the events the units kept for the hashes the index found repeated (`predicted`),
    in recording order, with no read of the files: `repeated` is what the units' own hashes found (None: the
    index told every row's event ID, so `predicted` holds every repeated one). None when the kept events
    cannot tell: the index missed a repeated ID (a row whose ID it could not read plainly), or a file's kept
    events came from several units (its slices: their order within the file is not known); the caller then
    reads the files again for the repeated hashes (`conformance.engine.outcome.duplicate_ids`). No hash is
    worked out here: the driver's hash may not be the tasks' (`spark_trace_check.units.hash_for`)."""
    repeated = predicted if repeated is None else repeated
    if not repeated:
        return [], {}
    units_of: dict[int, set[int]] = {}
    for n, r in enumerate(results):
        for rank, _, _ in r.candidates:
            units_of.setdefault(rank, set()).add(n)
    if not repeated <= predicted or any(len(u) > 1 for u in units_of.values()):
        return None
    kept = sorted((c for r in results for c in r.candidates), key=lambda c: c[:2])
    return duplicates_among([e for _, _, e in kept])  # exact: an ID kept once is no duplicate


def finish_units(
    found: Discovery,
    index: list[Index],
    results: list[UnitResult],
    monitors: list[str],
    duplicates: tuple[list[dict], dict],
    *,
    engine: str,
    cap: int,
) -> CheckOutcome:
    """The report of a check from its units' results (the TR-002 `duplicates` found by the driver)."""
    order = {tf.name: i for i, tf in enumerate(found.files)}
    by_mech: Counter[str] = Counter()
    quarantine: list[dict] = []
    violations: list[dict] = []
    unknown: list[dict] = []
    counts = RuleCounts()
    for r in results:
        counts.merge(r.counts)
        by_mech.update(r.by_mechanism)
        quarantine.extend(r.quarantine)
        violations.extend(r.violations)
        unknown.extend(r.unknown)
    per_file: Counter[int] = Counter()
    for r in results:
        per_file.update(r.rows_by_file)
    for rank, entry in enumerate(index):  # every row of every file read by exactly one unit (TR-005)
        if per_file[rank] != entry.rows:
            raise InternalError(f"{found.files[rank].name}: the units read {per_file[rank]} of its {entry.rows} rows")
    rows_read, rows_checked = sum(r.rows_read for r in results), sum(r.rows_checked for r in results)
    return finish_outcome(
        engine=engine,
        files=[tf.name for tf in found.files],
        rows_read=rows_read,
        rows_checked=rows_checked,
        quarantine=sorted(quarantine, key=lambda q: (order[q["file"]], q["line"])),
        violations=violations,
        unknown=unknown,
        by_mechanism=dict(by_mech),
        monitors=monitors,
        files_skipped=found.skipped,
        duplicates=duplicates,
        cap=cap,
        counts=counts,
    )
