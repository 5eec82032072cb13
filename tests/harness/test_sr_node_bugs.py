"""The reference shadow redundancy transport (`examples/sut/sr_node.py`) records every kind a transport
records, and each of its planted bugs (`--bug`, one per family of rules) is caught by its own rule within the
default budget of `haconform conform sr`.

The twin of every bug is the correct node: it passes the same search (`test_judgement.py`, and
`test_the_correct_node_records_every_transport_kind` here on a fixed run that reaches every kind).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.check import verdict
from conformance.harness.search import PROFILES, search
from conformance.harness.sr import durations
from conformance.harness.systems import process_factory
from model.registry import get
from model.sr import rules as R
from model.sr.vocabulary import VOCABULARY
from traces.verdict import Rule

pytestmark = pytest.mark.model
ROOT = Path(__file__).resolve().parents[2]
NODE = f"{sys.executable} {ROOT / 'examples' / 'sut' / 'sr_node.py'}"
# planted bug -> the rule of the statement it breaks (one per family of sr's rules)
CASES: dict[str, Rule] = {
    "ack-before-shadow": R.SHADOW_BEFORE_ACK,  # creation
    "advertise-xshadow": R.NO_XSHADOW_ADVERTISED,  # Exchange 2010 coexistence (versions)
    "early-shadow-timeout": R.SESSION_TIMEOUT,  # SMTP time-outs
    "slow-heartbeat": R.HEARTBEAT_FREQUENCY,  # heartbeats
    "promote-unseen-db": R.PROMOTION_DB_CHANGE,  # promotion after a database-ID change
    "release-before-all-forks": R.ALL_FORKS_BEFORE_RELEASE,  # discard notifications
    "short-safetynet-hold": R.SAFETYNET_HOLD,  # expiry
    "resubmit-external": R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY,  # resubmission
}
HARNESS_KINDS = {"SR_CONFIG", "SNAPSHOT"}  # recorded by the harness, not by a transport


def test_every_bug_of_the_node_has_its_case() -> None:
    out = subprocess.run([*NODE.split(), "--help"], capture_output=True, text=True, check=True).stdout
    listed = set(re.search(r"\{([^}]*)\}", out).group(1).split(","))  # type: ignore[union-attr]
    assert listed == set(CASES)


def _system(durations_set: str, **settings: object) -> object:
    setup = {"seed": 3, "layout": "no-dag", "n_servers": 4, "hub": True, "heartbeat_ms": 120000, "stall_p": 0.0,
             "enabled": True, "reject_on_failure": False, "preference": "PreferRemote", "max_remote": 4,
             "max_local": 2, "retry_meaning": "attempts", **durations(durations_set), **settings}  # fmt: skip
    return process_factory("sr", NODE)(setup)


def test_the_correct_node_records_every_transport_kind() -> None:
    """Three fixed runs through the adapter reach every kind of the vocabulary a transport records (heartbeats,
    a stalled session, a promotion by database ID and one by ShadowResubmitTimeSpan, discard expiry, shadow and
    queue expiry, a lost database, promoted non-mailbox forks, a rejection) and the monitor finds nothing.
    Topology: MBX01, MBX03 in site0 and MBX02, MBX04 in site1, no DAG: each pair is a boundary."""
    minute = 60_000
    a = _system("short-discard")  # ShadowResubmitTimeSpan 30 min, ShadowMessageAutoDiscardInterval 60 min
    a.submit("m1", "MBX01", ["mbx", "ext:contoso.example"])  # shadow on MBX03
    a.advance(3 * minute)  # MBX03's heartbeat: DISCARD_NOTIFY, HADISCARD
    a.safetynet_resubmit("MBX01")  # RESUBMIT of the mailbox fork only
    a.submit("m2", "MBX01", ["mbx"])
    a.crash("MBX01")
    a.advance(3 * minute)  # MBX03's heartbeat fails
    a.restart("MBX01", new_database=True)
    a.advance(3 * minute)  # the next one sees MBX01's new database: PROMOTE database_id
    a.submit("m3", "MBX02", ["mbx"])  # shadow on MBX04
    a.crash("MBX04")
    a.restart("MBX04", new_database=True)  # LOST
    a.submit("m4", "MBX02", ["mbx", "ext:contoso.example"])  # shadow on MBX04
    a.crash("MBX02")
    a.advance(40 * minute)  # PROMOTE resubmit_timespan; the promoted copy SENDs the outside fork again
    a.restart("MBX02")
    a.isolate("MBX03")
    a.submit("m5", "MBX01", ["mbx"])  # the session to the cut-off MBX03 stalls: SESSION_TIMEOUT
    a.advance(10 * minute)
    a.heal()
    a.submit("m6", "MBX01", ["mbx"])  # shadow on MBX03, which is then cut off for 70 min
    a.isolate("MBX03")
    a.advance(70 * minute)  # MBX01 deletes the discard events MBX03 never asked for: DISCARD_EXPIRE
    a.finish()
    b = _system("short-all")  # SafetyNetHoldTime 40 min, MessageExpirationTimeout 20 min
    b.isolate("MBX03")
    b.submit("m1", "MBX01", ["mbx", "ext:contoso.example"])  # the session to the cut-off MBX03 stalls
    b.isolate("MBX01")  # and so does the next: the sender's session times out, accepted without a shadow
    b.advance(30 * minute)  # the forks stay queued while MBX01 is cut off: FAIL after MessageExpirationTimeout
    b.heal()
    b.submit("m2", "MBX02", ["mbx"])  # a shadow on MBX04
    b.advance(30_000)
    b.isolate("MBX02")
    b.advance(70 * minute)  # the shadow never hears of the discard: SHADOW_EXPIRE; SAFETYNET_EXPIRE on MBX02
    b.finish()
    c = _system("catalogue", reject_on_failure=True)
    c.crash("MBX03")
    c.submit("m1", "MBX01", ["mbx"])  # nobody can hold the shadow: REJECT
    c.finish()
    events = [e for system in (a, b, c) for e in system.events()]  # type: ignore[attr-defined]
    kinds = {e.kind for e in events}
    transport = {k.kind for k in VOCABULARY.kinds} - HARNESS_KINDS
    assert transport - kinds == set()
    assert {e.attrs.get("reason") for e in events if e.kind == "PROMOTE"} == {"database_id", "resubmit_timespan"}
    assert any(e.kind == "SEND" and e.attrs["via"] == "promoted" for e in events)
    assert {e.attrs["session"] for e in events if e.kind == "SESSION_TIMEOUT"} == {"shadow", "inbound"}
    for system in (a, b, c):
        assert not verdict(list(system.events()), [get("sr").monitor()]).violations  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("bug", sorted(CASES))
def test_each_planted_bug_is_caught_by_its_rule_within_the_default_budget(bug: str) -> None:
    out = search("sr", process_factory("sr", f"{NODE} --bug {bug}"), "quick", shrink=False)
    assert out.failure is not None, f"{bug} survived {out.runs} runs"
    assert out.failure.rule == CASES[bug].name, out.failure.violations[:1]
    assert out.failure.found_after_s <= PROFILES["quick"].budget_s
