"""The Python worker daemon of a local Spark session, with the check's modules imported before it forks.

Spark starts one daemon per executor (`python -m MODULE`, `spark.python.daemon.module`) and forks a worker
from it for each Python task slot. PySpark's own daemon imports only PySpark, so every forked worker then
imports the monitors, the model registry and pyarrow compute itself (the issue-20 profile: 17 % of the
Python workers' samples on 10^6 events; most of the stage that starts the workers on the README's small
job). Importing them once here, before the forks, hands every worker a warm copy. Set by
`spark_trace_check.session.build_session` for local masters only (a cluster's workers may not have the
project on their path until `spark_trace_check.cluster.ship_code` ships it).
"""

from __future__ import annotations

import gc

from pyspark import daemon

import spark_trace_check.monitors  # noqa: F401  (the trace pass: engine, columnar judgement, pyarrow compute)
from conformance.pycheck import monitor_runs


def warm() -> None:
    """Import every registered mechanism's monitor (the registry loads them on first use)."""
    monitor_runs(None)
    gc.freeze()  # the forked workers do not copy these objects' pages when the collector runs


if __name__ == "__main__":
    warm()
    daemon.manager()
