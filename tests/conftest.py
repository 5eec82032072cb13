"""Shared test configuration: Hypothesis profiles and the session-scoped local Spark fixture.

Profiles (choose with HYPOTHESIS_PROFILE): `default` for a quick local run, `ci` (derandomised, no
example database; loaded automatically when the CI variable is set), `deep` for long searches.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "ci",
    max_examples=25,
    stateful_step_count=30,
    deadline=None,
    derandomize=True,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep",
    max_examples=1000,
    stateful_step_count=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
_profile = os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if "CI" in os.environ else "default")
settings.load_profile(_profile)


@pytest.fixture(scope="session")
def spark():
    """One quiet local Spark session for the whole test run."""
    from spark_trace_check.session import build_session

    session = build_session("local[2]", app_name="haconform-tests", for_tests=True)
    yield session
    session.stop()
