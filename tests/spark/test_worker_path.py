"""The Spark check's Python workers import the installed pyspark and py4j, not Spark's zip archives of them, when
the versions are the same (`spark_trace_check.worker_path`, issue 32, session 17).

`spark`: a task of the check's session reports the files its worker's pyspark, `pyspark.worker` and py4j were
loaded from: none is in a zip (it fails while the daemon imports them from Spark's `pyspark.zip`), and the worker
runs the version the driver does. Its twin (a session of its own in a subprocess): with pyspark's own daemon
(`spark.python.daemon.module` = `pyspark.daemon`, which keeps Spark's path) the same report names the zip. `unit`:
`prefer_installed` on a made-up path (archives and installed copies in a temporary directory) moves the archives
behind the installed copies of the same version; the twins keep the archive first: another version installed,
none installed, an archive or installed copy without a readable version.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from spark_trace_check.worker_path import prefer_installed, version_in


def _where() -> dict[str, str]:
    """What a worker imported pyspark, its worker module and py4j from, and pyspark's version."""
    import py4j
    import pyspark

    return {
        "pyspark": pyspark.__file__,
        "worker": sys.modules["pyspark.worker"].__file__,
        "py4j": py4j.__file__,
        "version": pyspark.__version__,
    }


@pytest.mark.spark
def test_the_workers_import_the_installed_pyspark(spark) -> None:
    import pyspark

    (seen,) = spark.sparkContext.parallelize([0], 1).map(lambda _: _where()).collect()
    assert seen["version"] == pyspark.__version__
    for name in ("pyspark", "worker", "py4j"):
        assert ".zip" not in seen[name], f"the worker's {name} came from Spark's archive: {seen[name]}"


_TWIN = """
import json
from spark_trace_check.session import build_session
from tests.spark.test_worker_path import _where
spark = build_session("local[1]", for_tests=True, conf={"spark.python.daemon.module": "pyspark.daemon"})
print(json.dumps(spark.sparkContext.parallelize([0], 1).map(lambda _: _where()).collect()[0]))
spark.stop()
"""


@pytest.mark.spark
def test_twin_pysparks_own_daemon_imports_the_zip() -> None:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _TWIN], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["pyspark"].endswith("pyspark.zip/pyspark/__init__.py") and ".zip" in seen["worker"]


def _archive(where: Path, name: str, package: str, version: str | None) -> str:
    path = where / name
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{package}/__init__.py", "")
        if version is not None:
            z.writestr(f"{package}/version.py", f"__version__: str = '{version}'\n")
    return str(path)


def _installed(where: Path, package: str, version: str | None) -> str:
    (where / package).mkdir(parents=True)
    (where / package / "__init__.py").write_text("")
    if version is not None:
        (where / package / "version.py").write_text(f'__version__ = "{version}"\n')
    return str(where)


def _path(tmp: Path, zipped: str | None, installed: str | None) -> list[str]:
    """[pyspark.zip, py4j zip, the project, site-packages] as Spark gives the daemon, the versions as given."""
    spark = tmp / "lib"
    spark.mkdir()
    project = tmp / "project"
    project.mkdir()
    site = tmp / "site"
    site.mkdir()
    return [
        _archive(spark, "pyspark.zip", "pyspark", zipped),
        _archive(spark, "py4j-0.10.9.9-src.zip", "py4j", "0.10.9.9"),
        str(project),
        _installed(site, "pyspark", installed) if installed != "none" else str(site),
    ]


@pytest.mark.unit
def test_the_archives_go_behind_the_same_versions_installed(tmp_path: Path) -> None:
    path = _path(tmp_path, "4.3.0", "4.3.0")
    _installed(tmp_path / "site", "py4j", "0.10.9.9")
    zips = path[:2]
    assert prefer_installed(path) == zips and path[-2:] == zips and path[0].endswith("project")


@pytest.mark.unit
@pytest.mark.parametrize(
    ("zipped", "installed"),
    [("4.3.0", "4.2.1"), ("4.3.0", "none"), (None, "4.3.0"), ("4.3.0", None)],
    ids=["another-version", "not-installed", "archive-unversioned", "installed-unversioned"],
)
def test_twin_the_archive_stays_first(tmp_path: Path, zipped: str | None, installed: str | None) -> None:
    path = _path(tmp_path, zipped, installed)
    before = list(path)
    assert prefer_installed(path) == [] and path == before  # py4j is not installed here either


@pytest.mark.unit
def test_versions_are_read_in_both_spellings() -> None:
    assert version_in("__version__: str = '4.3.0'\n") == "4.3.0"
    assert version_in('x = 1\n__version__ = "0.10.9.9"\n') == "0.10.9.9"
    assert version_in("version = '1'\n") is None
