"""`haconform shrink --rule` (conformance/shrink.py, issue 29): a requirement ID means every rule enforcing it and
the output says which of them fired; a misspelt rule or an unknown ID is "no such rule" with the closest names,
exit 2. Twins: a real rule that does not fire on the input still says "does not fire" and lists the rules that
do; a rule name that is right is taken as it is."""

from __future__ import annotations

import pytest

from conformance.cli import main
from conformance.shrink import NoSuchRule, known_rules, resolve_rule
from traces.corpus import SAMPLES_DIR
from traces.io import read_events

pytestmark = pytest.mark.unit

ACK_BEFORE_SHADOW = SAMPLES_DIR / "mutants" / "sr--ack-before-shadow.jsonl"


def test_every_table_is_searched_names_and_requirement_ids():
    rules = known_rules()
    for name, req in [
        ("shadow-before-ack", "SR-031"),  # model/sr
        ("single-pam", "AM-005"),  # model/am
        ("smtp-ack-after-shadow", "SR-031"),  # model/msgtrk
        ("recv-after-send", "TR-003"),  # the core rules
        ("schema-conformance", "TR-005"),
        ("shadow_received_before_accept", "SR-031"),  # a clock-skew ordering (check --skew)
    ]:
        assert rules[name] == req
    assert any(r.startswith("PF-") or r.startswith("BF-") for r in rules.values())  # model/pf
    assert resolve_rule("shadow-before-ack") == ("shadow-before-ack",)
    assert resolve_rule("sr-031") == ("shadow-before-ack", "smtp-ack-after-shadow", "shadow_received_before_accept")
    assert resolve_rule("TR-003") == ("recv-after-send", "net_send_before_recv")
    assert resolve_rule("x.skew_inconsistent", {"x.skew_inconsistent": "TR-003"}) == ("x.skew_inconsistent",)


@pytest.mark.parametrize(
    ("given", "closest"),
    [("shadow-befor-ack", "shadow-before-ack"), ("SR-0311", "SR-031"), ("recv-afer-send", "recv-after-send")],
)
def test_a_misspelling_is_no_such_rule_with_the_closest_names(given, closest):
    with pytest.raises(NoSuchRule) as info:
        resolve_rule(given)
    text = str(info.value)
    assert text.startswith(f"no such rule {given!r}") and closest in text.split("closest:")[1]


def test_cli_misspelt_rule_exits_2_naming_the_closest(tmp_path, capsys):
    out = tmp_path / "min.jsonl"
    assert main(["shrink", str(ACK_BEFORE_SHADOW), "--rule", "shadow-befor-ack", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no such rule 'shadow-befor-ack'" in err and "closest: shadow-before-ack" in err
    assert "does not fire" not in err and not out.exists()


def test_twin_a_real_rule_that_does_not_fire_lists_the_rules_that_do(tmp_path, capsys):
    out = tmp_path / "min.jsonl"
    assert main(["shrink", str(ACK_BEFORE_SHADOW), "--rule", "never-blocked", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "rule 'never-blocked' does not fire" in err and "no such rule" not in err
    assert "rules that do: primary-copy-transition, safetynet-transition, shadow-before-ack" in err
    assert not out.exists()


def test_a_requirement_id_whose_rules_do_not_fire_names_them(tmp_path, capsys):
    out = tmp_path / "min.jsonl"
    assert main(["shrink", str(ACK_BEFORE_SHADOW), "--rule", "AM-005", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no rule of AM-005 (single-pam, pam-owns-quorum, dag-record) does not fire" in err
    assert "rules that do: primary-copy-transition" in err and not out.exists()


def test_a_requirement_id_shrinks_the_rule_of_it_that_fired_and_says_which(tmp_path, capsys):
    out = tmp_path / "min.jsonl"
    assert main(["shrink", str(ACK_BEFORE_SHADOW), "--rule", "SR-031", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "SR-031 is enforced by 3 rule(s); fired: shadow-before-ack (25 violation(s))" in err
    assert "did not fire: smtp-ack-after-shadow, shadow_received_before_accept" in err
    assert "shrinking the first violation, of shadow-before-ack" in err
    assert "haconform shrink: shadow-before-ack in trace" in err
    assert len(read_events(out).events) <= 8
    report = tmp_path / "check"
    assert main(["check", str(out), "--engine", "python", "--out", str(report), "--quiet"]) == 1
    assert "shadow-before-ack" in (report / "violations.jsonl").read_text()
