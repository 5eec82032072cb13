"""`haconform check --engine auto` (the default): the engine that finishes first for this input here.

Decided before any engine starts, from what is known without reading a row: the input's events (Parquet
footers' row counts; JSON Lines by size on disk, `JSONL_BYTES_PER_EVENT`, gzip counted
`GZIP_RATIO` times) and the cores this process may use. The single-process engine checks
`PYTHON_RATE` events/s from the first event; Spark first costs `SPARK_FIXED_S` (JVM, session, Python
workers, planning) and then checks `SPARK_RATE_PER_CORE` events/s per core. Spark wins when

    events / PYTHON_RATE > SPARK_FIXED_S + events / (cores * SPARK_RATE_PER_CORE)

which never holds when `cores * SPARK_RATE_PER_CORE <= PYTHON_RATE` (one core). The constants were
measured on the project's 2-core machine (benchmarks/README.md, "Session 7: the units plan"): on 2 cores
Spark wins from about 1.3 million events. Traces spread over many files take Spark's slower shuffle plan,
where the crossover is later (about 2 million events, "Issue 20: Spark at the limit"); the choice is made
before the files are indexed, so it assumes the units plan. A
`--master` always means Spark (the user chose a cluster). With `--state DIR` (incremental checking, both
engines keep the one state format) the size is that of the NEW events only (`state_events`: the segments
not yet read, `conformance.engine.resume.segments`, by the same estimates), so an incremental check of 10^5
events after a Spark check of 10^7 runs in-process; a state this input cannot continue, or none yet,
means everything is checked: the whole input is sized. The choice and its reason are one line on stderr.
Requirement: none of the trace rules (this picks a driver; both give the same report, the parity tests
hold them together).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from conformance.engine.resume import NotContinued, segments
from conformance.engine.statedir import State, saved_files
from traces.io import TraceFile, discover

# measured side by side on the idle 2-core machine (benchmarks/README.md, "Session 7: the units plan"):
# `bench_check.py` at 10^6 and 10^7 events, Spark's units plan (the corpus's files hold whole traces)
PYTHON_RATE = 68_000  # events/s, single process: 148.2 s for 10^7 events
SPARK_RATE_PER_CORE = 65_000  # events/s per core: 7.6 us of wall per event on 2 cores, 10^6 -> 10^7
SPARK_FIXED_S = 9.0  # s: session start-up (3.5 s), the Python workers' start, the index job, planning
JSONL_BYTES_PER_EVENT = 300  # the shipped samples: 304 bytes a line on average
GZIP_RATIO = 8


@dataclass(frozen=True)
class Choice:
    engine: str  # "python" or "spark"
    reason: str

    def line(self) -> str:
        return f"haconform check: engine {self.engine} (auto): {self.reason}"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def input_events(paths: list[str]) -> int | None:
    """The events under `paths` before reading them (see the module); None when the input cannot be listed
    (the engine then names the problem)."""
    try:
        return _events((tf, 0) for tf in discover(paths).files)
    except Exception:  # any unreadable input: the engine reports it, with the file named
        return None


def _events(parts: Iterable[tuple[TraceFile, int]]) -> int:
    """Events in each file from byte `start` on (a Parquet file counts whole: it takes no appends). pyarrow loads
    only for a Parquet file (issue 32, session 15: a check of JSON Lines needs neither pyarrow nor numpy)."""
    total = 0
    for tf, start in parts:
        if tf.kind == "parquet":
            import pyarrow.parquet as pq

            total += pq.ParquetFile(tf.path).metadata.num_rows
        else:
            size = (os.path.getsize(tf.path) - start) * (GZIP_RATIO if tf.kind == "jsonl.gz" else 1)
            total += size // JSONL_BYTES_PER_EVENT
    return total


def state_events(paths: list[str], state_dir: str) -> tuple[int | None, str]:
    """The events a check with `--state state_dir` reads (see the module), and what was sized."""
    try:
        files = saved_files(Path(state_dir))
    except Exception:  # an unreadable state: the engine reports it
        files = None
    if files is None:
        return input_events(paths), "no saved state to continue: every event"
    try:
        todo = segments(discover(paths).files, State({}, files=files))
        return _events((tf, start) for tf, start, _ in todo), "the new events only"
    except NotContinued:
        return input_events(paths), "the saved state cannot be continued: every event"
    except Exception:
        return None, "the input could not be listed"


def crossover(n_cores: int) -> int | None:
    """The events from which Spark finishes first on `n_cores` cores; None: never."""
    spark_rate = n_cores * SPARK_RATE_PER_CORE
    if spark_rate <= PYTHON_RATE:
        return None
    return int(SPARK_FIXED_S / (1 / PYTHON_RATE - 1 / spark_rate)) + 1


def choose(events: int | None, n_cores: int, *, master: str | None = None, sized: str = "") -> Choice:
    """The engine for an input of `events` (None: unknown) on `n_cores` cores; `sized`: what was counted
    (with `--state`), said in the reason."""
    choice = _choose(events, n_cores, master)
    return Choice(choice.engine, f"--state: {sized}; {choice.reason}") if sized else choice


def _choose(events: int | None, n_cores: int, master: str | None) -> Choice:
    if master:
        return Choice("spark", f"--master {master} given")
    if events is None:
        return Choice("python", "the input could not be sized; the single-process engine reports why")
    limit = crossover(n_cores)
    if limit is None:
        return Choice("python", f"{n_cores} core(s): Spark cannot outrun one process here")
    if events < limit:
        return Choice("python", f"~{events:,} events, below {limit:,}, where Spark starts to win on {n_cores} cores")
    return Choice("spark", f"~{events:,} events, at least {limit:,}, where Spark starts to win on {n_cores} cores")
