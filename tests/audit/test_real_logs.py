"""Logs as auditors have them (issue 23): mixed directories, header-less SIEM exports, SMTP protocol logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs
from conformance.audit.smtplog import parse_protocol
from conformance.audit.sniff import discover, unaccounted
from conformance.cli import main
from model.msgtrk.monitor import AuditMonitor
from tests.audit import logs, smtplogs
from tests.audit.logs import MID, line, t

pytestmark = pytest.mark.unit
BOUNDARY = {"DAG1": ("mbx1", "mbx2")}


# ---- every file accounted for ----------------------------------------------------------------------------


def _mixed(root: Path) -> dict[str, str]:
    """A directory as an auditor gets it; returns file -> what it is (the files that must be listed as skipped)."""
    p, s = logs.flow(send_at=5000, discard_at=9000)
    logs.write(root / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", p)
    (root / "siem").mkdir(parents=True)
    (root / "siem" / "export-mbx2.csv").write_bytes(logs.text("2016", s, header=False))  # any name, no header
    smtplogs.write_pair(root)
    (root / "iis").mkdir()
    (root / "iis" / "u_ex230402.log").write_text(
        "#Software: Microsoft Internet Information Services 10.0\n#Fields: date time s-ip cs-method\n"
    )
    (root / "empty.LOG").write_bytes(b"")
    (root / "dump.bin").write_bytes(b"\x00\x01\x02MSGTRK")
    (root / "notes.txt").write_text("collected from the SIEM on 2023-04-03\n")
    (root / "MSGTRK-renamed.LOG").write_text("this is not a log\n")  # the name alone does not decide
    return {
        "iis/u_ex230402.log": "#Fields line of another log",
        "empty.LOG": "empty file",
        "dump.bin": "binary file",
        "notes.txt": "not a message tracking or SMTP protocol log",
        "MSGTRK-renamed.LOG": "not a message tracking or SMTP protocol log",
    }


def test_a_mixed_directory_lists_every_file_not_read(tmp_path, capsys):
    expected = _mixed(tmp_path / "logs")
    out = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path / "logs"), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    start = json.loads(out.read_text().splitlines()[0])["attrs"]
    listed = dict(item.split(": ", 1) for item in start["files_skipped"])
    root = str(tmp_path / "logs")
    assert {k.removeprefix(root + "/"): v for k, v in listed.items()}.keys() == expected.keys()
    for name, why in expected.items():
        assert why in listed[f"{root}/{name}"] and f"{root}/{name}: " in err  # in IMPORT_START and the output
    assert start["files_skipped_total"] == 5 and "5 file(s) not read" in err
    assert len(start["files"]) == 2 and any("export-mbx2.csv" in f for f in start["files"])
    assert len(start["protocol_files"]) == 3 and start["rows_imported"] == 5
    assert any("export-mbx2.csv: no header: detected from 30 columns" in x for x in start["layout_origin"])


def test_twin_a_file_neither_read_nor_listed_is_caught(tmp_path):
    _mixed(tmp_path / "logs")
    paths = [str(tmp_path / "logs")]
    inputs = discover(paths)
    assert unaccounted(paths, inputs) == []
    dropped = inputs.skipped.pop()  # a discovery that forgets one file ...
    assert unaccounted(paths, inputs) == [dropped[0]]  # ... is caught (the command then exits 3, never a verdict)


def test_files_named_explicitly_are_read_whatever_their_names(tmp_path):
    p, _ = logs.flow(send_at=5000)
    f = tmp_path / "tracking-export.txt"
    f.write_bytes(logs.text("2013", p, header=False))
    parsed = parse_logs([str(f)])
    assert len(parsed.rows) == 3 and parsed.quarantine == [] and parsed.inputs.skipped == []
    junk = tmp_path / "junk.dat"
    junk.write_text("hello\n")
    parsed = parse_logs([str(junk)])  # named explicitly: read, and its line quarantined with the reason
    assert parsed.rows == [] and "no #Fields line and 1 fields" in parsed.quarantine[0].reason


# ---- header-less rows ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("layout", "count"), [("2007", 21), ("2010", 26), ("2013", 27), ("2016", 30)])
def test_headerless_exports_of_every_layout_import(tmp_path, layout, count):
    p, s = logs.flow(layout, send_at=5000, discard_at=9000)
    (tmp_path / "a.csv").write_bytes(logs.text(layout, p, header=False, crlf=True))
    (tmp_path / "b.csv").write_bytes(logs.text(layout, s, header=False))
    parsed = parse_logs([str(tmp_path)])
    assert len(parsed.rows) == 5 and parsed.quarantine == []
    assert set(parsed.layout_origin.values()) == {f"no header: detected from {count} columns"}
    events, _ = build_trace(parsed, ImportConfig(boundaries=BOUNDARY), [str(tmp_path)])
    assert {e.entity for e in events[1:]} == {"mbx1/101"}
    assert AuditMonitor(100).check(events).violations == ()
    given = parse_logs([str(tmp_path)], layout)  # --layout says the same
    name = "2016/2019" if layout == "2016" else layout
    assert len(given.rows) == 5 and set(given.layout_origin.values()) == {f"no header: --layout {name}"}


def test_twin_a_wrong_layout_quarantines_every_row_naming_both(tmp_path):
    p, _ = logs.flow("2016", send_at=5000)
    (tmp_path / "a.csv").write_bytes(logs.text("2016", p, header=False))
    parsed = parse_logs([str(tmp_path)], "2010")
    assert parsed.rows == [] and len(parsed.quarantine) == 3
    q = parsed.quarantine[0]
    assert q.file.endswith("a.csv") and q.line == 1
    assert q.reason == "30 fields (the 2016/2019 layout) where --layout 2010 has 26 (2010)"
    out = tmp_path / "out" / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path / "a.csv"), "--layout", "2010", "--out", str(out)]) == 1


def test_twin_rows_with_the_wrong_count_and_a_foreign_schema_version_are_quarantined(tmp_path):
    p, _ = logs.flow("2013", send_at=5000)
    short = ",".join(p[0].split(",")[:20])
    bad_version = line("2016", date_time=t(9), server_hostname="mbx1", event_id="RECEIVE", internal_message_id="7")
    bad_version = bad_version[: bad_version.rfind(",")] + ",not-a-version"
    (tmp_path / "a.csv").write_bytes(logs.text("2013", [p[0], short, p[1]], header=False))
    (tmp_path / "b.csv").write_bytes(logs.text("2016", [bad_version], header=False))
    parsed = parse_logs([str(tmp_path)])
    q = {(x.file.rsplit("/", 1)[1], x.line): x for x in parsed.quarantine}
    assert q[("a.csv", 2)].reason == "20 fields where the layout of the file's first row has 27 (2013)"
    assert q[("b.csv", 1)].field == "schema-version" and "not a build number" in q[("b.csv", 1)].reason
    assert len(parsed.rows) == 2 and parsed.reconciles()


def test_a_file_whose_header_and_rows_disagree_names_both(tmp_path):
    p, _ = logs.flow("2013", send_at=5000)
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", [p[0]])  # a 2013 row under a 2016 #Fields line
    parsed = parse_logs([str(tmp_path)])
    assert (
        parsed.quarantine[0].reason == "27 fields (the 2013 layout) where the #Fields line (line 5) has 30 (2016/2019)"
    )
    out = tmp_path / "o" / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path / "MSGTRK1.LOG"), "--layout", "2013", "--out", str(out)]) == 2


# ---- SMTP protocol logs ----------------------------------------------------------------------------------


def _pair(root: Path, *, reject: bool | None = None, primary: list[str] | None = None, **kw):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    logs.write(root / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", primary if primary is not None else p)
    logs.write(root / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2016", s)
    smtplogs.write_pair(root, **kw)
    parsed = parse_logs([str(root)])
    smtp = parse_protocol(parsed.inputs.protocol)
    cfg = ImportConfig(boundaries=BOUNDARY, reject_on_shadow_failure=reject)
    events, start = build_trace(parsed, cfg, [str(root)], smtp)
    return events, start, smtp


def test_protocol_logs_parse_with_real_quirks(tmp_path):
    events, start, smtp = _pair(tmp_path)
    assert smtp.quarantine == [] and len(smtp.sessions) == 4  # two interleaved in mbx1's RECV log
    recv = next(s for s in smtp.sessions if s.session_id == "08DB33A1C0FFEE01")
    assert recv.server == "mbx1" and recv.said == "mbx1.contoso.com"  # the connector MBX1\\... names the server
    assert recv.peer == "client.fabrikam.com" and recv.closed is not None and recv.conflict == ""
    assert recv.transactions[0].internal_id == "101" and recv.transactions[0].message_id == MID
    shadow = next(s for s in smtp.sessions if s.session_id == "08DB33A1C0FFEE10")
    assert shadow.peer == "mbx2.contoso.com" and shadow.transactions[0].redundancy  # pipelined MAIL/RCPT/BDAT
    assert [c.data.split()[0] for c, r in shadow.commands] == ["XSHADOWREQUEST"]
    assert start["protocol_replies_joined"] == 2 and start["protocol_join_problems"] == []
    replies = [e for e in events if e.kind == "SMTP_DATA_REPLY"]
    assert {e.entity for e in replies} == {"mbx1/101"} and {e.node for e in replies} == {"mbx1"}
    assert replies[0].attrs["src_file"].endswith("SEND2023040218-1.LOG")  # the shadow's answer comes first
    # an exact repeat of a line (log shippers do that) is dropped and counted
    f = tmp_path / "mbx1" / "RECV2023040218-1.LOG"
    f.write_bytes(f.read_bytes() + f.read_bytes().splitlines(keepends=True)[-1])
    assert parse_protocol(discover([str(tmp_path)]).protocol).duplicates == 1


def test_sr031_judged_on_a_tracking_plus_protocol_pair(tmp_path):
    events, _, _ = _pair(tmp_path / "ok")
    result = AuditMonitor(100).check(events)
    assert result.violations == ()
    assert not any("SR-031" in n and "not judged" in n for n in result.notes)


def test_twin_acknowledgement_logged_before_the_shadows(tmp_path):
    events, _, _ = _pair(tmp_path, ack_at=2)  # the sender's 250 at +2 ms, the shadow's at +4 ms
    vs = AuditMonitor(100).check(events).violations
    assert [v.rule for v in vs] == ["smtp-ack-after-shadow"] and vs[0].requirement == "SR-031"
    ack = _line_of(tmp_path / "mbx1" / "RECV2023040218-1.LOG", "Queued mail for delivery")
    shadow = _line_of(tmp_path / "mbx1" / "SEND2023040218-1.LOG", "Queued mail for redundancy")
    assert f"mbx1/RECV2023040218-1.LOG:{ack}," in vs[0].explanation  # the protocol-log lines, file and line
    assert f"mbx1/SEND2023040218-1.LOG:{shadow})" in vs[0].explanation and "2 ms before" in vs[0].explanation


def _line_of(path: Path, text: str) -> int:
    return next(i for i, x in enumerate(path.read_text().splitlines(), start=1) if text in x)


def test_same_millisecond_is_unknown_not_a_verdict(tmp_path):
    events, _, _ = _pair(tmp_path, ack_at=4)
    result = AuditMonitor(100).check(events)
    assert result.violations == () and any("same millisecond" in n for n in result.notes)


def test_twin_shadow_session_without_xshadowrequest(tmp_path):
    events, _, _ = _pair(tmp_path, announce=False)
    vs = AuditMonitor(100).check(events).violations
    assert [v.rule for v in vs] == ["smtp-shadow-session-announced"] and vs[0].requirement == "SR-030"


def test_twin_heartbeat_session_without_discard_query(tmp_path):
    events, _, _ = _pair(tmp_path, heartbeat_query=False)
    vs = AuditMonitor(100).check(events).violations
    assert [v.rule for v in vs] == ["smtp-shadow-session-discard-query"] and vs[0].requirement == "SR-054"
    first = _line_of(tmp_path / "mbx2" / "SEND2023040218-1.LOG", ",0,")
    assert f"mbx2/SEND2023040218-1.LOG:{first} " in vs[0].explanation


def test_ambiguous_join_is_unknown_with_the_reason_never_a_guess(tmp_path):
    p, _ = logs.flow(send_at=5000, discard_at=9000)
    again = p[0].replace(",101,", ",102,").replace(t(0), t(1))  # the sender re-delivered: same message-id
    events, start, _ = _pair(tmp_path, primary=[*p, again], ack_at=2, recv_internal_id="")
    assert any("ambiguous: message-id" in x for x in start["protocol_join_problems"])
    result = AuditMonitor(100).check(events)
    assert result.violations == ()  # ack at +2 would be a violation if joined: it is not guessed
    assert any("ambiguous" in n for n in result.notes)


def test_acknowledged_despite_failed_shadow_with_reject_true(tmp_path):
    fail = [
        line("2016", date_time=t(0), server_hostname="mbx1", event_id="RECEIVE", internal_message_id="101"),
        line("2016", date_time=t(5), server_hostname="mbx1", event_id="HAREDIRECTFAIL", internal_message_id="101"),
    ]
    events, _, _ = _pair(tmp_path / "r", primary=fail, reject=True, shadow_reply_at=4)
    rules = {v.rule for v in AuditMonitor(100).check(events).violations}
    assert "smtp-ack-despite-shadow-failure" in rules
    events, _, _ = _pair(tmp_path / "a", primary=fail, reject=False)
    assert "smtp-ack-despite-shadow-failure" not in {v.rule for v in AuditMonitor(100).check(events).violations}


def test_end_to_end_import_then_check(tmp_path):
    for name, kw, status in (("ok", {}, 0), ("bad", {"ack_at": 2}, 1)):
        root = tmp_path / name
        p, s = logs.flow(send_at=5000, discard_at=9000)
        logs.write(root / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", p)
        logs.write(root / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2016", s)
        smtplogs.write_pair(root, **kw)
        trace = tmp_path / f"{name}.jsonl"
        assert main(["import", "msgtrk", str(root), "--out", str(trace), "--boundary", "DAG1=mbx1,mbx2"]) == 0
        args = ["check", str(trace), "--skew", "100", "--engine", "python", "--out", str(tmp_path / f"{name}-out")]
        assert main(args) == status


def test_shipped_sample_is_current_and_judged(tmp_path):
    data = Path(__file__).parent / "data"
    for name, ack_at, status in (("pair", 20, 0), ("pair-early-ack", 2, 1)):
        fresh = tmp_path / name
        smtplogs.write_sample(fresh, ack_at=ack_at)
        shipped = sorted(p.relative_to(data / name) for p in (data / name).rglob("*") if p.is_file())
        assert shipped == sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
        for rel in shipped:
            assert (data / name / rel).read_bytes() == (fresh / rel).read_bytes(), f"regenerate {name}/{rel}"
        trace = tmp_path / f"{name}.jsonl"
        args = ["import", "msgtrk", str(data / name), "--out", str(trace), "--boundary", "DAG1=mbx1,mbx2"]
        assert main(args) == 0
        check = ["check", str(trace), "--skew", "100", "--engine", "python", "--out", str(tmp_path / f"{name}-o")]
        assert main(check) == status


def test_protocol_log_lines_that_cannot_be_read_are_quarantined(tmp_path):
    rows = smtplogs.receive_session()
    rows[2] = (rows[2][0], rows[2][1].replace(",<,EHLO", ",?,EHLO"))  # an unknown event marker
    rows[5] = (rows[5][0], rows[5][1].replace(",5,", ",five,"))  # sequence-number not a number
    rows[6] = (rows[6][0], rows[6][1] + ',"unclosed')
    f = tmp_path / "RECV1.LOG"
    f.write_bytes(smtplogs.text("Receive", rows))
    smtp = parse_protocol([(f, "RECV1.LOG", "receive")])
    assert {(q.field, q.reason[:22]) for q in smtp.quarantine} == {
        ("event", "'?' is not a protocol "),
        ("sequence-number", "not a number"),
        ("", "quoted field is not cl"),
    }
    assert smtp.data_lines == smtp.lines_kept + len(smtp.quarantine) + smtp.duplicates  # nothing silent
    p, _ = logs.flow(send_at=5000)
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", p)
    assert main(["import", "msgtrk", str(tmp_path), "--out", str(tmp_path / "o" / "t.jsonl")]) == 1


def test_auth_exchanges_and_no_protocol_logs_option(tmp_path, capsys):
    rows = smtplogs.receive_session()
    c, sid, loc, rem = "MBX1\\Default MBX1", "08DB33A1C0FFEE01", "10.0.0.11:25", "203.0.113.5:51544"
    auth = [  # AUTH between EHLO and MAIL: the client's part logged once, not the second time
        smtplogs.row(-43, c, sid, 0, loc, rem, "<", "AUTH LOGIN"),
        smtplogs.row(-43, c, sid, 0, loc, rem, ">", "334 <authentication response>"),
        smtplogs.row(-42, c, sid, 0, loc, rem, "<", "<authentication information>"),
        smtplogs.row(-42, c, sid, 0, loc, rem, ">", "334 <authentication response>"),
        smtplogs.row(-41, c, sid, 0, loc, rem, ">", "235 2.7.0 Authentication successful"),
    ]
    rows = rows[:5] + auth + rows[5:16]  # renumbered in order below
    rows = [(ms, ",".join([*x.split(",", 4)[:3], str(i), x.split(",", 4)[4]])) for i, (ms, x) in enumerate(rows)]
    f = tmp_path / "RECV1.LOG"
    f.write_bytes(smtplogs.text("Receive", rows))
    smtp = parse_protocol([(f, "RECV1.LOG", "receive")])
    txn = next(s for s in smtp.sessions if s.session_id == sid).transactions[0]
    assert txn.code == "250" and txn.internal_id == "101"
    p, _ = logs.flow(send_at=5000)
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", p)
    out = tmp_path / "o" / "t.jsonl"
    assert main(["import", "msgtrk", str(tmp_path), "--no-protocol-logs", "--out", str(out)]) == 0
    assert "RECV1.LOG: SMTP receive protocol log, not read (--no-protocol-logs)" in capsys.readouterr().err
    (tmp_path / "RECV1.LOG").write_text("#Fields: " + smtplogs.FIELDS + "\n")
    assert "Receive or Send cannot be told" in discover([str(tmp_path)]).skipped[0][1]


def test_a_session_continued_in_the_next_hourly_file_is_one_session(tmp_path):
    rows = smtplogs.receive_session()
    (tmp_path / "RECV1.LOG").write_bytes(smtplogs.text("Receive", rows[:9]))
    (tmp_path / "RECV2.LOG").write_bytes(smtplogs.text("Receive", rows[9:]))
    whole = parse_protocol(discover([str(tmp_path)]).protocol)
    session = next(s for s in whole.sessions if s.session_id == "08DB33A1C0FFEE01")
    assert {p.file.rsplit("/", 1)[1] for p in session.lines} == {"RECV1.LOG", "RECV2.LOG"}
    assert session.transactions[0].internal_id == "101" and session.closed is not None
