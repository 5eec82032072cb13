"""The Python worker daemon of the check's Spark session: pyspark's own, with the engine imported first.

Spark forks one Python worker per concurrent task from this daemon (`spark.python.daemon.module`). With
pyspark's daemon each worker imports the engine, the registry's monitors and pyspark.sql itself when it
unpickles its first task: 1-2 CPU-s per worker, several workers per check (issue 20's profile: 16 % of
the workers' samples of a 10^6-event check under the units plan). Imported once here, before the fork, the
modules are shared by every worker (copy on write); `pyspark.worker` too (the module each forked worker
would otherwise import for its first task).

The preloaded objects are then frozen (`gc.freeze`, as Python's documentation advises for a process that
forks without exec, issue 32): a worker's collections (pyspark's daemon runs a full one after every task a
reused worker finishes, 9 % of the workers' samples of a 10^6-event check in session 10's profile) do not
walk them, and do not write to their pages, which stay shared instead of being copied into every worker.

pyspark and py4j are imported from their installed packages when those are the versions of the archives Spark put
first on the path (`spark_trace_check.worker_path`, issue 32, session 17): compiled bytecode, not the zips' sources.

pyarrow loads without pandas (`traces.arrow_start`, session 28): its first conversion would import pandas only to
ask whether the values are pandas objects, and no task of the check converts to or from pandas. The daemon's start
is on the critical path of a Spark check's first job: 0.61-0.68 -> 0.45 CPU s, peak RSS 137 -> 104 MiB
(tests/spark/test_worker_daemon_imports.py).
"""

from __future__ import annotations

import gc
import sys

from spark_trace_check.worker_path import prefer_installed
from traces.arrow_start import arrow_without_pandas

prefer_installed(sys.path)  # before pyspark is imported
arrow_without_pandas()  # before pyarrow is imported: no task of the check converts to or from pandas

import pyspark.worker  # noqa: E402, F401 (preloaded for the forked workers)
from pyspark import daemon  # noqa: E402

import conformance.engine.units  # noqa: E402, F401 (preloaded for the forked workers)
import model.registry  # noqa: E402
import spark_trace_check.trace_pass  # noqa: E402
import spark_trace_check.units  # noqa: E402, F401

if __name__ == "__main__":
    model.registry.monitor_runs(None)  # the mechanisms' monitor modules, loaded lazily otherwise
    gc.collect()
    gc.freeze()
    daemon.manager()
