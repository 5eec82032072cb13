"""`traces.schema.Event` across the compiled and pure paths (issue 32, session 16): a `cdef class` in the compiled
build (`traces/event.pxd`), the plain class of `traces/event.py` in the pure path.

A pickle of events made by one path loads in the other as equal events, with the same `repr`; `dataclasses.replace`
and `dataclasses.fields` work on both; an event is unhashable on both. A pickle made before session 16, when `Event`
was a slotted dataclass (`OLD`, made by main a36e72d), loads on both (saved folds hold events). Each path runs in a
process of its own (a pytest process runs pure). The pure round trip and its twin are `unit` (no build): an `Event`
whose `__reduce__` drops a field gives a pickle that loads as another event, and the comparison catches it. The
crossings are `fast` (they need a build, `python3 scripts/build_fast.py`). The core rules' folds
(`conformance.engine.core_fold.TraceRulesFold` and `HeldRulesFold`, also `cdef class`es when compiled) are pickled
beside the events and must finish as the unpickled ones do; twin: a fold's `__reduce__` that drops its tally.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.engine.test_fast_records import _env  # a process environment on one path
from traces import fastpath

ROOT = Path(__file__).resolve().parents[2]
BUILT, WHY = fastpath.read_manifest(fastpath.build_dir())
FRESH = BUILT is not None and fastpath.source_hashes(ROOT / "traces" / "event.py") == {
    k: BUILT["modules"].get("traces.event", {}).get(k, "") for k in ("source_sha256", "pxd_sha256")
}
needs_build = pytest.mark.skipif(not FRESH, reason=f"no fresh compiled build of traces.event ({WHY})")
# [e, e] pickled (protocol 4) by main a36e72d, pure, where `Event` was a slotted dataclass; e is `events()[0]`
OLD = (
    "gASV3AAAAAAAAABdlCiMDXRyYWNlcy5zY2hlbWGUjAVFdmVudJSTlCmBlE59lCiMCHRyYWNlX2lklIwDdC0xlIwDc2VxlEsHjAhldmVudF9pZJS"
    "MA2UtN5SMBXRzX21zlIoGAGjlz4sBjARub2RllIwDRVgxlIwJbWVjaGFuaXNtlIwCc3KUjAZlbnRpdHmUjAVtc2ctMZSMBGtpbmSUjApIQVJFRE"
    "lSRUNUlIwFYXR0cnOUfZQojAFhlF2UKEsBSwJljAFilIwBeJR1jA5zY2hlbWFfdmVyc2lvbpRLAnWGlGJoBGUu"
)

# `dump` pickles `events()` and `folds()` (the core rules' folds, `cdef class`es when compiled, fed some of them) to
# a file; `load` reads one and says whether the events equal `events()` and the folds finish as `folds()` do; both
# print whether traces.event and the core fold run compiled and the repr. `dump-twin` pickles with
# `Event.__reduce__` dropping `attrs`, `dump-twin-fold` with the core fold's dropping its tally.
_SCRIPT = """
import base64, dataclasses, json, pickle, sys
from pathlib import Path
from traces import fastpath
from traces.schema import Event
from conformance.engine.core_fold import HeldRulesFold, TraceRulesFold

def events():
    e = Event("t-1", 7, "e-7", 1_700_000_000_000, "EX1", "sr", "msg-1", "HAREDIRECT", {"a": [1, 2], "b": "x"})
    f = Event(trace_id="t-1", seq=8, event_id="e-8", ts_ms=5, node="EX2", mechanism="core", entity="n", kind="CRASH")
    return [e, f, e, dataclasses.replace(f, seq=9, attrs={"k": None})]

def folds():
    plain = TraceRulesFold("t-1")
    for e in events()[:2]:
        plain.feed(e)
    return [plain, HeldRulesFold("t-1", events()[::-1])]  # out of seq order: TR-001 judged on the recording order

def outcome(fold):  # what finishing a fold gives: its violations and what each rule judged or skipped
    found = [repr(v) for v in fold.finish()]
    return [type(fold).__name__, found, sorted(fold.tally.judged.items()), sorted(fold.tally.unjudged.items())]

mode, store, old = sys.argv[1:4]
if mode == "dump-twin":
    Event.__reduce__ = lambda self: (Event, self._values()[:-2])  # drops `attrs` (and the version: its default)
if mode == "dump-twin-fold":  # the tally (what the rules judged so far) not pickled: a new one
    from conformance.engine.core_fold import restored
    from traces.verdict import Tally
    TraceRulesFold.__reduce__ = lambda self: (restored, (type(self), (*self._values()[:8], Tally(), self.trace)))
if mode.startswith("dump"):
    Path(store).write_bytes(pickle.dumps([events(), folds()]))
    got, fed = events(), folds()
else:
    got, fed = pickle.loads(Path(store).read_bytes())
same = got == events() and not got != events() and got[0] is got[2]
same_folds = [outcome(f) for f in fed] == [outcome(f) for f in folds()]
before = pickle.loads(base64.b64decode(old))
try:
    hash(got[0])
    hashable = True
except TypeError:
    hashable = False
compiled = fastpath.status()["compiled"]
print(json.dumps({"compiled": "traces.event" in compiled, "core": "conformance.engine.core_fold" in compiled,
                  "same": same, "same_folds": same_folds, "repr": repr(got),
                  "old": before == [events()[0]] * 2 and before[0] is before[1], "hashable": hashable,
                  "fields": [f.name for f in dataclasses.fields(Event)]}))
"""


def _run(mode: str, store: Path, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode, str(store), OLD], cwd=ROOT, env=env, capture_output=True
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


FIELDS = ["trace_id", "seq", "event_id", "ts_ms", "node", "mechanism", "entity", "kind", "attrs", "schema_version"]


@pytest.mark.unit
def test_events_round_trip_pure_and_a_dropped_field_is_caught(tmp_path: Path) -> None:
    pure = _env(HACONFORM_PURE="1")
    dumped = _run("dump", tmp_path / "p", pure)
    loaded = _run("load", tmp_path / "p", pure)
    assert not dumped["compiled"] and loaded["same"] and loaded["old"] and not loaded["hashable"]
    assert loaded["same_folds"] and not dumped["core"]
    assert loaded["repr"] == dumped["repr"] and loaded["fields"] == FIELDS
    assert "Event(trace_id='t-1', seq=7, event_id='e-7', ts_ms=1700000000000, node='EX1'" in dumped["repr"]
    # twin: a `__reduce__` that drops a field loads as another event
    _run("dump-twin", tmp_path / "twin", pure)
    twin = _run("load", tmp_path / "twin", pure)
    assert not twin["same"] and twin["repr"] != dumped["repr"]
    # twin: the core fold's `__reduce__` dropping what its rules judged so far is caught by finishing the folds
    _run("dump-twin-fold", tmp_path / "twin-fold", pure)
    twin = _run("load", tmp_path / "twin-fold", pure)
    assert twin["same"] and not twin["same_folds"]


@pytest.mark.fast
@needs_build
def test_events_cross_between_compiled_and_pure(tmp_path: Path) -> None:
    compiled, pure = _env(), _env(HACONFORM_PURE="1")
    for saver, loader, name in ((compiled, pure, "c2p"), (pure, compiled, "p2c"), (compiled, compiled, "c2c")):
        dumped = _run("dump", tmp_path / name, saver)
        loaded = _run("load", tmp_path / name, loader)
        assert dumped["compiled"] is (saver is compiled) and loaded["compiled"] is (loader is compiled), name
        assert dumped["core"] is (saver is compiled) and loaded["core"] is (loader is compiled), name
        assert loaded["same"] and loaded["old"] and not loaded["hashable"] and loaded["same_folds"], name
        assert loaded["repr"] == dumped["repr"] and loaded["fields"] == FIELDS, name
