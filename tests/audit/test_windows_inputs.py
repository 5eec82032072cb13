"""Windows inputs and the chain of custody: every reader takes UTF-8 with a byte-order mark and UTF-16
LE/BE with one (what Windows PowerShell 5.1 writes); UTF-16 without one and binary data are refused naming the
file (exit 2, never 3); `import msgtrk` records each raw file's name, size, SHA-256, lines and encoding in
IMPORT_START and prints them. Each beside its twin."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from conformance.audit.copystatus import read_copy_status
from conformance.audit.msgtrk import parse_logs
from conformance.audit.smtplog import parse_protocol
from conformance.cli import main
from tests.audit.test_report_copystatus import COPIES, _write
from traces.io import read_events
from traces.textfile import TextInputError, read_raw

pytestmark = pytest.mark.unit

PAIR = Path(__file__).parent / "data" / "pair"
BOMS = {"utf-8": b"", "utf-8-sig": b"\xef\xbb\xbf", "utf-16-le": b"\xff\xfe", "utf-16-be": b"\xfe\xff"}
WINDOWS = ("utf-8-sig", "utf-16-le", "utf-16-be")


def encode(text: str, encoding: str, *, bom: bool = True) -> bytes:
    body = text.encode(encoding.replace("-sig", ""))
    return (BOMS[encoding] if bom else b"") + body


def recode(src: Path, dst: Path, encoding: str, *, bom: bool = True) -> Path:
    """A copy of the directory `src` with every file re-encoded, as PowerShell's Out-File would write it."""
    for f in sorted(src.rglob("*")):
        if f.is_file():
            target = dst / f.relative_to(src)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(encode(f.read_bytes().decode("utf-8-sig"), encoding, bom=bom))
    return dst


def _rows(root: Path) -> list[tuple]:
    parsed = parse_logs([str(root)])
    assert not parsed.quarantine
    return sorted((Path(r.file).name, r.line, tuple(sorted(r.cells.items()))) for r in parsed.rows)


def _sessions(root: Path) -> list[tuple]:
    smtp = parse_protocol(parse_logs([str(root)]).inputs.protocol)
    assert not smtp.quarantine and smtp.data_lines
    return [(s.direction, s.session_id, [(p.seq, p.event, p.data, p.context) for p in s.lines]) for s in smtp.sessions]


@pytest.mark.parametrize("encoding", WINDOWS)
def test_tracking_reader_reads_each_windows_encoding(tmp_path, encoding):
    plain = recode(PAIR, tmp_path / "plain", "utf-8")
    assert _rows(recode(PAIR, tmp_path / encoding, encoding)) == _rows(plain)


@pytest.mark.parametrize("encoding", WINDOWS)
def test_protocol_reader_reads_each_windows_encoding(tmp_path, encoding):
    plain = recode(PAIR, tmp_path / "plain", "utf-8")
    assert _sessions(recode(PAIR, tmp_path / encoding, encoding)) == _sessions(plain)


@pytest.mark.parametrize("form", ["list", "csv", "json"])
@pytest.mark.parametrize("encoding", WINDOWS)
def test_copy_status_reader_reads_each_windows_encoding(tmp_path, encoding, form):
    path = _write(tmp_path, form, COPIES)
    want = read_copy_status(path)
    path.write_bytes(encode(path.read_bytes().decode("utf-8-sig"), encoding))
    assert read_copy_status(path) == want


@pytest.mark.parametrize("encoding", WINDOWS)
def test_explain_and_import_copystatus_read_each_windows_encoding(tmp_path, encoding, capsys):
    path = _write(tmp_path, "list", COPIES)
    path.write_bytes(encode(path.read_text(encoding="utf-8"), encoding))
    assert main(["explain", str(path)]) == 0
    assert "BCSS tries MBX3 first" in capsys.readouterr().out
    assert main(["import", "copystatus", str(path), "--out", str(tmp_path / "snap.json")]) == 0


def test_twin_utf16_without_bom_and_binary_are_named_never_an_internal_error(tmp_path, capsys):
    """UTF-16 without a byte-order mark cannot be told from binary by its mark: named as such, exit 2."""
    logs = recode(PAIR, tmp_path / "nobom", "utf-16-le", bom=False)
    tracking = logs / "mbx1" / "MSGTRK2023040218-1.LOG"
    assert main(["import", "msgtrk", str(tracking), "--out", str(tmp_path / "t.jsonl")]) == 2
    err = capsys.readouterr().err
    assert str(tracking) in err and "UTF-16 LE text without a byte-order mark" in err and "binary" not in err
    status = _write(tmp_path, "list", COPIES)
    status.write_bytes(encode(status.read_text(encoding="utf-8"), "utf-16-be", bom=False))
    for argv in (["explain", str(status)], ["import", "copystatus", str(status)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{status}: UTF-16 BE text without a byte-order mark" in err and "internal error" not in err
    dump = tmp_path / "dump.LOG"
    dump.write_bytes(bytes(range(256)) * 4)
    assert main(["import", "msgtrk", str(dump), "--out", str(tmp_path / "d.jsonl")]) == 2
    assert f"{dump}: binary file (NUL bytes)" in capsys.readouterr().err
    assert main(["explain", str(dump)]) == 2
    assert f"{dump}: binary file (NUL bytes)" in capsys.readouterr().err
    # in a directory such files are listed as not read, with the reason
    parsed = parse_logs([str(recode(PAIR, tmp_path / "mixed", "utf-16-le")), str(tmp_path / "nobom")])
    assert any("UTF-16 LE text without a byte-order mark" in s for s in parsed.inputs.skipped_lines())


def test_twin_utf16_cut_short_names_the_file(tmp_path):
    path = tmp_path / "cut.txt"
    path.write_bytes(encode("Name : DB01\\MBX1\n", "utf-16-le")[:-1])
    with pytest.raises(TextInputError, match=r"cut\.txt: UTF-16-LE text of an odd number of bytes"):
        read_raw(path)


@pytest.mark.parametrize("encoding", ["utf-8", *WINDOWS])
def test_chain_of_custody_recorded_in_import_start_and_printed(tmp_path, encoding, capsys):
    logs = recode(PAIR, tmp_path / "logs", encoding)
    out = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(logs), "--out", str(out)]) == 0
    start = read_events(out).events[0].attrs
    raw = sorted(f for f in logs.rglob("*") if f.is_file() and "README" not in f.name)
    assert sorted(start["raw_files"]) == sorted(str(f) for f in raw)
    err = capsys.readouterr().err
    assert f"chain of custody: {len(raw)} raw file(s) read" in err
    for name, size, sha, lines, enc in zip(
        start["raw_files"],
        start["raw_bytes"],
        start["raw_sha256"],
        start["raw_lines"],
        start["raw_encodings"],
        strict=True,
    ):
        data = Path(name).read_bytes()
        assert (size, sha, enc) == (len(data), hashlib.sha256(data).hexdigest(), encoding)
        assert lines == len(data.decode(encoding).splitlines())
        assert f"{name}: {size} bytes, {lines} line(s), {enc}, sha256 {sha}" in err
    assert start["files_skipped_total"] == 1 and "duplicates_dropped" in start and "lines_quarantined" in start


def test_twin_one_changed_byte_changes_the_recorded_hash(tmp_path):
    logs = shutil.copytree(PAIR, tmp_path / "logs")
    assert main(["import", "msgtrk", str(logs), "--out", str(tmp_path / "a.jsonl")]) == 0
    send = logs / "mbx2" / "SEND2023040218-1.LOG"
    send.write_bytes(send.read_bytes().replace(b"#Software", b"#software"))  # a comment line: same events
    assert main(["import", "msgtrk", str(logs), "--out", str(tmp_path / "b.jsonl")]) == 0
    a, b = (read_events(tmp_path / n).events[0].attrs for n in ("a.jsonl", "b.jsonl"))
    i = a["raw_files"].index(str(send))
    assert a["raw_sha256"][i] != b["raw_sha256"][i]
    assert [h for j, h in enumerate(a["raw_sha256"]) if j != i] == [h for j, h in enumerate(b["raw_sha256"]) if j != i]


DEPLOY = Path(__file__).resolve().parents[2] / "traces" / "samples" / "audit" / "deploy.toml"


@pytest.mark.parametrize("encoding", WINDOWS)
def test_validate_config_reads_each_windows_encoding(tmp_path, encoding, capsys):
    """A deployment file saved by Notepad (UTF-8 with a byte-order mark) or PowerShell (UTF-16) reads alike."""
    path = tmp_path / "deploy.toml"
    path.write_bytes(encode(DEPLOY.read_text(encoding="utf-8"), encoding))
    assert main(["validate-config", str(path)]) == 0
    assert "valid" in capsys.readouterr().out


def test_twin_validate_config_of_utf16_without_bom_is_named(tmp_path, capsys):
    path = tmp_path / "deploy.toml"
    path.write_bytes(encode(DEPLOY.read_text(encoding="utf-8"), "utf-16-le", bom=False))
    assert main(["validate-config", str(path)]) == 2
    out = capsys.readouterr()
    assert f"{path}: UTF-16 LE text without a byte-order mark" in out.out + out.err


def test_traces_themselves_stay_utf8_and_utf16_is_named(tmp_path, capsys):
    """A trace is JSON Lines in UTF-8 (TR-005): a UTF-16 one is named as such, exit 2, never read as rows."""
    trace = tmp_path / "t.jsonl"
    assert main(["import", "msgtrk", str(PAIR), "--out", str(trace)]) == 0
    wide = tmp_path / "wide.jsonl"
    wide.write_bytes(encode(trace.read_text(encoding="utf-8"), "utf-16-le"))
    assert main(["check", str(wide), "--engine", "python", "--out", str(tmp_path / "r")]) == 2
    assert f"{wide}: is UTF-16 text" in capsys.readouterr().err


def test_custody_of_many_files_is_printed_in_part_and_recorded_whole(tmp_path, capsys):
    from conformance.audit.cli import MAX_CUSTODY_LINES
    from tests.audit import logs

    count = MAX_CUSTODY_LINES + 3
    for i in range(count):
        p, _ = logs.flow(send_at=5000, discard_at=9000)
        logs.write(tmp_path / "logs" / f"MSGTRK20230402{i:04d}-1.LOG", "2016", p)
    assert main(["import", "msgtrk", str(tmp_path / "logs"), "--out", str(tmp_path / "t.jsonl")]) in (0, 1)
    err = capsys.readouterr().err
    assert err.count(", sha256 ") == MAX_CUSTODY_LINES and "... and 3 more, each in IMPORT_START" in err
    assert len(read_events(tmp_path / "t.jsonl").events[0].attrs["raw_sha256"]) == count
