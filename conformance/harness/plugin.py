"""The pytest plugin (entry point `pytest11`: haconform): the conformance suite inside an implementer's CI.

    pytest --haconform-sut="./my-transport --stdio" --haconform-mechanism=sr --junitxml=conform.xml

adds one test item per mechanism (`haconform-conform[sr]`) that runs `haconform conform` against the
command; a failure shows the seed, the shrunk steps, the rule with its requirement and seed section, and
writes a replay file (`--haconform-replay-dir`). JUnit XML comes from pytest's own `--junitxml`. Without
`--haconform-sut` the plugin adds nothing; the fixture `haconform_conform` runs the same search from a
test of one's own: `haconform_conform("am", "python am_node.py")` fails the test on a violation.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conformance.harness.failure import describe_failure
from conformance.harness.floor import not_a_pass
from conformance.harness.report import failure_json, write_json_atomic
from conformance.harness.search import MECHANISMS, PROFILES, search
from conformance.harness.systems import process_factory


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("haconform", "haconform conformance suite")
    group.addoption("--haconform-sut", help="command starting the system under test (stdio protocol)")
    group.addoption(
        "--haconform-mechanism",
        action="append",
        choices=MECHANISMS,
        help="mechanism to check (repeatable; default: all three)",
    )
    group.addoption("--haconform-profile", choices=sorted(PROFILES), default="quick")
    group.addoption("--haconform-budget", type=float, help="seconds of search per mechanism")
    group.addoption("--haconform-timeout", type=float, default=10.0, help="seconds to wait for one reply")
    group.addoption("--haconform-replay-dir", default=".", help="where failing runs' replay files go")


def _run(mechanism: str, sut: str | None, profile: str, budget: float | None, timeout: float, replay_dir: Path) -> str:
    """'' when the system passes; else the failure text (a replay file has been written)."""

    factory = process_factory(mechanism, sut, timeout) if sut else None
    out = search(mechanism, factory, profile, budget, keep_traces=12)
    if out.error:
        return f"the run stopped on an error that is not a verdict: {out.error}" + (
            f"\n{out.traceback}" if out.traceback else ""
        )
    if out.failure is None:  # unjudged runs, or a system below the coverage floor, are no pass either
        return not_a_pass(mechanism, out, sut)
    path = replay_dir / f"haconform-replay-{mechanism}.json"
    write_json_atomic(path, failure_json(out.failure, sut))
    text = describe_failure(out.failure, f"{path} --sut {sut!r}" if sut else path)
    return text + (f"\n{out.minimised.text()}" if out.minimised is not None else "")


class ConformanceFailure(Exception):
    pass


class ConformanceItem(pytest.Item):
    def __init__(self, *, mechanism: str, **kw: Any) -> None:
        super().__init__(**kw)
        self.mechanism = mechanism

    def runtest(self) -> None:
        opt = self.config.getoption
        text = _run(
            self.mechanism,
            opt("haconform_sut"),
            opt("haconform_profile"),
            opt("haconform_budget"),
            opt("haconform_timeout"),
            Path(opt("haconform_replay_dir")),
        )
        if text:
            raise ConformanceFailure(text)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, ConformanceFailure):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        return "haconform", None, f"haconform conform {self.mechanism}"


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("haconform_sut"):
        return
    for m in config.getoption("haconform_mechanism") or MECHANISMS:
        items.append(ConformanceItem.from_parent(session, name=f"haconform-conform[{m}]", mechanism=m))


@pytest.fixture
def haconform_conform(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[..., None]:
    """`haconform_conform(mechanism, sut=None, profile="quick", budget=None)`: fail the test on a violation."""

    def run(
        mechanism: str,
        sut: str | None = None,
        profile: str = "quick",
        budget: float | None = None,
        timeout: float = 10.0,
    ) -> None:
        text = _run(mechanism, sut, profile, budget, timeout, tmp_path)
        if text:
            pytest.fail(text, pytrace=False)

    return run
