"""`prove` prints the table or JSON and exits 1 when a verdict differs from its expectation."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from spec.claims import registry
from spec.claims.cli import main


@pytest.mark.unit
def test_prove_table_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove"]) == 0
    out = capsys.readouterr().out
    assert "pf.status_message_36h" in out and "PF-030" in out and "claims as expected" in out
    assert main(["prove", "--json", "--only", "sr.same_db"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["claim"] for r in rows} == {"sr.same_db_delay.as_stated", "sr.same_db_delay.repaired"}
    stated = next(r for r in rows if r["claim"].endswith("as_stated"))
    assert stated["got"] == "refuted" and stated["counterexample"]["delay"].startswith("3h")


@pytest.mark.unit
def test_prove_exits_1_when_a_verdict_differs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = registry.all_claims()
    wrong = replace(claims[0], expected="refuted")  # a claim that is proved, expected the other way
    monkeypatch.setattr(registry, "all_claims", lambda: [wrong])
    assert main(["prove"]) == 1
    assert "DIFFERS" in capsys.readouterr().out


@pytest.mark.unit
def test_haconform_cli_picks_up_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from conformance.cli import main as haconform

    assert haconform(["prove", "--only", "am."]) == 0
    assert "am.dial.monotone" in capsys.readouterr().out


@pytest.mark.unit
def test_registering_imports_nothing_that_could_break_the_cli() -> None:
    import subprocess
    import sys

    code = "import sys, spec.claims.cli; print(sorted(m for m in sys.modules if m.startswith('spec.claims')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['spec.claims', 'spec.claims.cli']"
