"""A class-data archive of the Spark driver's JVM: start-up of a check cut by a third on a small input.

A check of a few thousand events spends most of its wall time in a cold JVM: loading and verifying tens of
thousands of Spark classes while the session starts and the first queries are analysed. The JVM can map
the classes a previous run loaded from a dynamic class-data archive (JDK 13+, `-XX:SharedArchiveFile`)
instead of loading them again. On this project's sample corpus that takes the README's main job from
about 23 s to about 17 s (`benchmarks/README.md`, "README job").

The archive belongs to one JVM and one set of Spark jars, so its file name carries a key of both. It is
written only by `warm()` (`python -m spark_trace_check.jvm_archive`, run by `scripts/install.sh`): a child
process runs a check of the sample corpus with `-XX:ArchiveClassesAtExit` pointing at a temporary file,
a second child runs the same check with that file (an archive the JVM cannot map is a failure there, not
in a user's run), and only then is it renamed into place with a note of its size. A JVM mapping a truncated
archive dies (SIGBUS), so `java_options()` offers the archive only when its size is the noted one; with
no archive, or `HACONFORM_JVM_ARCHIVE=off`, Spark starts as before. The JVM's own CDS messages are turned
off: an archive it cannot use for a benign reason (another classpath) is ignored silently.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

OFF = "off"
_QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.path.isfile(os.path.join(home, "bin", "java")):
        return os.path.realpath(os.path.join(home, "bin", "java"))
    found = shutil.which("java")
    return os.path.realpath(found) if found else None


def _jars() -> Path | None:
    spark_home = os.environ.get("SPARK_HOME")
    if spark_home:
        return Path(spark_home) / "jars"
    try:
        import pyspark
    except ImportError:
        return None
    return Path(pyspark.__file__).resolve().parent / "jars"


def key() -> str | None:
    """A key of the JVM binary and the Spark jars (names, sizes and times); None without either."""
    java, jars = _java(), _jars()
    if java is None or jars is None or not jars.is_dir():
        return None
    digest = hashlib.sha256()
    stat = os.stat(java)
    digest.update(f"{java}\0{stat.st_size}\0{stat.st_mtime_ns}\0{jars.resolve()}\0".encode())
    for jar in sorted(jars.iterdir()):
        s = jar.stat()
        digest.update(f"{jar.name}\0{s.st_size}\0{s.st_mtime_ns}\0".encode())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    base = os.environ.get("HACONFORM_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "haconform"
    )
    return Path(base)


def archive_path() -> Path | None:
    k = key()
    return None if k is None else cache_dir() / f"spark-classes-{k}.jsa"


def _note(path: Path) -> Path:
    return path.with_suffix(".json")


def usable(path: Path) -> bool:
    """The archive exists and has the size noted when it was written and checked (never a partial file)."""
    try:
        note = json.loads(_note(path).read_text(encoding="utf-8"))
        return path.stat().st_size == note["size"] > 0
    except (OSError, ValueError, KeyError, TypeError):
        return False


def java_options() -> str:
    """The driver JVM's options for the archive: map it when usable, else nothing."""
    if os.environ.get("HACONFORM_JVM_ARCHIVE", "").lower() == OFF:
        return ""
    path = archive_path()
    if path is None or not usable(path):
        return ""
    return f"-XX:SharedArchiveFile={path} {_QUIET}"


def _child(option: str, log: Path) -> int:
    """Run the sample check in a child process whose driver JVM gets `option`; its output to `log`."""
    code = (
        "import sys\n"
        "from spark_trace_check.session import build_session\n"
        "from spark_trace_check.job import check\n"
        "from traces.corpus import SAMPLES_DIR\n"
        f"spark = build_session('local[2]', small=True, archive={option!r})\n"
        "outcome = check(spark, [str(SAMPLES_DIR / 'clean')], partitions=2)\n"
        "gateway = spark.sparkContext._gateway\n"
        "spark.stop()\n"
        "gateway.proc.stdin.close()  # the JVM exits on end of input, writing an archive at exit\n"
        "jvm = gateway.proc.wait(timeout=300)\n"
        "sys.exit(0 if outcome.rows_checked > 0 and jvm == 0 else 1)\n"
    )
    root = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with log.open("w", encoding="utf-8") as out:
        return subprocess.run([sys.executable, "-c", code], stdout=out, stderr=out, env=env, check=False).returncode


def warm() -> Path | None:
    """Write the archive (if missing) and check that a JVM maps it; returns its path, None if not possible."""
    path = archive_path()
    if path is None:
        return None
    if usable(path):
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.jsa")
    log = path.with_name(f"{path.stem}.{os.getpid()}.log")
    try:
        if _child(f"-XX:ArchiveClassesAtExit={tmp} {_QUIET}", log) != 0 or not tmp.is_file():
            return None
        if _child(f"-XX:SharedArchiveFile={tmp} -Xshare:on {_QUIET}", log) != 0:
            return None
        size = tmp.stat().st_size
        os.replace(tmp, path)
        note = _note(path).with_suffix(".json.tmp")
        note.write_text(json.dumps({"size": size}), encoding="utf-8")
        os.replace(note, _note(path))
        return path
    finally:
        tmp.unlink(missing_ok=True)
        if usable(path):
            log.unlink(missing_ok=True)


def main() -> int:
    path = warm()
    if path is None:
        print("jvm archive: not written (no java or Spark jars found, or the JVM refused it)", file=sys.stderr)
        return 0  # Spark starts without it: slower, not wrong
    print(f"jvm archive: {path} ({path.stat().st_size // 2**20} MiB)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
