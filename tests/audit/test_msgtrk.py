"""Imported message tracking logs: the reader's quirks, pairing, and every audit rule with a twin that fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs, split_csv, split_multi
from conformance.check import core_violations
from conformance.cli import main
from model.msgtrk.monitor import AuditMonitor
from tests.audit import logs
from tests.audit.logs import MID, line, t

pytestmark = pytest.mark.unit
BOUNDARY = {"DAG1": ("mbx1", "MBX2.contoso.com", "mbx3")}


def _import(tmp_path: Path, primary: list[str], shadow: list[str], *, layouts=("2016", "2016"), **cfg):
    logs.write(tmp_path / "mbx1" / "MSGTRK2023040218-1.LOG", layouts[0], primary)
    logs.write(tmp_path / "mbx2" / "MSGTRKMS2023040218-1.LOG", layouts[1], shadow)
    parsed = parse_logs([str(tmp_path)])
    events, start = build_trace(parsed, ImportConfig(**cfg), [str(tmp_path)])
    return events, start, parsed


def _rules(events, skew=100) -> set[str]:
    return {v.rule for v in AuditMonitor(skew).check(events).violations}


@pytest.mark.parametrize("layout", ["2007", "2010", "2013", "2016"])
def test_full_flow_in_each_layout_pairs_by_internal_id_and_is_clean(tmp_path, layout):
    p, s = logs.flow(layout, send_at=5000, discard_at=9000)
    events, start, parsed = _import(tmp_path, p, s, layouts=(layout, layout), boundaries=BOUNDARY)
    assert parsed.reconciles() and start["rows_imported"] == 5
    assert {e.entity for e in events[1:]} == {"mbx1/101"}
    # the 2007 layout has no custom-data, so no row names the short form mbx2: the full name is kept, never cut
    shadow = "mbx2.contoso.com" if layout == "2007" else "mbx2"
    assert [e.node for e in events[1:] if e.kind in ("HARECEIVE", "HADISCARD")] == [shadow, shadow]
    result = AuditMonitor(100).check(events)
    assert result.violations == ()
    assert any("SR-031" in n for n in result.notes)  # the acknowledgement to the sender: unknown, with the reason
    assert core_violations(events) == []  # TRACE_START and NET pairing do not apply (TR-008)


def test_quirks_bom_crlf_quotes_multivalue_locale_times(tmp_path):
    status = "'[{LED=250 2.1.5 OK};{LRT=02.04.2023 18:54:01}]';550 5.1.1 unknown, sorry"
    rows = [
        line(
            "2016",
            date_time=t(0),
            server_hostname="MBX1",
            source="SMTP",
            event_id="RECEIVE",
            internal_message_id="7",
            message_id=MID,
            message_subject='He said "hi", then left',
            recipient_address="a@x.com;a@x.com",
            recipient_status=status,
            return_path="<>",
            client_ip="fe80::1%3",
        )
    ]
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", rows, bom=True, crlf=True)
    parsed = parse_logs([str(tmp_path)])
    assert parsed.quarantine == [] and len(parsed.rows) == 1
    events, _ = build_trace(parsed, ImportConfig(), [str(tmp_path)])
    a = events[1].attrs
    assert a["recipients"] == ["a@x.com", "a@x.com"]
    assert a["recipient_status"] == ["[{LED=250 2.1.5 OK};{LRT=02.04.2023 18:54:01}]", "550 5.1.1 unknown, sorry"]
    assert a["src_line"] == 6 and a["src_file"].endswith("MSGTRK1.LOG")


def test_split_helpers():
    assert [v for v, _ in split_csv('a,"b,""c""",,')] == ["a", 'b,"c"', "", ""]
    assert split_multi("'x;y';z") == ["x;y", "z"]


def test_malformed_lines_are_quarantined_with_file_line_column(tmp_path):
    good = line("2013", date_time=t(0), server_hostname="MBX1", event_id="RECEIVE", internal_message_id="1")
    bad_time = line(
        "2013", date_time="02.04.2023 18:54:01", server_hostname="MBX1", event_id="RECEIVE", internal_message_id="2"
    )
    unclosed = good.replace("MBX1", '"MBX1', 1)
    misaligned = line(
        "2013",
        date_time=t(1),
        server_hostname="MBX1",
        event_id="DELIVER",
        internal_message_id="3",
        recipient_address="a@x;b@x",
        recipient_status="250 ok;250 ok;250 ok",
    )
    logs.write(tmp_path / "MSGTRK9.LOG", "2013", [good, bad_time, unclosed, misaligned, "a,b"])
    parsed = parse_logs([str(tmp_path)])
    assert len(parsed.rows) == 1 and parsed.reconciles()
    q = {(x.line, x.field): x for x in parsed.quarantine}
    assert q[(7, "date-time")].column == 1
    assert (8, "") in q and q[(8, "")].column == good.index("MBX1") + 1
    assert q[(9, "recipient-status")].reason.startswith("3 statuses for 2 recipients")
    assert "2 fields" in q[(10, "")].reason
    out = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path), "--out", str(out)]) == 1  # like check: quarantine -> 1
    rows = [json.loads(x) for x in (tmp_path / "t.quarantine.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and set(rows[0]) == {"file", "line", "column", "field", "reason"}


def test_unknown_event_ids_kept_and_counted_duplicates_and_reverse_order(tmp_path):
    a = line("2016", date_time=t(50), server_hostname="MBX1", event_id="SENDEXTERNAL", internal_message_id="4")
    b = line("2016", date_time=t(10), server_hostname="MBX1", event_id="RECEIVE", internal_message_id="4")
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", [a, b, a])  # reverse time order, one exact duplicate
    parsed = parse_logs([str(tmp_path)])
    events, start = build_trace(parsed, ImportConfig(), [str(tmp_path)])
    assert start["unknown_event_ids"] == ["SENDEXTERNAL=1"] and start["duplicates_dropped"] == 1
    assert start["lines_read"] == 3 == start["rows_imported"] + start["duplicates_dropped"]
    assert [e.kind for e in events[1:]] == ["RECEIVE", "SENDEXTERNAL"] and events[2].attrs["known"] is False
    assert core_violations(events) == []


def test_missing_fields_line_column_is_unusable(tmp_path):
    (tmp_path / "MSGTRK1.LOG").write_text("#Fields: date-time,event-id\n2023-04-02T00:00:00Z,RECEIVE\n")
    assert main(["import", "msgtrk", str(tmp_path), "--out", str(tmp_path / "t.jsonl")]) == 2


# ---- each rule and its twin ------------------------------------------------------------------------------


def test_discard_before_next_hop_across_skewed_clocks(tmp_path):
    # the shadow's clock runs 300 ms behind: within a 400 ms bound a 200 ms gap is not a violation ...
    p, s = logs.flow(send_at=1000, discard_at=1100, shadow_skew=-300)
    events, _, _ = _import(tmp_path / "ok", p, s)
    result = AuditMonitor(400).check(events)
    assert result.violations == () and any("either order" in n for n in result.notes)
    assert AuditMonitor(None).check(events).violations == ()  # without a bound: not judged, said so
    assert any("--skew" in n for n in AuditMonitor(None).check(events).notes)
    # ... twin: discarded 4 s before the primary's next hop cannot be explained by 100 ms clocks
    p, s = logs.flow(send_at=5000, discard_at=1000)
    events, _, _ = _import(tmp_path / "bad", p, s)
    vs = AuditMonitor(100).check(events).violations
    assert [v.rule for v in vs] == ["msgtrk-discard-after-next-hop"] and vs[0].requirement == "SR-052"
    assert "MSGTRKMS2023040218-1.LOG:7" in vs[0].explanation  # points at the log line


def test_shadow_acknowledged_after_next_hop(tmp_path):
    p, s = logs.flow(send_at=2, redirect_at=50, discard_at=9000)
    events, _, _ = _import(tmp_path, p, s)
    assert "msgtrk-shadow-before-next-hop" in _rules(events)


def test_shadow_outside_boundary_and_on_self(tmp_path):
    p, s = logs.flow(shadow="mbx9.contoso.com", send_at=5000, discard_at=9000)
    events, _, _ = _import(tmp_path / "a", p, s, boundaries=BOUNDARY)
    assert "msgtrk-shadow-in-boundary" in _rules(events)
    p, s = logs.flow(send_at=5000, discard_at=9000)
    events, _, _ = _import(tmp_path / "b", p, s, boundaries=BOUNDARY)
    assert "msgtrk-shadow-in-boundary" not in _rules(events)
    p, _ = logs.flow(shadow="mbx1.contoso.com", send_at=5000)
    events, _, _ = _import(tmp_path / "c", p, [])
    assert "msgtrk-shadow-on-other-server" in _rules(events)


def test_shadow_unconfirmed_when_its_log_covers_the_time(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    other = line("2016", date_time=t(9000), server_hostname="mbx2", event_id="RECEIVE", internal_message_id="9")
    early = other.replace(t(9000), t(0)).replace(",9,", ",8,")
    events, _, _ = _import(tmp_path / "bad", p, [early, s[1].replace(",555,", ",556,"), other])
    assert "msgtrk-shadow-unconfirmed" in _rules(events)
    events, _, _ = _import(tmp_path / "absent", p, [other.replace(t(9000), t(1))])  # log ends before: unknown
    assert "msgtrk-shadow-unconfirmed" not in _rules(events)


def _resubmit(at: int, server: str, iid: str, source: str) -> str:
    return line(
        "2016",
        date_time=t(at),
        server_hostname=server,
        source=source,
        event_id="RESUBMIT",
        internal_message_id=iid,
        message_id=MID,
    )


def test_promotion_after_discard_and_early_promotion_is_unknown(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    events, _, _ = _import(tmp_path / "bad", p, [*s, _resubmit(9500, "mbx2", "555", "REDUNDANCY")])
    assert "msgtrk-promotion-after-discard" in _rules(events)
    events, _, _ = _import(tmp_path / "early", p[:2], [s[0], _resubmit(2000, "mbx2", "555", "REDUNDANCY")])
    result = AuditMonitor(100).check(events)
    assert result.violations == () and any("SR-059" in n for n in result.notes)


def test_resubmission_across_boundary_and_safetynet_after_exit(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    events, _, _ = _import(tmp_path / "a", [*p, _resubmit(9900, "mbx1", "101", "SAFETYNET")], s, boundaries=BOUNDARY)
    assert "msgtrk-safetynet-after-boundary-exit" in _rules(events)
    events, _, _ = _import(tmp_path / "b", p, s, boundaries=BOUNDARY)
    assert not _rules(events)
    third = logs.flow(send_at=5000, discard_at=9000, shadow="mbx3.contoso.com")
    assert third  # a shadow inside the boundary may resubmit; one outside may not:
    events, _, _ = _import(tmp_path / "c", p, s, boundaries={"DAG1": ("mbx1", "mbx3")})
    assert "msgtrk-shadow-in-boundary" in _rules(events)


def _failure_flow(after: list[str]) -> list[str]:
    return [
        line(
            "2016",
            date_time=t(0),
            server_hostname="mbx1",
            event_id="RECEIVE",
            internal_message_id="101",
            custom_data="S:Replication=Failed",
        ),
        line(
            "2016",
            date_time=t(5),
            server_hostname="mbx1",
            event_id="HAREDIRECTFAIL",
            internal_message_id="101",
            source_context="No suitable shadow servers",
        ),
        *after,
    ]


def test_haredirectfail_accept_and_reject(tmp_path):
    send = line(
        "2016",
        date_time=t(90),
        client_hostname="mbx1",
        server_hostname="edge",
        event_id="SEND",
        internal_message_id="101",
    )
    fail = line(
        "2016",
        date_time=t(90),
        server_hostname="mbx1",
        event_id="FAIL",
        internal_message_id="101",
        recipient_status="451 4.4.0 Message failed to be made redundant",
    )
    wrong = fail.replace("451 4.4.0", "450 4.5.1")
    cases = [
        (False, [send], set()),
        (False, [fail], {"msgtrk-shadow-failure-accept"}),
        (True, [fail], set()),
        (True, [send], {"msgtrk-shadow-failure-reject"}),
        (True, [wrong], {"msgtrk-rejection-text"}),
    ]
    for i, (reject, after, expected) in enumerate(cases):
        events, _, _ = _import(tmp_path / str(i), _failure_flow(after), [], reject_on_shadow_failure=reject)
        assert _rules(events) == expected, (reject, expected)
    events, _, _ = _import(
        tmp_path / "v", _failure_flow([wrong]), [], reject_on_shadow_failure=True, accept_rejection_variant=True
    )
    assert not _rules(events)


def test_imported_rows_without_the_marker_are_flagged(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    events, _, _ = _import(tmp_path, p, s)
    assert _rules(events[1:]) == {"msgtrk-import-start-first"}
    assert {v.rule for v in core_violations(events[1:])} >= {"trace-start"}  # then the simulated rules apply


def test_short_and_fully_qualified_names_are_one_server(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    _, start, _ = _import(tmp_path, p, s)
    assert start["servers"] == ["mbx1", "mbx2"] and "mbx1.contoso.com=mbx1" in start["server_aliases"]
