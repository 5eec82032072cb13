"""The check on a real standalone cluster (issue 10): a master and two one-core workers from the pip package,
the job submitted with `spark-submit`, the project's code shipped with the job, every process stopped by pid.

Marked `cluster` and `slow` (about a minute): `python3 -m pytest -m cluster`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from spark_trace_check.cluster import Standalone, code_archives, spark_home
from traces.corpus import SAMPLES_DIR

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]


def test_code_archives_hold_each_package_and_its_data(tmp_path):
    import zipfile

    archives = {p.stem: p for p in code_archives(tmp_path)}
    assert set(archives) == {"spec", "model", "conformance", "traces", "spark_trace_check"}
    names = set(zipfile.ZipFile(archives["spec"]).namelist())
    assert "catalogue.py" in names and any(n.startswith("requirements/") and n.endswith(".toml") for n in names)
    assert not any("__pycache__" in n for n in zipfile.ZipFile(archives["model"]).namelist())


def test_check_runs_on_a_standalone_cluster_through_spark_submit(tmp_path):
    out = tmp_path / "out"
    with Standalone(workers=2, port=17177) as cluster:
        env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
        cmd = [
            str(Path(spark_home()) / "bin" / "spark-submit"),
            "--master",
            cluster.url,
            str(ROOT / "conformance" / "__main__.py"),
            "check",
            str(SAMPLES_DIR / "clean"),
            "--master",
            cluster.url,
            "--out",
            str(out),
            "--quiet",
        ]
        done = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        shipped = _worker_import_paths(cluster.url)
        pids = [p.pid for p in cluster.procs]
    assert shipped and all(path.startswith(str(cluster.workdir)) for path in shipped), shipped
    summary = json.loads((out / "summary.json").read_text())
    assert summary["verdict"] == "valid" and summary["rows_checked"] > 0
    assert summary["counts_reconcile"]
    for pid in pids:  # stopped by pid
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def _worker_import_paths(url: str) -> list[str]:
    """Where the workers import the project from, after `ship_code` (their work directories, not this checkout)."""
    from spark_trace_check.cluster import ship_code
    from spark_trace_check.session import build_session

    spark = build_session(url, app_name="haconform-ship-probe", partitions=2)
    try:
        assert ship_code(spark) and not ship_code(spark)  # shipped once per application

        def where(_: object) -> list[str]:
            import model.registry
            import spec.catalogue

            spec.catalogue.catalogue()
            return [spec.catalogue.__file__, model.registry.__file__]

        return spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()
    finally:
        spark.stop()
