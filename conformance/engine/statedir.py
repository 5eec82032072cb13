"""The state directory of incremental checking (`haconform check PATHS --state DIR`): what a check of a corpus
leaves behind so that a later check of the same corpus, grown by new files or by lines appended to its JSON
Lines files, reads only the new events and gives the report a full check of everything would give.

Layout (every file written to a temporary directory beside DIR and renamed into place, so DIR always holds
one whole state of one run):
- `state.json`: the format, the key (`key()`: project version and a fingerprint of the code that folds,
  trace schema version, monitors, `--skew`), every file read (size, SHA-256 and line count of what was
  read), the counts, the whole quarantine, and for each trace the file holding its last event read
  (`last_file`: new events of the trace in a file read before that one would come earlier in recording
  order, so they cannot continue its folds);
- `folds.pickle`: trace -> its folds before finishing (`conformance.engine.stream.TraceFolds`, pickled), or
  None for a trace judged whole because it was recorded out of seq order (it cannot be continued);
- `results.pickle`: trace -> its report rows (violations with their events, unknown notes) and what its rules
  judged (`conformance.engine.tally.RuleCounts`), as last judged;
- `hashes.bin`: a stable 64-bit hash of every event ID (TR-002 across old and new events);
- `repeats.pickle`: the events of every hash seen more than once so far, each with its file's name, in
  recording order (`conformance.engine.resume.duplicates`: a later check that finds no newly repeated hash
  resolves TR-002 from them and the new events it kept, reading no earlier file); absent: not known;
- `locations.pickle`: where the events of `hashes.bin` were read (`Marks`: a mark every `CHUNK` rows, the
  file, byte and line or row it begins at), so that a hash that first repeats in a later check has its
  earlier events read from their marks' rows alone (`conformance.locations`); absent: not known (every
  file read for such a hash, as before).

Both drivers write and read this one format (`conformance.incremental`, `spark_trace_check.incremental`):
a state saved by either engine is continued by either. A different key is refused with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import shutil
import tempfile
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from traces.io import TraceFileError
from traces.schema import SCHEMA_VERSION

FORMAT = 4  # 2: last_file; 3: each trace's results hold what its rules judged (`tally.RuleCounts`); 4: locations
CHUNK = 1024  # rows between two marks of `Marks`: what is read to show one saved event again
UNKNOWN = -1  # a mark's file when where its events were read is not known
LINE_ONLY = -1  # a JSON Lines mark's byte when only its line is known (the Spark pass: found by counting lines)
_CODE = ("model", "conformance/engine", "conformance/audit", "traces")  # what decides a fold's state and results


class StateError(TraceFileError):
    """The state directory cannot be used for this check (named in the message): exit 2."""


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """SHA-256 over the source of the packages whose classes a saved fold holds (changed code: new state)."""
    root = Path(__file__).resolve().parent.parent.parent
    digest = hashlib.sha256()
    for top in _CODE:
        for path in sorted((root / top).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def key(monitors: list[str], skew_ms: int | None) -> dict[str, Any]:
    from importlib.metadata import PackageNotFoundError, version

    try:
        project = version("haconform")
    except PackageNotFoundError:
        project = "unknown"
    return {
        "format": FORMAT,
        "project": project,
        "code": code_fingerprint(),
        "schema_version": SCHEMA_VERSION,
        "monitors": monitors,
        "skew_ms": skew_ms,
    }


def stable_hash(event_id: str) -> int:
    """A 64-bit hash of an event ID that is the same in every process (Python's `hash` is salted)."""
    return int.from_bytes(hashlib.blake2b(event_id.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


@dataclass
class FileFacts:
    """What was read of one file: its size, the SHA-256 of those bytes and how many lines they hold."""

    size: int
    sha256: str
    lines: int
    kind: str

    @staticmethod
    def of(path: str, kind: str, size: int | None = None) -> FileFacts:
        digest, lines, left = hashlib.sha256(), 0, size
        with open(path, "rb") as handle:
            while left is None or left > 0:
                block = handle.read(1 << 20 if left is None else min(1 << 20, left))
                if not block:
                    break
                digest.update(block)
                lines += block.count(b"\n")
                if left is not None:
                    left -= len(block)
        read = os.path.getsize(path) if size is None else size
        return FileFacts(read, digest.hexdigest(), lines, kind)


@dataclass
class Marks:
    """Where the events of `State.hashes` were read: mark `m` says that the events from hash index `first[m]`
    on (up to the next mark's) are the events of the rows read from file `names[file[m]]` beginning at byte
    `byte[m]` (JSON Lines; 0 for Parquet) and line or row `row[m]`, `chunk` rows at most (TR-002 across
    checks, issue 32). About 32 bytes a mark, a mark per `chunk` rows: 31 KB per 10^6 events beside the 8 MB
    of their hashes. A mark of file `UNKNOWN` covers events read where no mark was kept (a Spark run before
    session 14, a state saved before marks): those are found by reading every file. A Spark run's JSON Lines
    marks know the line, not the byte (`LINE_ONLY`: the line is found by counting lines)."""

    chunk: int = field(default_factory=lambda: CHUNK)  # read when a state begins
    names: list[str] = field(default_factory=list)
    first: array = field(default_factory=lambda: array("q"))
    file: array = field(default_factory=lambda: array("q"))
    byte: array = field(default_factory=lambda: array("q"))
    row: array = field(default_factory=lambda: array("q"))

    def add(self, first: int, name: str | None, byte: int = 0, row: int = 0) -> None:
        """A mark: the events from hash index `first` on were read from `name` at `byte`, `row` (None: not known)."""
        if name is None:
            index = UNKNOWN
        else:
            if not self.names or self.names[-1] != name:
                self.names.append(name)  # a file read in several segments is named once per segment
            index = len(self.names) - 1
        self.first.append(first)
        self.file.append(index)
        self.byte.append(byte)
        self.row.append(row)

    def find(self, index: int) -> tuple[int, str, int, int] | None:
        """(the mark's number, its file, byte, row) of the event at hash index `index`; None: not known."""
        m = bisect_right(self.first, index) - 1
        if m < 0 or self.file[m] == UNKNOWN:
            return None
        return m, self.names[self.file[m]], self.byte[m], self.row[m]

    def dump(self) -> dict[str, Any]:
        columns = {name: getattr(self, name).tobytes() for name in ("first", "file", "byte", "row")}
        return {"chunk": self.chunk, "names": self.names, **columns}

    @staticmethod
    def load(saved: dict[str, Any]) -> Marks:
        marks = Marks(saved["chunk"], saved["names"])
        for name in ("first", "file", "byte", "row"):
            getattr(marks, name).frombytes(saved[name])
        return marks


@dataclass
class State:
    key: dict[str, Any]
    files: dict[str, FileFacts] = field(default_factory=dict)
    rows_read: int = 0
    rows_checked: int = 0
    by_mechanism: dict[str, int] = field(default_factory=dict)
    quarantine: list[dict] = field(default_factory=list)
    folds: dict[str, bytes | None] = field(default_factory=dict)
    results: dict[str, tuple[list[dict], list[dict], Any]] = field(default_factory=dict)  # rows, notes, RuleCounts
    hashes: array = field(default_factory=lambda: array("Q"))
    last_file: dict[str, str] = field(default_factory=dict)  # trace -> the file of its last event read
    # (file name, event) of every repeated hash, in recording order; None: not known (read the files)
    repeats: list[tuple[str, Any]] | None = field(default_factory=list)
    marks: Marks = field(default_factory=Marks)  # where the events of `hashes` were read
    previous: dict[str, tuple[list[dict], list[dict], Any]] = field(default_factory=dict)  # not saved


def saved_files(directory: Path) -> dict[str, FileFacts] | None:
    """The files a saved state read (`state.json` alone: no folds loaded), None when there is no state."""
    meta_path = directory / "state.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(meta_path.read_text())
    return {name: FileFacts(**facts) for name, facts in meta["files"].items()}


def load(directory: Path, want: dict[str, Any]) -> State | None:
    """The saved state, None when the directory does not exist yet; StateError when it cannot be used."""
    if not directory.exists():
        return None
    meta_path = directory / "state.json"
    if not meta_path.is_file():
        raise StateError(f"{directory}: not a haconform state directory (no state.json)")
    try:
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as exc:
        raise StateError(f"{directory}/state.json: unreadable ({exc})") from exc
    got = meta.get("key", {})
    differ = [k for k in want if got.get(k) != want[k]]
    if differ:
        said = "; ".join(f"{k}: saved {got.get(k)!r}, now {want[k]!r}" for k in differ)
        raise StateError(
            f"{directory}: the state was saved by another configuration or version ({said}); "
            "check without --state, or give a new state directory"
        )
    state = State(want, rows_read=meta["rows_read"], rows_checked=meta["rows_checked"])
    state.files = {name: FileFacts(**facts) for name, facts in meta["files"].items()}
    state.by_mechanism, state.quarantine = meta["by_mechanism"], meta["quarantine"]
    state.last_file = meta["last_file"]
    with open(directory / "folds.pickle", "rb") as handle:
        state.folds = pickle.load(handle)
    with open(directory / "results.pickle", "rb") as handle:
        state.results = pickle.load(handle)
    with open(directory / "hashes.bin", "rb") as handle:
        state.hashes.frombytes(handle.read())
    repeats = directory / "repeats.pickle"
    state.repeats = None
    if repeats.is_file():
        with open(repeats, "rb") as handle:
            state.repeats = pickle.load(handle)
    locations = directory / "locations.pickle"
    if locations.is_file():
        with open(locations, "rb") as handle:
            state.marks = Marks.load(pickle.load(handle))
    elif state.hashes:
        state.marks.add(0, None)  # saved without marks: where its events were read is not known
    return state


def save(directory: Path, state: State) -> None:
    """Write the whole state beside `directory` and rename it into place."""
    directory = directory.resolve()
    directory.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=directory.parent))
    try:
        meta = {
            "key": state.key,
            "files": {name: vars(facts) for name, facts in state.files.items()},
            "rows_read": state.rows_read,
            "rows_checked": state.rows_checked,
            "by_mechanism": state.by_mechanism,
            "quarantine": state.quarantine,
            "last_file": state.last_file,
        }
        (tmp / "state.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
        with open(tmp / "folds.pickle", "wb") as handle:
            pickle.dump(state.folds, handle, protocol=pickle.HIGHEST_PROTOCOL)
        with open(tmp / "results.pickle", "wb") as handle:
            pickle.dump(state.results, handle, protocol=pickle.HIGHEST_PROTOCOL)
        with open(tmp / "hashes.bin", "wb") as handle:
            state.hashes.tofile(handle)
        if state.repeats is not None:
            with open(tmp / "repeats.pickle", "wb") as handle:
                pickle.dump(state.repeats, handle, protocol=pickle.HIGHEST_PROTOCOL)
        with open(tmp / "locations.pickle", "wb") as handle:
            pickle.dump(state.marks.dump(), handle, protocol=pickle.HIGHEST_PROTOCOL)
        old = None
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}-old-", dir=directory.parent))
            os.rename(directory, old / "state")
        os.rename(tmp, directory)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
