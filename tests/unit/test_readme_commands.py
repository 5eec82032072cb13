"""Every command of the README's "Using it", "Audit real logs" and "Check your own implementation" blocks runs
as written, from the root of a fresh copy of the repository, with the exit status it is known to give (issue 21).

The commands are read from the README's fenced bash blocks (continuation lines joined, comments dropped).
Every one must have its exit status in `EXPECTED`, so a command added to the README without one fails here.
The default run checks that every command is one the CLI accepts and runs the "Audit real logs" block and
the fast commands of "Using it"; where the README says "add --engine python" it is added (the Spark default
is run in the slow test). The slow test runs every command of the three blocks as written, Spark included.
Twin: a README naming a command that does not exist fails.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conformance.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
BLOCKS = ("Using it", "Audit real logs", "Check your own implementation")
PYTHON_OK = "add --engine python"  # the README's words that allow the single-process engine instead of Spark

SR_BUG = 'haconform conform sr --sut "python examples/sut/sr_node.py --bug ack-before-shadow"'
EXPECTED = {  # the README command (as written, comment dropped) -> its exit status
    "haconform spec": 0,
    "haconform spec SR-P13": 0,
    "haconform spec --interpretations": 0,
    "haconform coverage": 0,
    "haconform spec SR-P16": 0,
    "haconform simulate net --seed 7 --out t.jsonl": 0,
    "haconform simulate net --seed 7 --mutant seq-repeat --out bad.jsonl": 0,
    "haconform check traces/ --out out/check": 1,  # traces/ holds the mutant samples
    "haconform check traces/ --engine spark": 1,
    "haconform check traces/ --engine spark --spark-plan shuffle": 1,
    "haconform check t.jsonl --engine python": 0,
    "haconform check traces/ --skew 50": 1,
    "haconform ingest traces/ --out ds/ --files 8": 0,
    "haconform check ds/ --engine python": 1,
    "haconform check traces/ --state st/": 1,
    "haconform shrink traces/samples/mutants/sr--ack-before-shadow.jsonl --rule shadow-before-ack --out min.jsonl": 0,
    "haconform samples": 0,
    "haconform prove": 0,
    "haconform validate-config traces/samples/audit/deploy.toml": 0,
    "haconform validate-config traces/samples/audit/deploy-broken.toml": 1,
    "haconform upgrade old.jsonl --out new.jsonl": 2,  # old.jsonl stands for the user's version-1 trace: absent here
    "haconform protocol-doc": 0,
    "haconform import msgtrk traces/samples/audit/logs/violation --out t.parquet "
    "--boundary DAG1=mbx1,mbx2,mbx3 --reject-on-shadow-failure false": 0,
    "haconform check t.parquet --skew 100 --html report.html --junit junit.xml": 1,  # SR-052
    "haconform report out/check --html report.html": 0,
    "haconform shrink t.parquet --rule msgtrk-discard-after-next-hop --skew 100 --out min.jsonl": 0,
    "haconform check min.jsonl --engine python": 1,  # SR-052 again: the shrunk trace records --skew 100
    "haconform import copystatus traces/samples/audit/status.csv --out db01.json": 0,
    "haconform explain traces/samples/audit/status.txt --dial Lossless --trigger failure": 0,
    "haconform explain db01.json --dial Lossless": 0,
    "haconform explain tests/audit/data/copystatus/two-databases-fl.txt --database DB01": 0,
    "haconform import msgtrk tests/audit/data/pair-early-ack --out p.jsonl --boundary DAG1=mbx1,mbx2": 0,
    "haconform check p.jsonl --skew 100 --engine python": 1,  # SR-031: the 250 before the shadow's ack
    'haconform conform sr --sut "python examples/sut/sr_node.py"': 0,
    'haconform conform am --sut "python examples/sut/am_node.py"': 0,
    'haconform conform am --sut "python examples/sut/am_node.py --bug retry-failed-mount"': 1,
    "haconform replay tests/harness/replays/am-retry-failed-mount.json --mutant retry-failed-mount": 1,
    'haconform conform pf --sut "python examples/sut/pf_node.py"': 0,
    SR_BUG: 1,
    'haconform replay haconform-replay-sr.json --sut "python examples/sut/sr_node.py --bug ack-before-shadow"': 1,
    "haconform replay haconform-replay-sr.json": 0,
    'haconform conform pf --sut "python examples/sut/pf_node.py --bug status-claims-more"': 1,
    "haconform mutants sr": 0,
    "haconform explore sr --bound sr-2s-1m-crash": 0,
    "haconform explore am --servers 3 --messages 1 --faults 2 --kinds crash,partition --depth 4": 0,
    "haconform explore pf --all": 0,
    "haconform explore am --bound am-3s-1db-crash-partition --construction seed --end-choices 0": 0,
    "haconform explore am --mutant second-pam-after-partition --bound am-3s-1db-crash-partition": 1,  # found
    "haconform explore pf --servers 2 --messages 1 --faults 0 --kinds add_replica --depth 5 --no-ends "
    "--witness pf.replica_add.step1_before_step2": 1,  # the refuted claim's behaviour is found
}
FAST = {  # run in the default run (seconds each): the audit block and these
    "haconform spec SR-P13",
    "haconform simulate net --seed 7 --out t.jsonl",
    "haconform check t.jsonl --engine python",
    "haconform shrink traces/samples/mutants/sr--ack-before-shadow.jsonl --rule shadow-before-ack --out min.jsonl",
    "haconform validate-config traces/samples/audit/deploy.toml",
    "haconform validate-config traces/samples/audit/deploy-broken.toml",
    "haconform explore sr --bound sr-2s-1m-crash",
}


@dataclass(frozen=True)
class Command:
    block: str
    text: str  # as written, without its comment
    argv: tuple[str, ...]
    comment: str


def readme_commands(readme: str) -> list[Command]:
    """The commands of the first fenced bash block of each section in `BLOCKS`, in order."""
    out: list[Command] = []
    for block in BLOCKS:
        section = re.search(rf"^## {re.escape(block)}\n(.*?)(?=^## |\Z)", readme, re.S | re.M)
        assert section, f"README has no section {block!r}"
        fence = re.search(r"^```bash\n(.*?)^```", section.group(1), re.S | re.M)
        assert fence, f"README section {block!r} has no bash block"
        for line in re.sub(r"\\\n\s*", "", fence.group(1)).splitlines():
            argv = shlex.split(line, comments=True)
            if not argv:
                continue
            comment = m.group(1) if (m := re.search(r"\s#\s?(.*)$", line)) else ""
            out.append(Command(block, shlex.join(argv).replace("'", '"'), tuple(argv), comment))
    return out


def problems_of(commands: list[Command]) -> list[str]:
    """Commands the CLI would refuse (unknown command or option) or that have no known exit status."""
    found = []
    for c in commands:
        if c.argv[0] != "haconform":
            found.append(f"{c.text}: not a haconform command")
            continue
        try:
            build_parser().parse_args(list(c.argv[1:]))
        except SystemExit:
            found.append(f"{c.text}: the CLI refuses it")
        if c.text not in EXPECTED:
            found.append(f"{c.text}: no expected exit status in EXPECTED")
    return found


def fresh_copy(dest: Path) -> Path:
    """The repository's tracked files (as a fresh clone holds them), or its tree without outputs."""
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        names = [n for n in listed.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        names = []
    if names:
        for name in names:
            if (ROOT / name).is_file():
                (dest / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / name, dest / name)
    else:
        shutil.copytree(ROOT, dest, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".git", "out", "__pycache__"))
    return dest


def run(c: Command, cwd: Path, *, python_engine: bool, in_process: bool) -> tuple[int, str]:
    """One command with `cwd` as the working directory: a `haconform` process running the copy's code, or
    (`in_process`, the default run: no interpreter start per command) `conformance.cli.main`."""
    args = [*c.argv[1:], *(["--engine", "python"] if python_engine and PYTHON_OK in c.comment else [])]
    if in_process:
        here = Path.cwd()
        os.chdir(cwd)
        try:
            return main(args), ""
        except SystemExit as exc:  # argparse refusing the command line
            return int(exc.code or 0), ""
        finally:
            os.chdir(here)
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    argv = [sys.executable, "-m", "conformance", *args]
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1800, check=False)
    return done.returncode, (done.stdout + done.stderr)[-2000:]


def run_all(commands: list[Command], cwd: Path, *, python_engine: bool, in_process: bool = True) -> list[str]:
    failed = []
    for c in commands:
        status, tail = run(c, cwd, python_engine=python_engine, in_process=in_process)
        if status != EXPECTED.get(c.text, 0):
            failed.append(f"{c.text}: exit {status}, expected {EXPECTED.get(c.text, 0)}\n{tail}")
    return failed


README = (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.unit
def test_every_readme_command_is_a_command_with_a_known_exit_status():
    commands = readme_commands(README)
    assert {c.block for c in commands} == set(BLOCKS) and len(commands) >= 30
    assert problems_of(commands) == []


@pytest.mark.unit
def test_twin_a_readme_command_that_does_not_exist_fails(tmp_path):
    broken = README.replace("haconform spec SR-P13 ", "haconform specs SR-P13 ", 1)
    assert any("specs SR-P13: the CLI refuses it" in p for p in problems_of(readme_commands(broken)))
    made_up = [Command("Using it", "haconform frobnicate", ("haconform", "frobnicate"), "")]
    assert problems_of(made_up) and run_all(made_up, tmp_path, python_engine=True)  # refused, and fails to run


@pytest.mark.unit
def test_audit_block_and_fast_commands_run_as_written(tmp_path):
    chosen = [c for c in readme_commands(README) if c.block == "Audit real logs" or c.text in FAST]
    assert len(chosen) >= len(FAST) + 7
    assert run_all(chosen, fresh_copy(tmp_path), python_engine=True) == []
    assert (tmp_path / "report.html").is_file() and (tmp_path / "min.jsonl").is_file()


@pytest.mark.slow
def test_every_readme_command_runs_as_written(tmp_path):
    """All three blocks, in order, Spark included (`check traces/`, `check t.parquet` as written)."""
    assert run_all(readme_commands(README), fresh_copy(tmp_path), python_engine=False, in_process=False) == []
