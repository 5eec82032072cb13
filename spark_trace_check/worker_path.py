"""Which pyspark the Spark check's Python worker daemon imports: the installed one when it is the same version as
Spark's archive (issue 32, session 17).

Spark starts the worker daemon (`spark_trace_check.worker_daemon`) with its own archives first on `PYTHONPATH`
(`<SPARK_HOME>/python/lib/pyspark.zip` and `py4j-<version>-src.zip`), so the daemon imports pyspark and py4j from
zip files: no compiled bytecode is kept there, and every module is compiled from source again by every check.
Measured in session 16: the preload took 0.88-0.91 CPU s from the zip against 0.56-0.58 from site-packages, on
the path of every Spark check's first task.

`prefer_installed` moves such an archive to the end of `sys.path` when the same package is installed on a
directory of the path with the same `__version__` (read from each copy's `version.py` as text, neither imported):
pip's pyspark carries Spark's own `pyspark.zip`, whose modules the installed package holds byte for byte (4.3.0:
all but the zip's tests and a streaming benchmark). A different version (a `SPARK_HOME` of another Spark), an
archive or an installed copy without a readable version, or no installed copy at all: the archive stays where
Spark put it, as before. Tests: tests/spark/test_worker_path.py (a worker's pyspark not from a zip; the twins
keep the archive).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

# the packages Spark ships as archives, by the archive's file name
ARCHIVES: dict[str, re.Pattern[str]] = {
    "pyspark": re.compile(r"pyspark\.zip"),
    "py4j": re.compile(r"py4j-[0-9][^/]*-src\.zip"),
}
_VERSION = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE)


def version_in(text: str) -> str | None:
    """The `__version__` a package's `version.py` assigns (`__version__: str = '4.3.0'`), or None."""
    found = _VERSION.search(text)
    return found.group(1) if found else None


def archive_version(archive: Path, package: str) -> str | None:
    """The version of `package` in a zip archive (its `package/version.py`), or None when it has none."""
    try:
        with zipfile.ZipFile(archive) as z:
            return version_in(z.read(f"{package}/version.py").decode("utf-8"))
    except (OSError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
        return None


def installed_version(entries: list[str], package: str) -> str | None:
    """The version of the first `package` found in a directory of `entries` (as the import system would find it
    there: a package directory with `__init__.py`), or None when there is none or it has no readable version."""
    for entry in entries:
        directory = Path(entry or ".") / package
        if (directory / "__init__.py").is_file():
            try:
                return version_in((directory / "version.py").read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                return None
    return None


def prefer_installed(path: list[str]) -> list[str]:
    """Move each of Spark's archives (`ARCHIVES`) whose package is installed on a directory of `path` at the same
    version to the end of `path` (changed in place, `sys.path`); the archives moved (see the module)."""
    moved = []
    for package, name in ARCHIVES.items():
        for entry in list(path):
            if not name.fullmatch(Path(entry).name):
                continue
            directories = [p for p in path if not p.endswith(".zip")]
            ours = archive_version(Path(entry), package)
            if ours is not None and installed_version(directories, package) == ours:
                path.remove(entry)
                path.append(entry)
                moved.append(entry)
    return moved
