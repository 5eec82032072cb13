"""Shared test configuration: Hypothesis profiles and the session-scoped local Spark fixture.

Profiles (choose with HYPOTHESIS_PROFILE): `default`, the gate (derandomised, no example database: the same
examples on every machine, so a run on a fresh clone judges what a local run judged), `ci` (the same, and
the failing example's blob printed; loaded automatically when the CI variable is set), `explore` (random
seeds, the example database: for finding new bugs, as `tests/sr/test_safetynet_after_outage.py` was found),
`deep` for long random searches.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

_BASE = {"max_examples": 25, "stateful_step_count": 30, "deadline": None}
_QUIET = {"suppress_health_check": [HealthCheck.too_slow]}
_FIXED = {"derandomize": True, "database": None}  # the same examples every run, nothing remembered
settings.register_profile("default", **_BASE, **_FIXED, **_QUIET)
settings.register_profile("explore", **_BASE, **_QUIET)  # random search (haconform explore)
settings.register_profile("ci", **_BASE, **_FIXED, print_blob=True, **_QUIET)
settings.register_profile("deep", max_examples=1000, stateful_step_count=100, deadline=None, **_QUIET)
_profile = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if "CI" in os.environ else "default")
settings.load_profile(_profile)

# The optional compiled path (traces/fastpath.py): the test process and everything it starts (CLI
# subprocesses, Spark's Python workers) run the pure modules, because tests patch module attributes and
# builtins that a compiled module binds at import; `python3 -m pytest -m fast` compares the two paths, its
# subprocesses started without this variable.
if not os.environ.get("HACONFORM_FAST_IN_TESTS"):
    os.environ.setdefault("HACONFORM_PURE", "1")


@pytest.fixture(scope="session")
def spark():
    """One quiet local Spark session for the whole test run."""
    from spark_trace_check.session import build_session

    session = build_session("local[2]", app_name="haconform-tests", for_tests=True)
    yield session
    session.stop()


@pytest.fixture(params=["units", "shuffle"])
def spark_plan(request, monkeypatch):
    """Run a Spark test under both plans of the Spark job (`spark_trace_check.job.check`): the units of whole
    traces read by the tasks, and one shuffle of every row by trace."""
    import spark_trace_check.job as job  # pyspark: loaded only by Spark tests

    monkeypatch.setattr(job, "PLAN", request.param)
    return request.param
