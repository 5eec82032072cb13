"""sr's fold world as a record (issue 32, session 26): `model.sr.world.World` lists its fields (`__fields__`, its
`__slots__` in the pure path; a `cdef class` in the compiled build, `world.pxd`) and is pickled and copied through
`traces.verdict.restored`. The explorer's fingerprint of a world is the one the plain class gave (pinned below: main
459882f, pure), for the world itself, a pickled copy and a `copy.copy`, on both paths. Twins: a `World.__reduce__`
that drops the messages gives another fingerprint; a field outside the list cannot be set (no `__dict__`).
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
FRESH = BUILT is not None and fastpath.source_hashes(ROOT / "model/sr/world.py") == {
    k: BUILT["modules"].get("model.sr.world", {}).get(k, "") for k in ("source_sha256", "pxd_sha256")
}
# A fold's world halfway through each trace (a mutant's and the model's), when `World` was a plain class (main
# 459882f, pure): the same now, for the world, its pickled copy and its `copy.copy`.
PINNED = {"ack-before-shadow": "36ba35f6e3f37a0054b3f3cd884ee661", "None": "af896089f2c0029c6dcfa6cd7c638bef"}

_SCRIPT = """
import copy, json, pickle, sys
from conformance.explore.fingerprint import fingerprint
from model.registry import get
from model.sr.monitor import SrMonitor
from model.sr.world import World
from traces import fastpath
from traces.verdict import restored

if sys.argv[1] == "twin":  # the messages not pickled
    World.__reduce__ = lambda self: (restored, (type(self), tuple({} if n == "msgs" else getattr(self, n)
                                                                  for n in self.__fields__)))
out = {"compiled": "model.sr.world" in fastpath.status()["compiled"]}
for run, seed in (("ack-before-shadow", 2), (None, 5)):
    sims = get("sr")
    events = sorted((sims.mutants[run] if run else sims.simulate)(seed), key=lambda e: e.seq)
    fold = SrMonitor().start(())
    for e in events[: len(events) // 2]:
        fold.feed(e)
    w = fold.world
    copies = (w, pickle.loads(pickle.dumps(w)), copy.copy(w))
    out[str(run)] = sorted({fingerprint([c]) for c in copies})
try:
    w.unlisted = 1
    out["unlisted"] = "set"
except AttributeError:
    out["unlisted"] = "refused"
print(json.dumps(out))
"""


def _run(mode: str, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", _SCRIPT, mode], cwd=ROOT, env=env, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.unit
def test_the_world_fingerprints_as_the_plain_class_did_and_a_dropped_field_is_caught() -> None:
    got = _run("plain", _env(HACONFORM_PURE="1"))
    assert not got["compiled"] and got["unlisted"] == "refused"
    assert {k: got[k] for k in PINNED} == {k: [v] for k, v in PINNED.items()}
    twin = _run("twin", _env(HACONFORM_PURE="1"))
    assert all(len(twin[k]) == 2 and v in twin[k] for k, v in PINNED.items()), twin  # the pickled copy differs


@pytest.mark.fast
@pytest.mark.skipif(not FRESH, reason=f"no fresh compiled build of model.sr.world ({WHY})")
def test_the_compiled_world_fingerprints_the_same() -> None:
    got = _run("plain", _env())
    assert got["compiled"] and got["unlisted"] == "refused"
    assert {k: got[k] for k in PINNED} == {k: [v] for k, v in PINNED.items()}
