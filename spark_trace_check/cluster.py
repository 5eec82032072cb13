"""Any Spark master: ship the project's code with the job, and a standalone cluster for tests and benchmarks.

Workers of a real cluster need only pyspark, pyarrow and the declared dependencies: `ship_code` packs each
of the project's packages (code and data files such as the requirement catalogue) into a zip and adds it
with `SparkContext.addArchive("<zip>#<package>")`, which unpacks it into every executor's working
directory, the first entry of a PySpark worker's `sys.path` (verified on a standalone master, pyspark 4).

`Standalone` starts a master and N one-core workers from the pip package alone (FIELD-NOTES, "Standalone
cluster": `spark-class ...Master` / `...Worker`, SPARK_LOCAL_IP=127.0.0.1), waits until every worker has
registered, and stops each process by its pid.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("spec", "model", "conformance", "traces", "spark_trace_check")
ROOT = Path(__file__).resolve().parent.parent
_SKIP_PARTS = {"__pycache__", "samples"}
_SHIPPED: set[str] = set()  # application IDs that already have the code


def code_archives(directory: Path, root: Path = ROOT) -> list[Path]:
    """One zip per package, holding the package's files relative to the package directory."""
    out = []
    for pkg in PACKAGES:
        path = directory / f"{pkg}.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
            for f in sorted((root / pkg).rglob("*")):
                if f.is_file() and not _SKIP_PARTS.intersection(f.relative_to(root).parts):
                    zf.write(f, f.relative_to(root / pkg))
        out.append(path)
    return out


def is_local(master: str) -> bool:
    return master.startswith("local")


def ship_code(spark) -> bool:
    """Add the project's packages to a non-local session once; False when the master is local (no need)."""
    sc = spark.sparkContext
    if is_local(sc.master) or sc.applicationId in _SHIPPED:
        return False
    for path in code_archives(Path(tempfile.mkdtemp(prefix="haconform-code-"))):
        sc.addArchive(f"{path}#{path.stem}")
    _SHIPPED.add(sc.applicationId)
    return True


def spark_home() -> str:
    import pyspark

    return os.environ.get("SPARK_HOME") or str(Path(pyspark.__file__).resolve().parent)


@dataclass
class Standalone:
    """A standalone master and `workers` one-core workers on 127.0.0.1, for tests and benchmarks."""

    workers: int = 2
    port: int = 17077
    memory: str = "2g"
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="haconform-cluster-")))
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, *args: str) -> subprocess.Popen:
        env = {**os.environ, "SPARK_HOME": spark_home(), "SPARK_LOCAL_IP": "127.0.0.1"}
        log = (self.workdir / f"{name}.log").open("wb")
        cmd = [str(Path(spark_home()) / "bin" / "spark-class"), *args]
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.procs.append(proc)
        return proc

    def start(self, timeout_s: float = 120) -> Standalone:
        self._start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--webui-port",
            str(self.port + 1000),
        )
        for i in range(self.workers):
            self._start(
                f"worker{i}",
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "1",
                "--memory",
                self.memory,
                "--webui-port",
                str(self.port + 1001 + i),
                "--work-dir",
                str(self.workdir / f"w{i}"),
                self.url,
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:  # wall clock: waiting for real processes, not model time
            log = (self.workdir / "master.log").read_text(errors="replace")
            if log.count("Registering worker") >= self.workers:
                return self
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"standalone cluster did not start; logs in {self.workdir}")

    def stop(self) -> None:
        for proc in reversed(self.procs):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.procs.clear()

    def __enter__(self) -> Standalone:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
