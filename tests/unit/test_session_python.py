"""Which interpreter the Spark Python workers run: the user's choice (PYSPARK_PYTHON, spark.pyspark.python in
spark-defaults.conf), else the driver's own, never whatever `python3` comes first on PATH."""

from __future__ import annotations

import sys

import pytest

from spark_trace_check.session import worker_python

pytestmark = pytest.mark.unit


def test_default_is_the_driver_interpreter(monkeypatch):
    for name in ("PYSPARK_PYTHON", "SPARK_CONF_DIR", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    assert worker_python() == sys.executable


def test_the_users_choice_wins(monkeypatch, tmp_path):
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    (tmp_path / "spark-defaults.conf").write_text("# comment\nspark.pyspark.python   /opt/py/bin/python3\n")
    assert worker_python() == "/opt/py/bin/python3"
    (tmp_path / "spark-defaults.conf").write_text("spark.pyspark.python=/other/python\n")
    assert worker_python() == "/other/python"
    monkeypatch.setenv("PYSPARK_PYTHON", "/env/python")
    assert worker_python() == "/env/python"
