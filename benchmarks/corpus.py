"""Benchmark corpora: simulated traces of every registered mechanism, replicated to any size.

Simulating 10^7 events takes minutes; the checkers' cost does not depend on whether two traces share a
seed, so a pool of simulated traces (seeds 1..K, round-robin over the mechanisms) is written once and then
copied under new trace IDs (`<trace>~r<k>`, event IDs renamed the same way) with pyarrow until the corpus
holds the requested number of events. Files are Parquet, one per trace copy batch.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from model.registry import mechanisms
from traces.io import write_events
from traces.schema import SCHEMA_VERSION, arrow_schema

POOL_EVENTS = 200_000


def simulated_pool(directory: Path, target: int, first_seed: int = 1) -> int:
    """Simulate traces until `target` events, seeds from `first_seed` on (the compiled path's training,
    `scripts/pgo.py`, takes seeds no benchmark corpus holds); one Parquet file per trace. Returns the number of
    events."""
    directory.mkdir(parents=True, exist_ok=True)
    specs = list(mechanisms().values())
    total, seed = 0, first_seed
    while total < target:
        spec = specs[seed % len(specs)]
        events = spec.simulate(seed)
        write_events(directory / f"{spec.name}-s{seed}.parquet", events)
        total += len(events)
        seed += 1
    return total


def _renamed(table: pa.Table, suffix: str) -> pa.Table:
    """The copy's trace IDs `<trace><suffix>`, and its event IDs renamed the same way: an ID that names its own event
    (`<trace>:<seq>`, what the kernel's recorder writes) becomes the copy's own (`<trace><suffix>:<seq>`, session 29:
    before, the suffix went after the seq, an ID no recorder writes); any other ID gets the suffix at its end."""
    trace = pc.binary_join_element_wise(table["trace_id"], pa.scalar(suffix), "")
    seq = pc.cast(table["seq"], pa.string())
    own = pc.equal(table["event_id"], pc.binary_join_element_wise(table["trace_id"], seq, ":"))
    event_id = pc.if_else(
        own,
        pc.binary_join_element_wise(trace, seq, ":"),
        pc.binary_join_element_wise(table["event_id"], pa.scalar(suffix), ""),
    )
    table = table.set_column(table.schema.get_field_index("trace_id"), "trace_id", trace)
    return table.set_column(table.schema.get_field_index("event_id"), "event_id", event_id)


def build_corpus(directory: Path, target: int, *, files_per_copy: int = 1) -> int:
    """A corpus of at least `target` events: the simulated pool, then renamed copies of it."""
    pool_dir = directory / "_pool"
    simulated_pool(pool_dir, min(target, POOL_EVENTS))
    tables = [pq.read_table(p) for p in sorted(pool_dir.glob("*.parquet"))]
    merged = pa.concat_tables(tables)
    total, copy = 0, 0
    while total < target:
        table = merged if copy == 0 else _renamed(merged, f"~r{copy}")
        for i, part in enumerate(_split(table, files_per_copy)):
            pq.write_table(part, directory / f"copy{copy:05d}-{i}.parquet")
        total += table.num_rows
        copy += 1
    for p in pool_dir.iterdir():
        p.unlink()
    pool_dir.rmdir()
    return total


def _split(table: pa.Table, parts: int) -> list[pa.Table]:
    size = -(-table.num_rows // parts)
    return [table.slice(i * size, size) for i in range(parts) if i * size < table.num_rows]


def single_entity_corpus(directory: Path, events: int, *, per_file: int = 1_000_000) -> int:
    """One valid trace whose events but its TRACE_START concern one entity: `events` rows in all, written
    in Parquet files of `per_file` rows straight from Arrow columns (no Event objects)."""
    directory.mkdir(parents=True, exist_ok=True)
    schema = arrow_schema()
    start = {
        "schema_version": SCHEMA_VERSION,
        "trace_id": "one",
        "seq": 0,
        "event_id": "one:0",
        "ts_ms": 0,
        "node": "N1",
        "mechanism": "core",
        "entity": "one",
        "kind": "TRACE_START",
        "attrs": '{"config":"{}","model":"bench","seed":0}',
    }
    written = 0
    part = 0
    while written < events:
        lo, hi = written, min(events, written + per_file)
        seq = pa.array(range(lo, hi), pa.int64())
        n = hi - lo
        table = pa.table(
            {
                "schema_version": pa.array([SCHEMA_VERSION] * n, pa.int32()),
                "trace_id": pa.array(["one"] * n),
                "seq": seq,
                "event_id": pc.binary_join_element_wise(pa.array(["one:"] * n), pc.cast(seq, pa.string()), ""),
                "ts_ms": seq,
                "node": pa.array(["N1"] * n),
                "mechanism": pa.array(["core"] * n),
                "entity": pa.array(["E1"] * n),
                "kind": pa.array(["TICK"] * n),
                "attrs": pa.array(["{}"] * n),
            },
            schema=schema,
        )
        if lo == 0:
            table = pa.concat_tables([pa.Table.from_pylist([start], schema=schema), table.slice(1)])
        pq.write_table(table, directory / f"one-{part:05d}.parquet")
        written, part = hi, part + 1
    return written
