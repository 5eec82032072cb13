"""A Windows input: a real `Get-MailboxDatabaseCopyStatus * | Format-List > file` export of two
databases (tests/audit/data/copystatus/two-databases-fl.txt: UTF-16 LE with a byte-order mark, CRLF, every
property Exchange 2016 prints, long values wrapped at 80 columns) is read with `--database NAME`; without it the
error lists the databases; the copy `ActiveDatabaseCopy` names is the failed source even when it is not Mounted
(the active copy "may be mounted or dismounted", seed 002, AM-009); a database with no other copy is "nothing
to fail over to" (AM-020), not "no copy meets any criteria set" (AM-050). Each beside its twin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.audit.copystatus import NOTHING_TO_FAIL_OVER_TO, CopyStatusError, read_copy_status
from conformance.cli import main

pytestmark = pytest.mark.unit

EXPORT = Path(__file__).parent / "data" / "copystatus" / "two-databases-fl.txt"


def _text() -> str:
    return EXPORT.read_bytes().decode("utf-16")


def _variant(tmp_path: Path, text: str, name: str = "variant.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(b"\xff\xfe" + text.encode("utf-16-le"))
    return path


def _dismount_ex01(text: str) -> str:
    """The active copy of DB01 after its failure: Status Dismounted (ActiveDatabaseCopy still names it)."""
    blocks = text.split("\r\n\r\n")
    i = next(i for i, b in enumerate(blocks) if "Name                                  : DB01\\EX01" in b)
    blocks[i] = blocks[i].replace(": Mounted", ": Dismounted")
    return "\r\n\r\n".join(blocks)


def test_database_option_reads_one_database_of_a_real_two_database_export(capsys):
    snap = read_copy_status(EXPORT, database="db01")
    assert (snap.database, snap.source) == ("DB01", "EX01")
    assert [(c.server, c.preference) for c in snap.copies] == [("EX01", 1), ("EX02", 2), ("EX03", 3)]
    assert snap.copy("EX02").copy_queue(snap.last_log_generated) == 2
    assert main(["explain", str(EXPORT), "--database", "DB01"]) == 0
    assert "BCSS tries EX03 first" in capsys.readouterr().out
    assert main(["import", "copystatus", str(EXPORT), "--database", "DB02"]) == 0
    assert json.loads(capsys.readouterr().out)["database"] == "DB02"


def test_twin_several_databases_without_the_option_list_the_names(capsys):
    with pytest.raises(CopyStatusError, match=r"copies of 2 databases \(DB01, DB02\): name one with --database"):
        read_copy_status(EXPORT)
    assert main(["explain", str(EXPORT)]) == 2
    assert "DB01, DB02" in capsys.readouterr().err
    assert main(["explain", str(EXPORT), "--database", "DB03"]) == 2
    assert "--database DB03: the export holds copies of DB01, DB02 only" in capsys.readouterr().err


def test_active_database_copy_is_the_failed_source_when_not_mounted(tmp_path, capsys):
    path = _variant(tmp_path, _dismount_ex01(_text()))
    snap = read_copy_status(path, database="DB01")
    assert snap.source == "EX01" and snap.copy("EX01").status == "Dismounted"
    assert read_copy_status(path, database="DB01", source="ex01.contoso.com").source == "EX01"  # FQDN, other case
    assert main(["explain", str(path), "--database", "DB01", "--source", "ex01"]) == 0
    assert "the active copy on EX01 is lost" in capsys.readouterr().out


def test_twin_without_active_database_copy_a_dismounted_source_must_be_named(tmp_path):
    text = "\r\n".join(ln for ln in _dismount_ex01(_text()).split("\r\n") if not ln.startswith("ActiveDatabaseCopy"))
    with pytest.raises(CopyStatusError, match="no copy has Status Mounted and no ActiveDatabaseCopy"):
        read_copy_status(_variant(tmp_path, text), database="DB01")
    # and an export that contradicts itself (another copy Mounted) is refused, naming both
    both = _text().replace(
        "ActiveDatabaseCopy                    : ex01", "ActiveDatabaseCopy                    : ex02"
    )
    with pytest.raises(CopyStatusError, match="ActiveDatabaseCopy names ex02 but the copy on EX01 is Mounted"):
        read_copy_status(_variant(tmp_path, both, "both.txt"), database="DB01")


def test_a_database_with_no_other_copy_has_nothing_to_fail_over_to(capsys):
    assert main(["explain", str(EXPORT), "--database", "DB02"]) == 0
    out = capsys.readouterr().out
    assert f"{NOTHING_TO_FAIL_OVER_TO}: the database has no other copy" in out and "criteria set" not in out
    assert main(["explain", str(EXPORT), "--database", "DB02", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == NOTHING_TO_FAIL_OVER_TO


def test_twin_other_copies_none_qualifying_is_still_no_copy_meets_any_criteria_set(tmp_path, capsys):
    text = _text()
    for srv in ("EX02", "EX03"):  # DB01's passive copies both failed: there are copies, none qualifies
        blocks = text.split("\r\n\r\n")
        i = next(i for i, b in enumerate(blocks) if f": DB01\\{srv}" in b)
        blocks[i] = blocks[i].replace(
            "Status                                : Healthy", "Status        " + " " * 24 + ": Failed"
        )
        text = "\r\n\r\n".join(blocks)
    assert main(["explain", str(_variant(tmp_path, text)), "--database", "DB01"]) == 0
    out = capsys.readouterr().out
    assert "no copy meets any criteria set: BCSS activates nothing (AM-050)" in out
    assert NOTHING_TO_FAIL_OVER_TO not in out


def test_shipped_export_is_current():
    from tests.audit.copystatus_fl import export_bytes

    assert EXPORT.read_bytes() == export_bytes(), "regenerate: python3 -m tests.audit.copystatus_fl"
