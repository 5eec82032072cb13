"""`haconform conform` names, on every run, the rules the reference model exercised on the same inputs that the
system under test never exercised over the whole budget (`conformance.harness.floor`, issue 29): one line per
rule with its requirement ID on the terminal, and `coverage_floor.missing` / `missing_rules` in the JSON report.

The fake system is the model with its end-of-run SNAPSHOT records withheld (they are optional: without them a
message is judged for safety only): the liveness rules (no-loss SR-075, shadow-released SR-057) are never
exercised on its records, though the model exercises them on the same inputs. It still passes: the list is
information, not a verdict. (A fake that withholds REJECT records no longer passes: since issue 30 a sender's
session neither answered nor timed out by the trace's end breaks SR-039.) Twin: the model
against itself names none. The search is bounded by its number of runs (a profile of 20 examples, derandomized),
not by time, so the runs and their inputs are the same on any machine."""

from __future__ import annotations

import importlib
import json
import re
from typing import Any

import pytest

import conformance.cli.replay as replay_cli
import conformance.cli.suite as suite_cli
from conformance.cli import main
from conformance.harness.sr import DRIVER

search_module = importlib.import_module("conformance.harness.search")  # the package re-exports `search`
FAKE = "no-snapshot-records"

pytestmark = pytest.mark.model


class NoSnapshotRecords:
    """The model, its SNAPSHOT events withheld from what it records."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def events(self) -> list[Any]:
        return [e for e in self.inner.events() if e.kind != "SNAPSHOT"]


@pytest.fixture(autouse=True)
def bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    profile = search_module.Profile("quick", max_examples=20, steps=20, budget_s=300.0)
    monkeypatch.setitem(search_module.PROFILES, "quick", profile)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> None:
    model = DRIVER.model_factory()

    def factory(mechanism: str, sut: str | None, timeout_s: float) -> Any:
        return (lambda setup: NoSnapshotRecords(model(setup))) if sut == FAKE else None

    monkeypatch.setattr(replay_cli, "sut_factory", factory)
    monkeypatch.setattr(suite_cli, "_preflight", lambda *args: "")


def _conform(tmp_path, capsys, *args: str) -> tuple[int, str]:
    code = main(["conform", "sr", *args, "--replay-out", str(tmp_path / "replay.json")])
    return code, capsys.readouterr().out


@pytest.mark.usefixtures("fake")
def test_a_rule_the_system_never_exercised_is_named_on_the_terminal_and_in_the_json(tmp_path, capsys) -> None:
    code, text = _conform(tmp_path, capsys, "--sut", FAKE)
    assert code == 0 and text.startswith(f"PASS sr: {FAKE} passed"), text
    assert f"rule(s) the model exercised that {FAKE} never did:" in text
    assert re.search(r"^  no-loss +SR-075$", text, re.M), text
    code, out = _conform(tmp_path, capsys, "--sut", FAKE, "--json")
    floor = json.loads(out)["coverage_floor"]
    assert code == 0 and "no-loss" in floor["missing"]
    assert {"rule": "no-loss", "requirement": "SR-075"} in floor["missing_rules"]
    assert [m["rule"] for m in floor["missing_rules"]] == floor["missing"]


def test_twin_the_model_against_itself_names_none(tmp_path, capsys) -> None:
    code, text = _conform(tmp_path, capsys)
    assert code == 0 and "none missing, the reference model exercised every rule the model did" in text, text
    code, out = _conform(tmp_path, capsys, "--json")
    floor = json.loads(out)["coverage_floor"]
    assert code == 0 and floor["missing"] == [] and floor["missing_rules"] == [] and floor["reference_runs"] > 0
