"""The check's Python worker daemon loads pyarrow without pandas (`traces.arrow_start`, issue 32, session 28).

`spark`: a task of the check's session reports that its worker (forked from `spark_trace_check.worker_daemon`) has
pyarrow loaded and pandas not. `unit` (a process of its own each): the daemon's imports leave pandas unloaded,
and a conversion to pandas still works after them (pandas imported then); the twin loads pyarrow before the
daemon's imports, so the hook cannot ask first, and the same imports load pandas: the check above can fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _loaded() -> dict[str, bool]:
    return {"pandas": "pandas" in sys.modules, "pyarrow": "pyarrow" in sys.modules}


@pytest.mark.spark
def test_the_workers_have_no_pandas(spark) -> None:
    (seen,) = spark.sparkContext.parallelize([0], 1).map(lambda _: _loaded()).collect()
    assert seen == {"pandas": False, "pyarrow": True}


_IMPORTS = """
import json, sys
{first}
import spark_trace_check.worker_daemon
after = {{"pandas": "pandas" in sys.modules, "pyarrow": "pyarrow" in sys.modules}}
import pyarrow as pa
frame = pa.table({{"a": [1, 2]}}).to_pandas()  # a conversion to pandas still imports it
print(json.dumps({{"after": after, "rows": len(frame), "pandas_then": "pandas" in sys.modules}}))
"""


def _run(first: str) -> dict:
    code = _IMPORTS.format(first=first)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.unit
def test_the_daemons_imports_leave_pandas_out() -> None:
    seen = _run("")
    assert seen["after"] == {"pandas": False, "pyarrow": True}
    assert seen["rows"] == 2 and seen["pandas_then"]


@pytest.mark.unit
def test_twin_pyarrow_loaded_first_brings_pandas() -> None:
    seen = _run("import pyarrow")
    assert seen["after"] == {"pandas": True, "pyarrow": True}
