"""SMTP protocol logs and tracking fields as real organisations' logs have them (issue 31): each fault the issue
names, with its failing twin."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.audit.importer import ImportConfig, build_trace
from conformance.audit.msgtrk import parse_logs
from conformance.audit.servernames import Names, parse_redirect, reply_ids
from conformance.audit.smtplog import parse_protocol
from conformance.audit.sniff import discover
from conformance.cli import main
from model.msgtrk import rules as R
from model.msgtrk.monitor import AuditMonitor
from tests.audit import logs, smtplogs, smtpreal
from tests.audit.logs import MID, line, t

pytestmark = pytest.mark.unit
BOUNDARY = {"DAG1": ("mbx1", "mbx2")}


def _tracking(root: Path) -> None:
    p, s = logs.flow(send_at=5000, discard_at=9000)
    logs.write(root / "mbx1" / "MSGTRK2023040218-1.LOG", "2016", p)
    logs.write(root / "mbx2" / "MSGTRKMS2023040218-1.LOG", "2016", s)


def _import(root: Path, layout: str | None = None):
    parsed = parse_logs([str(root)], layout)
    smtp = parse_protocol(parsed.inputs.protocol)
    events, start = build_trace(parsed, ImportConfig(boundaries=BOUNDARY), [str(root)], smtp)
    return events, start, smtp, parsed


def _check(tmp_path: Path, root: Path, *extra: str) -> int:
    trace = tmp_path / f"{root.name}.jsonl"
    assert main(["import", "msgtrk", str(root), "--out", str(trace), "--boundary", "DAG1=mbx1,mbx2", *extra]) == 0
    return main(["check", str(trace), "--skew", "100", "--engine", "python", "--out", str(tmp_path / f"{root.name}-o")])


# ---- 1. header-less protocol-log rows, told by content ---------------------------------------------------


def test_headerless_receive_and_send_rows_are_told_by_content_and_judged(tmp_path):
    root = tmp_path / "siem"
    _tracking(root)
    (root / "export-recv.csv").write_bytes(smtpreal.headerless(smtplogs.receive_session()))
    (root / "export-send.txt").write_bytes(smtpreal.headerless(smtplogs.shadow_session()))
    inputs = discover([str(root)])
    kinds = {label.rsplit("/", 1)[1]: kind for _, label, kind in inputs.protocol}
    assert kinds == {"export-recv.csv": "receive", "export-send.txt": "send"}
    _, start, smtp, _ = _import(root)
    assert smtp.quarantine == [] and start["protocol_replies_joined"] == 2
    told = next(x for x in start["protocol_layout_origin"] if "export-recv.csv" in x)
    assert "told receive by content (line 2: > '220 MBX1" in told
    assert "no header: the 9 protocol-log columns" in told
    assert _check(tmp_path, root) == 0  # SR-031 judged on header-less rows, clean


def test_a_headerless_protocol_row_of_another_count_is_quarantined_naming_file_and_line(tmp_path):
    rows = smtplogs.receive_session()
    f = tmp_path / "export-recv.csv"
    f.write_bytes(smtpreal.headerless(rows) + b"2023-04-02T18:54:01.000Z,MBX1\\Default MBX1,08DB,7,extra\n")
    smtp = parse_protocol([(f, "export-recv.csv", "receive")])
    assert [(q.file, q.line, q.reason) for q in smtp.quarantine] == [
        ("export-recv.csv", len(rows) + 1, "5 fields where a header-less protocol-log row has 9")
    ]
    assert smtp.data_lines == smtp.lines_kept + len(smtp.quarantine) + smtp.duplicates


def test_twin_rows_that_tell_no_direction_need_layout_and_say_so(tmp_path):
    root = tmp_path / "forum"
    _tracking(root)
    quiet = [r for r in smtplogs.receive_session() if r[1].split(",")[6] in ("+", "-", "*")]
    (root / "post.txt").write_bytes(smtpreal.headerless(quiet))
    skipped = dict(discover([str(root)]).skipped)
    assert "give --layout receive|send" in skipped[str(root / "post.txt")]
    assert "post.txt" in str(discover([str(root)], protocol_layout="receive").protocol)
    told = smtpreal.headerless(smtplogs.shadow_session())
    (root / "post.txt").write_bytes(told)  # content says send: a contradicting --layout is named, not obeyed
    assert (
        "--layout receive was given"
        in dict(discover([str(root)], protocol_layout="receive").skipped)[str(root / "post.txt")]
    )
    alone = tmp_path / "alone.csv"  # named on the command line: read, each line quarantined with the reason
    alone.write_bytes(smtpreal.headerless(quiet))
    parsed = parse_logs([str(alone)])
    assert parsed.quarantine[0].file == str(alone) and parsed.quarantine[0].line == 1
    assert "give --layout receive or --layout send" in parsed.quarantine[0].reason


# ---- 2. sessions keyed the way Exchange numbers them -----------------------------------------------------


def test_a_send_sessions_preconnection_row_joins_it(tmp_path):
    f = tmp_path / "SEND1.LOG"
    f.write_bytes(smtplogs.text("Send", smtpreal.send_with_preconnect()))
    smtp = parse_protocol([(f, "SEND1.LOG", "send")])
    assert len(smtp.sessions) == 1 and smtp.splits == []
    s = smtp.sessions[0]
    assert s.server == "mbx1.contoso.com" and s.problem == "" and s.lines[0].context == "attempting to connect"


def test_twin_one_session_id_from_six_endpoints_is_split_and_reported(tmp_path):
    a, b = smtpreal.one_id_many_endpoints()
    (tmp_path / "RECV1.LOG").write_bytes(smtplogs.text("Receive", a))
    (tmp_path / "RECV2.LOG").write_bytes(smtplogs.text("Receive", b))
    smtp = parse_protocol(discover([str(tmp_path)]).protocol)
    assert len(smtp.sessions) == 6 and len(smtp.splits) == 1
    assert "6 remote endpoints" in smtp.splits[0] and "RECV1.LOG" in smtp.splits[0] and "RECV2.LOG" in smtp.splits[0]
    assert "RECV1.LOG:6" in smtp.splits[0]  # the first line of each session read apart


# ---- 3. server names from the most specific source, never cut ----------------------------------------------


def test_names_are_never_cut_and_short_forms_join_only_when_seen():
    n = Names({"mail.x.x", "172.20.15.25", "My.Mail.Server.com", "mbx1", "MBX1.contoso.com"})
    assert n.norm("mail.x.x") == "mail.x.x" and n.norm("172.20.15.25") == "172.20.15.25"
    assert n.norm("My.Mail.Server.com") == "my.mail.server.com" and n.norm("MBX1.contoso.com") == "mbx1"
    assert n.conflicts == []
    twin = Names({"mbx1", "mbx1.contoso.com", "mbx1.fabrikam.com"})  # one short name, two domains
    assert twin.norm("mbx1.contoso.com") == "mbx1.contoso.com" and "2 domains" in twin.conflicts[0]


def test_the_connector_names_the_server_and_every_conflict_is_reported(tmp_path):
    rows = [
        *smtpreal.frontend_greeting("EXCH01", "mail.x.x", "08DB33A1C0FFEE61"),
        *smtpreal.frontend_greeting("EXCH02", "mail.x.x", "08DB33A1C0FFEE62", at=8100),
    ]
    f = tmp_path / "RECV1.LOG"
    f.write_bytes(smtplogs.text("Receive", rows))
    smtp = parse_protocol([(f, "RECV1.LOG", "receive")])
    assert sorted(s.server for s in smtp.sessions) == ["exch01", "exch02"]  # not `mail`, not merged
    conflicts = smtp.name_conflicts
    assert any("connector names server exch01, the banner mail.x.x" in c and "RECV1.LOG:6" in c for c in conflicts)
    assert any("mail.x.x is given by 2 servers (exch01, exch02" in c for c in conflicts)
    send = tmp_path / "SEND1.LOG"
    send.write_bytes(smtplogs.text("Send", smtpreal.send_with_preconnect(ehlo="My.Mail.Server.com")))
    assert parse_protocol([(send, "SEND1.LOG", "send")]).sessions[0].server == "my.mail.server.com"
    other = [  # a second server's Send session with the same public EHLO name, from another local address
        (ms, x.replace("10.0.0.11:", "10.0.0.31:").replace("FFEE30", "FFEE31"))
        for ms, x in smtpreal.send_with_preconnect(ehlo="My.Mail.Server.com", at=6500)
    ]
    send.write_bytes(smtplogs.text("Send", smtpreal.send_with_preconnect(ehlo="My.Mail.Server.com") + other))
    shared = parse_protocol([(send, "SEND1.LOG", "send")]).name_conflicts
    assert len(shared) == 1 and "my.mail.server.com is used from 2 local addresses" in shared[0]


def test_layout_receive_on_the_command_line_reads_rows_no_line_tells(tmp_path, capsys):
    root = tmp_path / "forum"
    _tracking(root)
    quiet = [r for r in smtplogs.receive_session() if r[1].split(",")[6] in ("+", "-", "*")]
    (root / "post.txt").write_bytes(smtpreal.headerless(quiet))
    out = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(root), "--layout", "receive", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "post.txt: header-less SMTP protocol log rows, receive by --layout receive" in err
    assert main(["import", "msgtrk", str(root), "--out", str(out)]) == 0  # twin: without it, listed not read
    assert "post.txt: header-less SMTP protocol log rows: Receive or Send cannot be told" in capsys.readouterr().err
    p, _ = logs.flow("2016", send_at=5000)  # header-less tracking rows too: one --layout of each kind
    (root / "siem.csv").write_bytes(logs.text("2016", [x.replace(",101,", ",102,") for x in p], header=False))
    both = ["--layout", "2016", "--layout", "receive"]
    assert main(["import", "msgtrk", str(root), *both, "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "siem.csv: layout 2016/2019 (no header: --layout 2016/2019)" in err and "receive by --layout receive" in err
    twice = ["--layout", "receive", "--layout", "send"]
    assert main(["import", "msgtrk", str(root), *twice, "--out", str(out)]) == 2
    assert "at most one tracking layout and one of receive/send" in capsys.readouterr().err


def test_twin_an_ip_address_as_tracking_server_stays_whole(tmp_path):
    p, _s = logs.flow(send_at=5000, discard_at=9000)
    p = [x.replace(",MBX1,", ",172.20.15.25,").replace("mbx1.contoso.com", "172.20.15.25") for x in p]
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", p)
    _, start, _, _ = _import(tmp_path)
    assert "172.20.15.25" in start["servers"] and "172" not in start["servers"]


# ---- 4. sessions shadow redundancy does not concern: not applicable, not unknown -----------------------------


def test_a_send_to_postfix_is_not_applicable_and_the_import_judges_clean(tmp_path):
    root = tmp_path / "org"
    _tracking(root)
    smtplogs.write_pair(root)
    rows = smtplogs.shadow_session() + smtpreal.send_to_postfix() + smtpreal.send_to_postfix(9000, answered=False)
    rows[-1] = (rows[-1][0], rows[-1][1].replace("08DB33A1C0FFEE40", "08DB33A1C0FFEE41"))
    rows[-2] = (rows[-2][0], rows[-2][1].replace("08DB33A1C0FFEE40", "08DB33A1C0FFEE41"))
    (root / "mbx1" / "SEND2023040218-1.LOG").write_bytes(smtplogs.text("Send", rows))
    _, start, _, _ = _import(root)
    assert start["protocol_join_problems"] == [] and start["protocol_not_applicable_total"] == 2
    assert any("250 ok" not in x and "not in a shadow session" in x for x in start["protocol_not_applicable"])
    assert any("no SMTP session was opened" in x for x in start["protocol_not_applicable"])
    assert _check(tmp_path, root) == 0


def test_twin_a_shadow_sessions_reply_without_ids_stays_unknown(tmp_path):
    root = tmp_path / "org"
    _tracking(root)
    smtplogs.write_pair(root)
    f = root / "mbx1" / "SEND2023040218-1.LOG"
    f.write_bytes(f.read_bytes().replace(f"{MID} [InternalId=555, Hostname=MBX2.contoso.com] ".encode(), b""))
    _events, start, _, _ = _import(root)
    assert start["protocol_not_applicable_total"] == 0
    assert any("neither an InternalId nor a message-id" in x for x in start["protocol_join_problems"])


# ---- 5. HAREDIRECT values in the other order -------------------------------------------------------------


AMAZON_STYLE = (
    "EX13D13UWB004.ant.amazon.com = 250 2.6.0 < 1028007174.22872.1495474412586.JavaMail.apollo@apollo - adaws > "
    "[InternalId = EX13D13UWB004.ant.amazon.com, Hostname = 64712272257897] Queued mail for redundancy"
)


def test_swapped_internalid_and_hostname_are_read_and_a_number_is_never_a_host():
    assert parse_redirect(AMAZON_STYLE) == ("EX13D13UWB004.ant.amazon.com", "64712272257897", "")
    assert reply_ids("250 2.6.0 <a@b> [InternalId = mbx2.contoso.com, Hostname = 555] Queued") == (
        "555",
        "mbx2.contoso.com",
        True,
    )
    shadow, _iid, problem = parse_redirect("[InternalId = 64712272257894, Hostname = 64712272257897] Queued")
    assert shadow is None and "no shadow host name" in problem  # twin: two numbers, no host taken


def test_a_swapped_haredirect_pairs_with_the_shadows_rows(tmp_path):
    p, s = logs.flow(send_at=5000, discard_at=9000)
    swapped = "mbx2.contoso.com = 250 2.6.0 <m1@contoso.com> [InternalId = mbx2.contoso.com, Hostname = 555] Queued"
    p[1] = p[1].replace(logs.redirect_context("mbx2.contoso.com", "555"), swapped)
    logs.write(tmp_path / "mbx1" / "MSGTRK1.LOG", "2016", p)
    logs.write(tmp_path / "mbx2" / "MSGTRK1.LOG", "2016", s)
    events, _, _, _ = _import(tmp_path)
    assert {e.entity for e in events[1:]} == {"mbx1/101"}  # HARECEIVE/HADISCARD of 555 joined the primary's
    result = AuditMonitor(100).check(events)
    assert result.violations == () and not any("cannot be paired" in n for n in result.notes)


# ---- 6. trace ids depend on everything imported ---------------------------------------------------------


def test_trace_ids_depend_on_the_quarantine_too(tmp_path):
    ids = []
    root = tmp_path / "logs"  # one place, rewritten: labels are the paths as given
    for junk in ("", "", "2023-04-02T18:54:09.000Z,broken,\n"):
        p, _ = logs.flow(send_at=5000)
        f = logs.write(root / "MSGTRK1.LOG", "2016", p)
        f.write_bytes(f.read_bytes() + junk.encode())
        _, _start, _, parsed = _import(root)
        ids.append(build_trace(parsed, ImportConfig(), [])[0][0].trace_id)
        assert len(parsed.quarantine) == (1 if junk else 0)
    assert ids[0] == ids[1] and ids[1] != ids[2]  # same import, same id; differing only in quarantine: not


# ---- 5. S:Replication in the primary's RECEIVE ----------------------------------------------------------


def _replication_flow(value: str, *, hop: bool = True) -> list[str]:
    rows = [
        line(
            "2016",
            date_time=t(0),
            client_hostname="client.fabrikam.com",
            server_hostname="MBX1",
            source="SMTP",
            event_id="RECEIVE",
            internal_message_id="101",
            message_id=MID,
            custom_data=f"S:DeliveryPriority=Normal;S:Replication={value}",
        )
    ]
    if hop:
        rows.append(
            line(
                "2016",
                date_time=t(90),
                client_hostname="MBX1.contoso.com",
                server_hostname="edge.fabrikam.com",
                source="SMTP",
                event_id="SEND",
                internal_message_id="101",
                message_id=MID,
            )
        )
    return rows


def _judged(tmp_path: Path, rows: list[str], reject: bool):
    logs.write(tmp_path / "MSGTRK1.LOG", "2016", rows)
    parsed = parse_logs([str(tmp_path)])
    events, start = build_trace(parsed, ImportConfig(reject_on_shadow_failure=reject), [str(tmp_path)])
    return AuditMonitor(100).check(events), start


def test_replication_naming_another_server_is_judged_and_the_primary_itself_fails(tmp_path):
    ok, start = _judged(tmp_path / "ok", _replication_flow("MBX2"), reject=False)
    assert ok.violations == () and ok.tally.judged[R.REPLICATION_OTHER_SERVER.name] == 1
    assert start["replication_values"] == ["mbx2=1"]
    bad, _ = _judged(tmp_path / "bad", _replication_flow("MBX1"), reject=False)  # twin: the primary itself
    assert [v.rule for v in bad.violations] == ["msgtrk-replication-other-server"]
    assert bad.violations[0].requirement == "SR-028" and "MSGTRK1.LOG:6" in bad.violations[0].explanation


def test_replication_failed_with_reject_on_must_not_go_on(tmp_path):
    held, _ = _judged(tmp_path / "held", _replication_flow("Failed", hop=False), reject=True)
    assert held.violations == () and held.tally.judged[R.REPLICATION_FAILED_REJECT.name] == 1
    bad, _ = _judged(tmp_path / "went", _replication_flow("Failed"), reject=True)  # twin: it went on
    assert [v.rule for v in bad.violations] == ["msgtrk-replication-failed-reject"]
    assert bad.violations[0].requirement == "SR-021"


def test_replication_values_no_seed_sentence_judges_are_listed_not_judged(tmp_path):
    off, start = _judged(tmp_path / "off", _replication_flow("Failed"), reject=False)
    assert off.violations == () and R.REPLICATION_FAILED_REJECT.name not in off.tally.judged
    assert any("RejectMessageOnShadowFailure off" in x for x in start["fields_not_judged"])
    disabled, start = _judged(tmp_path / "disabled", _replication_flow("Disabled"), reject=True)
    assert disabled.violations == () and not disabled.tally.judged.get(R.REPLICATION_OTHER_SERVER.name)
    assert any("Disabled" in x for x in start["fields_not_judged"])
