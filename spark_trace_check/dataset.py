"""Ingested datasets on Spark: `haconform check DATASET --engine spark` (writing one: `spark_trace_check.ingest`).

The dataset's files already hold whole traces in recording order (`traces.dataset`), so there is no parse
and no shuffle: a list of file paths is distributed, one task per file, and each task reads its file with
pyarrow and streams it through the engine's folds: the core rules of its traces and every monitor of the
registry's list (`conformance.dataset_check.judge_file`, the code the Python engine runs). Event-ID
uniqueness (TR-002) is one column-only aggregation (`event_id`, count > 1), compared with the duplicates
recorded at ingest. On a cluster the dataset must be on storage every worker sees.
"""

from __future__ import annotations

import functools
from collections import Counter
from typing import Any

from pyspark.sql import SparkSession

from conformance.dataset_check import assemble, judge_file
from conformance.engine.outcome import DEFAULT_CAP, CheckOutcome
from model.registry import monitor_factories
from spark_trace_check.cluster import ship_code
from traces import dataset as fmt


def check_dataset(
    spark: SparkSession, path: str, *, skew_ms: int | None = None, cap: int = DEFAULT_CAP
) -> CheckOutcome:
    ds = fmt.open_dataset(path)
    ship_code(spark)  # the workers of a real cluster import the monitors from it
    paths = [str(ds.path(e).resolve()) for e in ds.files]
    results: list[dict[str, Any]] = []
    seen: Counter[str] = Counter()
    if paths:
        task = functools.partial(judge_file, skew_ms=skew_ms)
        results = spark.sparkContext.parallelize(paths, len(paths)).map(task).collect()
        repeated = spark.read.parquet(*paths).groupBy("event_id").count().where("count > 1").collect()
        seen = Counter({r["event_id"]: r["count"] for r in repeated})
    return assemble(ds, "spark", results, seen, [name for name, _ in monitor_factories(skew_ms)], cap)
