"""validate-config: the seeds' defaults are valid, every broken constraint is named, bad input is an error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec.claims.cli import main
from spec.claims.config import CONSTRAINTS, ConfigError, check_config

# One configuration per error constraint that breaks it (and only it, from the defaults).
BREAKERS = {
    "sr.receive_connector_timeouts.mailbox": {"ReceiveConnectionInactivityTimeoutMailbox": 10},
    "sr.receive_connector_timeouts.frontend": {"ReceiveConnectionTimeoutFrontEnd": "4min"},
    "sr.receive_connector_timeouts.edge": {"ReceiveConnectionInactivityTimeoutEdge": "00:05:00"},
    "bf.timeout_ladder.local": {"BackfillFirstRetryLocal": 6},
    "bf.timeout_ladder.remote": {"BackfillLaterRetryRemote": "1d"},
    "sr.heartbeat_below_resubmit": {"ShadowHeartbeatFrequency": 180},
    "sr.discard_events_outlive_decision": {"ShadowMessageAutoDiscardInterval": "3h"},
    "sr.promote_before_safety_net_expiry": {"SafetyNetHoldTime": 0.1},
    "bf.check_period_below_timeouts": {"ReplicationTimeout": 20},
    "pf.status_thread_offset_within_period": {
        "ReplicationStatusThreadOffset": 720,
        "ReplicationStatusThreadPeriod": 12,
    },
    "am.dial_thresholds_ordered": {"DialGoodAvailabilityMaxLogs": 13},
}


@pytest.mark.unit
def test_defaults_are_valid_without_warnings() -> None:
    report = check_config({})
    assert report.valid and not report.warnings
    assert report.checked > len(BREAKERS)


@pytest.mark.unit
def test_every_error_constraint_has_a_breaker() -> None:
    errors = {c.name for c in CONSTRAINTS if c.severity == "error"}
    assert errors == set(BREAKERS)


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(BREAKERS))
def test_each_broken_constraint_is_named(name: str) -> None:
    report = check_config(BREAKERS[name])
    assert [c.name for c, _ in report.violated] == [name]
    words = report.violated[0][1]
    assert "{" not in words and len(words) > 30


@pytest.mark.unit
def test_several_broken_constraints_are_all_named() -> None:
    report = check_config(
        {
            "ReceiveConnectionInactivityTimeoutMailbox": 10,
            "DialGoodAvailabilityMaxLogs": 13,
            "ShadowHeartbeatFrequency": 3000,
        }
    )
    names = {c.name for c, _ in report.violated}
    assert {
        "sr.receive_connector_timeouts.mailbox",
        "am.dial_thresholds_ordered",
        "sr.heartbeat_below_resubmit",
        "range.ShadowHeartbeatFrequency",
    } <= names


@pytest.mark.unit
def test_out_of_range_value_is_named() -> None:
    report = check_config({"MaxRetriesForRemoteSiteShadow": 300})
    assert [c.name for c, _ in report.violated] == ["range.MaxRetriesForRemoteSiteShadow"]


@pytest.mark.unit
def test_warnings_do_not_fail() -> None:
    report = check_config(
        {
            "RejectMessageOnShadowFailure": True,
            "ShadowRedundancyEnabled": False,
            "ShadowMessagePreference": "RemoteOnly",
            "MaxRetriesForRemoteSiteShadow": 0,
        }
    )
    assert report.valid
    assert {c.name for c, _ in report.warnings} == {
        "sr.reject_needs_shadow_redundancy",
        "sr.shadow_attempts_possible",
    }


@pytest.mark.unit
@pytest.mark.parametrize(
    "settings, fragment",
    [
        ({"NoSuchParameter": 1}, "unknown parameter 'NoSuchParameter'"),
        ({"ShadowHeartbeatFrequency": "soon"}, "ShadowHeartbeatFrequency"),
        ({"ShadowHeartbeatFrequency": True}, "ShadowHeartbeatFrequency"),
        ({"ShadowRedundancyEnabled": "yes"}, "expected true or false"),
        ({"ShadowMessagePreference": "Remote"}, "expected one of"),
        ({"MaxRetriesForLocalSiteShadow": 2.5}, "whole number"),
    ],
)
def test_unknown_keys_and_ill_typed_values_are_errors(settings: dict, fragment: str) -> None:
    with pytest.raises(ConfigError, match=fragment):
        check_config(settings)


@pytest.mark.unit
def test_cli_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_text('[sr]\nShadowHeartbeatFrequency = "90s"\n')
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"ReceiveConnectionInactivityTimeoutEdge": 5}))
    typo = tmp_path / "typo.toml"
    typo.write_text("ShadowHeartbeatFrequncy = 2\n")
    assert main(["validate-config", str(good)]) == 0
    assert main(["validate-config", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "sr.receive_connector_timeouts.edge" in out and "(5 min) must be smaller" in out
    assert main(["validate-config", str(typo)]) == 2
    assert "ShadowHeartbeatFrequncy" in capsys.readouterr().err
    assert main(["validate-config", str(tmp_path / "missing.toml")]) == 2
    assert main(["validate-config", "--json", str(bad)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["valid"] is False and doc["violated"][0]["constraint"] == "sr.receive_connector_timeouts.edge"


@pytest.mark.unit
def test_list_parameters_and_retry_count_meaning() -> None:
    assert check_config({"PreferredBackfillServers": ["pf01"]}).valid
    with pytest.raises(ConfigError, match="expected a list of names"):
        check_config({"PreferredBackfillServers": "pf01"})
    # 'retries': a first try is always made, so zero retries still allows one shadow attempt
    report = check_config(
        {
            "ShadowMessagePreference": "RemoteOnly",
            "MaxRetriesForRemoteSiteShadow": 0,
            "ShadowRetryCountMeaning": "retries",
        }
    )
    assert report.valid and not report.warnings
