"""A quiet Spark session: local mode by default, any master by URL; Spark's own logging kept to errors.

Settings follow the field notes for a 2-core machine: no UI, no console progress bar, UTC session time,
in-memory catalogue, driver bound to 127.0.0.1 in local mode, Arrow enabled for the Python workers.
"""

from __future__ import annotations

import os
from pathlib import Path

_LOG4J = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = error
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = error
"""


def _log4j_file() -> Path:
    path = Path(os.environ.get("TMPDIR", "/tmp")) / "haconform-log4j2.properties"
    if not path.exists() or path.read_text() != _LOG4J:
        path.write_text(_LOG4J)
    return path


def build_session(master: str = "local[2]", *, app_name: str = "haconform-check", partitions: int = 4,
                  for_tests: bool = False):
    """Create (or reuse) the SparkSession. `for_tests` trades JIT and GC throughput for start-up time."""
    from pyspark.sql import SparkSession

    # Python workers import the monitors: make the project importable for them however it was installed.
    root = str(Path(__file__).resolve().parent.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    if for_tests:
        java_opts += " -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.catalogImplementation", "in-memory")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.default.parallelism", str(partitions))
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.extraJavaOptions", java_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
    )
    if master.startswith("local"):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
    if for_tests:
        builder = builder.config("spark.sql.codegen.wholeStage", "false")
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
