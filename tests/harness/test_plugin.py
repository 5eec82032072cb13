"""The pytest plugin: an implementer's CI runs the suite with --haconform-sut and gets JUnit XML."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]
ROOT = Path(__file__).resolve().parents[2]


def _plugin_args() -> list[str]:
    """Load the plugin by module only when the installed `pytest11` entry point does not already load it
    (naming it twice is an error: "Plugin already registered under a different name")."""
    from importlib.metadata import distributions

    # every distribution on the path, not only the first of each name: a stale `*.egg-info` in the working
    # directory can shadow the installed one in `entry_points()` while pytest's own child still loads it
    installed = any(
        ep.group == "pytest11" and ep.name == "haconform" for dist in distributions() for ep in dist.entry_points
    )
    return [] if installed else ["-p", "conformance.harness.plugin"]


@pytest.mark.model
def test_plugin_adds_a_conformance_item_and_reports_a_failure(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    sut = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'sr_node.py'}"
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    ok = pytester.runpytest_subprocess(
        *_plugin_args(),
        f"--haconform-sut={sut}",
        "--haconform-mechanism=sr",
        "--haconform-budget=6",
        "--junitxml=ok.xml",
    )
    ok.assert_outcomes(passed=1)
    assert 'name="haconform-conform[sr]"' in (pytester.path / "ok.xml").read_text()
    bad = pytester.runpytest_subprocess(
        *_plugin_args(),
        f"--haconform-sut={sut} --bug ack-before-shadow",
        "--haconform-mechanism=sr",
        "--haconform-budget=20",
        "--junitxml=bad.xml",
    )
    bad.assert_outcomes(failed=1)
    assert "shadow-before-ack" in bad.stdout.str() and "SR-031" in bad.stdout.str()
    assert "<failure" in (pytester.path / "bad.xml").read_text()
    assert (pytester.path / "haconform-replay-sr.json").exists()


def test_plugin_adds_nothing_without_a_system(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makepyfile("def test_x(): pass")
    res = pytester.runpytest_subprocess(*_plugin_args())
    res.assert_outcomes(passed=1)


@pytest.mark.model
def test_fixture_runs_the_suite_from_a_test(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    sut = ROOT / "examples" / "sut" / "am_node.py"
    pytester.makepyfile(f"""
        import sys
        def test_my_am(haconform_conform):
            haconform_conform("am", sys.executable + " {sut}", budget=6)
        def test_my_buggy_am(haconform_conform):
            haconform_conform("am", sys.executable + " {sut} --bug keep-pam-in-minority", budget=30)
    """)
    res = pytester.runpytest_subprocess(*_plugin_args())
    res.assert_outcomes(passed=1, failed=1)
    assert "single-pam" in res.stdout.str()
