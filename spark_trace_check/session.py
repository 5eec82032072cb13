"""A quiet Spark session: local mode by default, any master by URL; Spark's own logging kept off the
terminal (an error reaches the user as one line from the CLI, its Java stack in the error log).

Settings follow the field notes for a 2-core machine: no UI, no console progress bar, UTC session time,
in-memory catalogue, driver bound to 127.0.0.1 in local mode, Arrow enabled for the Python workers. The
Python workers run the driver's own interpreter (`sys.executable`), so that an installation in a virtual
environment that is not activated still finds its packages, unless the user chose one with
`PYSPARK_PYTHON` or `spark.pyspark.python`.

Task attempts (issue 35): a cluster tries a failed task up to `spark.task.maxFailures` times (4 by default),
so a lost Python worker (the OOM killer, a stray signal) costs one task, not the check; a local master ignores
that setting and tries each task once unless its master string says otherwise (`local[N,F]`). A local session
is therefore built as `local[N,F]` with F the check's task attempts: `--task-attempts` on `haconform check`,
else `HACONFORM_TASK_ATTEMPTS`, else `TASK_ATTEMPTS` (4, as a cluster); 1 turns retries off. A master string
that names its own F keeps it; on a cluster the setting, when given, becomes `spark.task.maxFailures`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from py4j.protocol import Py4JError

from spark_trace_check.jvm_archive import java_options

_LOG4J = """\
rootLogger.level = fatal
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.spark.name = org.apache.spark
logger.spark.level = fatal
logger.hadoop.name = org.apache.hadoop
logger.hadoop.level = fatal
"""


LOCAL_DRIVER_MEMORY = "4g"  # 1 GiB (Spark's default) lost a 10^7-event --state check's task results
C1_ONLY_EVENTS = 5_000_000  # measured: benchmarks/README.md, "Session 7"


TASK_ATTEMPTS = 4  # tries of a failed task before the check fails: a cluster's default (spark.task.maxFailures)
ATTEMPTS_ENV = "HACONFORM_TASK_ATTEMPTS"


def task_attempts(given: int | None = None) -> int | None:
    """The task attempts asked for: `given` (the CLI's `--task-attempts`), else `HACONFORM_TASK_ATTEMPTS`, else
    None (the default: `TASK_ATTEMPTS` locally, the cluster's own setting elsewhere)."""
    if given is None:
        text = os.environ.get(ATTEMPTS_ENV, "").strip()
        if not text:
            return None
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{ATTEMPTS_ENV}={text!r}: expected a whole number of attempts, at least 1")
        given = int(text)
    if given < 1:
        raise ValueError(f"task attempts: {given}, expected at least 1")
    return given


def with_attempts(master: str, attempts: int) -> str:
    """A local master string that tries each task `attempts` times (`local[N,F]`); one that names its own F,
    and any other master, unchanged."""
    found = re.fullmatch(r"local(?:\[(\d+|\*)\])?", master.strip())
    if found is None:
        return master
    return f"local[{found.group(1) or 1},{attempts}]"


def fixed_file(name: str, text: str) -> Path:
    """A file of the JVM's settings holding `text`, in the temporary directory: written (atomically: two checks
    starting at once may both write it) only when it is missing or holds something else."""
    path = Path(os.environ.get("TMPDIR", "/tmp")) / name
    if not path.exists() or path.read_text() != text:
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text)
        tmp.replace(path)
    return path


def _log4j_file() -> Path:
    return fixed_file("haconform-log4j2.properties", _LOG4J)


def _configured_python() -> str | None:
    """`spark.pyspark.python` from spark-defaults.conf, if set there. (Under spark-submit, a
    `--conf spark.pyspark.python=...` already reaches this process as PYSPARK_PYTHON.)"""
    conf_dir = os.environ.get("SPARK_CONF_DIR") or (
        os.path.join(os.environ["SPARK_HOME"], "conf") if os.environ.get("SPARK_HOME") else None
    )
    if not conf_dir or not os.path.isfile(os.path.join(conf_dir, "spark-defaults.conf")):
        return None
    with open(os.path.join(conf_dir, "spark-defaults.conf"), encoding="utf-8", errors="replace") as handle:
        for line in handle:
            parts = re.split(r"\s*=\s*|\s+", line.strip(), maxsplit=1)
            if len(parts) == 2 and parts[0] == "spark.pyspark.python" and parts[1]:
                return parts[1]
    return None


def worker_python() -> str:
    """The interpreter the Python workers run: PYSPARK_PYTHON, else `spark.pyspark.python`, else the
    driver's own (pyspark alone would start whatever `python3` is first on PATH)."""
    return os.environ.get("PYSPARK_PYTHON") or _configured_python() or sys.executable


def build_session(
    master: str = "local[2]",
    *,
    app_name: str = "haconform-check",
    partitions: int = 4,
    for_tests: bool = False,
    small: bool = False,
    conf: dict[str, str] | None = None,
    archive: str | None = None,
    events: int | None = None,
    attempts: int | None = None,
):
    """Create (or reuse) the SparkSession. `small` (an input of a few MB; implied by `for_tests`) trades JIT
    and GC throughput for start-up and warm-up time: client JIT only, serial GC, no whole-stage code
    generation (its compile time outweighs the run on small inputs) and no adaptive planning (which splits
    a query into one Spark job per shuffle stage). `conf`: further settings, applied last (the profiler
    turns the UI back on). `archive`: the driver JVM's class-data archive options (default: the archive
    `spark_trace_check.jvm_archive` wrote, when there is a usable one). `events`: the input's size when known;
    below `C1_ONLY_EVENTS` the JVM compiles with its client compiler only: the server compiler's work (10-12
    CPU-s per check on this machine, issue 20's profile) cannot pay for itself on a check that short.
    `attempts`: how many times a failed task is tried (`task_attempts`; see the module)."""
    small = small or for_tests
    from pyspark.sql import SparkSession

    # Python workers import the monitors: make the project importable for them however it was installed.
    root = str(Path(__file__).resolve().parent.parent)
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    python = worker_python()
    os.environ["PYSPARK_PYTHON"] = python  # read by pyspark when it creates the SparkContext
    java_opts = f"-Dlog4j2.configurationFile=file:{_log4j_file()}"
    if small:
        java_opts += " -XX:+UseSerialGC -XX:TieredStopAtLevel=1"
    elif events is not None and events < C1_ONLY_EVENTS:
        java_opts += " -XX:TieredStopAtLevel=1"
    if archive is None:
        archive = java_options()
    driver_opts = f"{java_opts} {archive}".strip()  # the archive is this JVM's; executors elsewhere differ
    attempts = task_attempts(attempts)
    local = master.startswith("local") and not master.startswith("local-cluster")
    if local:
        master = with_attempts(master, attempts or TASK_ATTEMPTS)
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
        # no call-site capture around every DataFrame call (two JVM round trips each, and an IPython import)
        .config("spark.python.sql.dataFrameDebugging.enabled", "false")
        .config("spark.pyspark.python", python)
        .config("spark.driver.extraJavaOptions", driver_opts)
        .config("spark.executor.extraJavaOptions", java_opts)
    )
    if attempts is not None and not local:  # a local scheduler reads F from the master string alone
        builder = builder.config("spark.task.maxFailures", str(attempts))
    if master.startswith("local"):
        builder = builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
        # the engine preloaded in the worker daemon (this process's PYTHONPATH reaches it only locally; a
        # cluster's workers get the code with the job, after their daemon started: pyspark's own daemon)
        builder = builder.config("spark.python.daemon.module", "spark_trace_check.worker_daemon")
        if not small:  # the driver is the executor: task results (incremental state: ~56 B an event) live here
            builder = builder.config("spark.driver.memory", LOCAL_DRIVER_MEMORY)
    if small:
        builder = builder.config("spark.sql.codegen.wholeStage", "false").config("spark.sql.adaptive.enabled", "false")
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


# HotSpot's compiler directive (`jcmd PID Compiler.directives_add FILE`): no method compiled by the server
# compiler from now on; the client compiler's code stays, and so does what the server compiler already built
_NO_SERVER_COMPILER = '[{ match: "*.*", c2: { Exclude: true } }]\n'
_DCMD = "com.sun.management:type=DiagnosticCommand"
NO_SERVER_COMPILER_FILE = "haconform-no-server-compiler.json"


def _diagnostic_command(spark, operation: str, *words: str) -> str:
    """Run one of the driver JVM's diagnostic commands (the `jcmd` commands, through its platform MBean server;
    the call goes through the `MBeanServerConnection` interface, as the server's own class is not exported)."""
    gateway, jvm = spark.sparkContext._gateway, spark.sparkContext._jvm
    lang = jvm.java.lang
    types = gateway.new_array(lang.Class, 4)
    names = ("javax.management.ObjectName", "java.lang.String", "[Ljava.lang.Object;", "[Ljava.lang.String;")
    for i, name in enumerate(names):
        types[i] = lang.Class.forName(name)
    invoke = lang.Class.forName("javax.management.MBeanServerConnection").getMethod("invoke", types)
    args = gateway.new_array(lang.String, len(words))
    for i, word in enumerate(words):
        args[i] = word
    params = gateway.new_array(lang.Object, 1)
    params[0] = args
    signature = gateway.new_array(lang.String, 1)
    signature[0] = "[Ljava.lang.String;"
    call = gateway.new_array(lang.Object, 4)
    call[0], call[1], call[2], call[3] = jvm.javax.management.ObjectName(_DCMD), operation, params, signature
    server = jvm.java.lang.management.ManagementFactory.getPlatformMBeanServer()
    return str(invoke.invoke(server, call))


def directives(spark) -> str:
    """The driver JVM's compiler directives as HotSpot prints them (`Compiler.directives_print`)."""
    return _diagnostic_command(spark, "compilerDirectivesPrint")


@contextmanager
def client_compiler_only(spark) -> Iterator[bool]:
    """The driver JVM compiles with its client compiler only while inside (yields whether that took effect).

    For the units plan (`spark_trace_check.units`), where the JVM moves task results and 8 bytes of hash per
    event but no rows: at 10^7 events the server compiler spent 3.0 of the JVM's 4.8 CPU s there, compiling
    code it then barely ran (benchmarks/README.md, "Session 17"). The JIT tier cannot be chosen when the
    session starts, as the plan is known only after the index job, and the shuffle plan needs the server
    compiler (its JVM took 79.6 CPU s with the client compiler only, 55.9 with both). So the directive is added
    once the units plan is chosen and removed after. A method it kept from the server compiler stays so for
    the life of the JVM (HotSpot marks it), which a session that goes on with other jobs should know. In
    local mode the driver JVM is the executor; on a cluster the executors' JVMs are not changed. A JVM
    without the command (not HotSpot) is left as it is."""
    try:
        path = fixed_file(NO_SERVER_COMPILER_FILE, _NO_SERVER_COMPILER)
        added = _diagnostic_command(spark, "compilerDirectivesAdd", str(path)).startswith("1 compiler directive")
    except (Py4JError, OSError):  # JMX or py4j refused it (not HotSpot), or no temporary file: as before
        added = False
    try:
        yield added
    finally:
        if added:
            with suppress(Py4JError):  # a JVM that died in the body: its own error is the one to see
                _diagnostic_command(spark, "compilerDirectivesRemove")
