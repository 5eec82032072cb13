"""Plan a streaming check: which traces live in which files, and groups of traces checked together.

The single-process engine (`conformance.pycheck`) holds one group of whole traces in memory at a time
(core rules TR-001..TR-006 and every monitor need a trace, or an entity of it, whole). Before reading,
each file is indexed cheaply: Parquet by its `trace_id` column alone; JSON Lines by a scan of each line for
its `"trace_id": "..."` key (a line holding that key more than once is decoded in full). The index is a
plan, not a verdict: rows are validated when the group is read, and a valid row whose trace the index
missed is an internal error, never a dropped row.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

import pyarrow.compute as pc
import pyarrow.parquet as pq

from traces.io import TraceFile, TraceFileError, check_parquet_schema, jsonl_lines
from traces.rows import parse_json

GROUP_EVENTS = 500_000  # events of whole traces held at once (a trace larger than this is a group alone)
_KEY = re.compile(rb'"trace_id"\s*:')
_VALUE = re.compile(rb'"trace_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _jsonl_trace(line: bytes) -> str | None:
    """The trace a JSON Lines row names, when it can be told; None for a row that is not valid anyway."""
    if len(_KEY.findall(line)) == 1:
        found = _VALUE.search(line)
        if found is None:
            return None
        try:
            value = json.loads(b'"' + found.group(1) + b'"')
        except ValueError:
            return None
        return value if isinstance(value, str) else None
    try:
        row, problem = parse_json(line.decode("utf-8"))  # depth-bounded: never recurses deeply
    except UnicodeDecodeError:
        return None
    if problem is not None:
        return None
    trace = row.get("trace_id") if isinstance(row, dict) else None
    return trace if isinstance(trace, str) else None


def file_traces(tf: TraceFile) -> Counter[str]:
    """Rows per trace in one file (rows whose trace cannot be told are not counted: they are not valid)."""
    if tf.kind == "parquet":
        check_parquet_schema(tf.path, tf.name)
        try:
            column = pq.read_table(tf.path, columns=["trace_id"])["trace_id"]
        except Exception as exc:  # any Arrow failure: the file cannot be read
            raise TraceFileError(f"{tf.name}: cannot read Parquet data: {exc}") from exc
        try:
            counts = pc.value_counts(column)
        except Exception:  # invalid UTF-8: count the bytes, the rows are judged when read
            counts = pc.value_counts(column.cast("binary"))
        out: Counter[str] = Counter()
        for item in counts.to_pylist():
            if isinstance(item["values"], str):
                out[item["values"]] += item["counts"]
        return out
    out = Counter()
    for _, line in jsonl_lines(tf):
        trace = _jsonl_trace(line)
        if trace is not None:
            out[trace] += 1
    return out


@dataclass
class Group:
    traces: set[str] = field(default_factory=set)
    files: list[int] = field(default_factory=list)  # ranks of the files holding any of the traces
    events: int = 0


def plan(files: list[TraceFile], budget: int = GROUP_EVENTS) -> tuple[list[Group], dict[str, int]]:
    """Groups of whole traces, in the order their first rows appear, each at most `budget` events (unless
    one trace is larger), and the group of every trace."""
    index = [file_traces(tf) for tf in files]
    group_of: dict[str, int] = {}
    sizes: Counter[str] = Counter()
    for counts in index:
        sizes.update(counts)
    groups: list[Group] = []
    for counts in index:
        for trace in counts:
            if trace in group_of:
                continue
            if not groups or (groups[-1].events and groups[-1].events + sizes[trace] > budget):
                groups.append(Group())
            groups[-1].traces.add(trace)
            groups[-1].events += sizes[trace]
            group_of[trace] = len(groups) - 1
    for rank, counts in enumerate(index):
        for g in sorted({group_of[t] for t in counts}):
            groups[g].files.append(rank)
    return groups, group_of
