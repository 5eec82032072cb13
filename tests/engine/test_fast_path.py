"""The optional compiled path (issue 32, `traces.fastpath`, `scripts/build_fast.py`): never loaded stale, and
the same bytes as the pure path.

Always run (`unit`, no build needed): the finder loads a listed module's compiled copy only when the sha256 of
its source and of its extension file are the manifest's (twins: an edited source, a replaced extension file,
a build for another interpreter, `HACONFORM_PURE`); the positive control finds a matching one.

With a build (`fast`, also `slow`; skipped with the reason without one; run them with
`python3 scripts/build_fast.py && python3 -m pytest -m fast tests/engine/test_fast_path.py`): every listed module
loads compiled; the sample corpus's reports and the verdict digests of the model and every mutant
(scripts/verdict_digest.py) are byte-identical compiled and with `HACONFORM_PURE=1`; twins: a compiled module
built from a deliberately different source (recorded with the real source's hash) gives a different report,
which the same comparison catches, and a build whose source hash is stale is not loaded by a real process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader
from pathlib import Path

import pytest

from traces import fastpath

ROOT = Path(__file__).resolve().parents[2]
BUILT, WHY = fastpath.read_manifest(fastpath.build_dir())
# a build older than an edited source is not compared (its module loads pure, as `haconform --version` says)
STALE = sorted(
    module
    for module, entry in (BUILT or {"modules": {}})["modules"].items()
    if fastpath.source_hashes(ROOT / (module.replace(".", "/") + ".py"))
    != {"source_sha256": entry["source_sha256"], "pxd_sha256": entry.get("pxd_sha256", "")}
)
if STALE:
    WHY = f"the build is older than the sources of {', '.join(STALE)}"
needs_build = pytest.mark.skipif(
    BUILT is None or bool(STALE),
    reason=f"no usable compiled build ({WHY}): `python3 scripts/build_fast.py` makes one (tests/README.md)",
)
SAMPLES = ("clean", "mutants")
DIGESTS = ("sr", "am", "pf")


def _fake_build(
    tmp_path: Path, *, source_text: str, built_text: str, binary: bytes, pxd_text: str | None = None
) -> tuple[Path, dict]:
    """A package `fakepkg` with `mod.py` holding `source_text`, and a build whose manifest records the hash of
    `built_text` as the source compiled and the hash of `binary` as its extension file; with `pxd_text`, a
    `mod.pxd` beside the source, recorded as compiled with it."""
    pkg = tmp_path / "src" / "fakepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text(source_text)
    build = tmp_path / "build"
    (build / "fakepkg").mkdir(parents=True)
    name = "fakepkg/mod" + EXTENSION_SUFFIXES[0]
    (build / name).write_bytes(binary)
    built = tmp_path / "built.py"
    built.write_text(built_text)
    entry = {
        "file": name,
        "sha256": fastpath.sha256_of(build / name),
        "source": "fakepkg/mod.py",
        "source_sha256": fastpath.sha256_of(built),
        "pxd_sha256": "",
    }
    if pxd_text is not None:
        (pkg / "mod.pxd").write_text(pxd_text)
        entry["pxd_sha256"] = fastpath.sha256_of(pkg / "mod.pxd")
    manifest = {"format": fastpath.FORMAT, "environment": fastpath.environment(), "modules": {"fakepkg.mod": entry}}
    (build / fastpath.MANIFEST).write_text(json.dumps(manifest))
    return pkg, manifest


@pytest.mark.unit
def test_a_matching_build_is_found(tmp_path: Path) -> None:
    """Positive control of the twins below: source and extension as recorded, the extension is the spec."""
    pkg, manifest = _fake_build(tmp_path, source_text="X = 1\n", built_text="X = 1\n", binary=b"\x7fELF")
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    spec = finder.find_spec("fakepkg.mod", [str(pkg)])
    assert spec is not None and isinstance(spec.loader, ExtensionFileLoader)
    assert finder.loaded == ["fakepkg.mod"] and not finder.stale
    assert finder.find_spec("fakepkg.other", [str(pkg)]) is None  # an unlisted module: the ordinary finders


@pytest.mark.unit
def test_an_edited_source_is_never_shadowed(tmp_path: Path) -> None:
    pkg, manifest = _fake_build(tmp_path, source_text="X = 2\n", built_text="X = 1\n", binary=b"\x7fELF")
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    assert finder.find_spec("fakepkg.mod", [str(pkg)]) is None
    assert "changed since the build" in finder.stale["fakepkg.mod"] and not finder.loaded


@pytest.mark.unit
def test_an_edited_pxd_makes_the_build_stale(tmp_path: Path) -> None:
    """Session 13: a module compiled with an augmenting `.pxd` (its C types) is loaded only while that `.pxd` is
    the one compiled. Control: as built. Twins: the `.pxd` edited, removed; a `.pxd` added to a module built
    without one."""
    pkg, manifest = _fake_build(
        tmp_path, source_text="X = 1\n", built_text="X = 1\n", binary=b"\x7fELF", pxd_text="cdef int y\n"
    )
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    assert finder.find_spec("fakepkg.mod", [str(pkg)]) is not None and not finder.stale  # control
    for change in ("edited", "removed"):
        if change == "edited":
            (pkg / "mod.pxd").write_text("cdef long y\n")
        else:
            (pkg / "mod.pxd").unlink()
        finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
        assert finder.find_spec("fakepkg.mod", [str(pkg)]) is None, change
        assert "mod.pxd changed, or was added or removed" in finder.stale["fakepkg.mod"], change
    manifest["modules"]["fakepkg.mod"]["pxd_sha256"] = ""  # built without one: control, then one added
    assert fastpath.CompiledFinder(tmp_path / "build", manifest).find_spec("fakepkg.mod", [str(pkg)]) is not None
    (pkg / "mod.pxd").write_text("cdef int y\n")
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    assert finder.find_spec("fakepkg.mod", [str(pkg)]) is None and "fakepkg.mod" in finder.stale


@pytest.mark.unit
def test_a_replaced_extension_file_is_not_loaded(tmp_path: Path) -> None:
    pkg, manifest = _fake_build(tmp_path, source_text="X = 1\n", built_text="X = 1\n", binary=b"\x7fELF")
    (tmp_path / "build" / manifest["modules"]["fakepkg.mod"]["file"]).write_bytes(b"\x7fELF other")
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    assert finder.find_spec("fakepkg.mod", [str(pkg)]) is None
    assert "is not the file built" in finder.stale["fakepkg.mod"]


@pytest.mark.unit
def test_a_build_for_another_interpreter_is_not_used(tmp_path: Path) -> None:
    _fake_build(tmp_path, source_text="X = 1\n", built_text="X = 1\n", binary=b"\x7fELF")
    assert fastpath.read_manifest(tmp_path / "build")[0] is not None  # control
    path = tmp_path / "build" / fastpath.MANIFEST
    manifest = json.loads(path.read_text())
    manifest["environment"]["suffix"] = ".cpython-399-x86_64-linux-gnu.so"
    path.write_text(json.dumps(manifest))
    found, why = fastpath.read_manifest(tmp_path / "build")
    assert found is None and "this interpreter is" in why
    manifest["format"] = 1  # a build from before the `.pxd` hashes: it never recorded them
    path.write_text(json.dumps(manifest))
    found, why = fastpath.read_manifest(tmp_path / "build")
    assert found is None and "manifest format 1" in why


def _version(env: dict[str, str]) -> str:
    out = subprocess.run(
        [sys.executable, "-m", "conformance", "--version"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (fastpath.PURE_ENV, fastpath.DIR_ENV, fastpath.TESTS_ENV)}
    env["PYTHONPATH"] = str(ROOT)
    env.update(extra)
    return env


@pytest.mark.unit
def test_pure_when_asked_or_without_a_build(tmp_path: Path) -> None:
    assert "pure Python (HACONFORM_PURE is set)" in _version(_env(HACONFORM_PURE="1"))
    assert "pure Python (no build at" in _version(_env(HACONFORM_FAST_DIR=str(tmp_path / "none")))


@pytest.mark.unit
def test_a_pytest_process_runs_pure() -> None:
    """The test process itself (see `traces.fastpath`); the CLI it starts is what `-m fast` compares."""
    assert fastpath.status()["compiled"] == [] or os.environ.get(fastpath.TESTS_ENV)


# --- with a build --------------------------------------------------------------------------------------------


def _check(sample: str, out: Path, env: dict[str, str]) -> dict[str, bytes]:
    """`haconform check` of one sample corpus: the report's files (the finishing time left out)."""
    cmd = [sys.executable, "-m", "conformance", "check", f"traces/samples/{sample}", "--engine", "python"]
    done = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    files = {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}
    summary = json.loads(files["summary.json"])
    summary.get("run", {}).pop("finished_utc", None)
    files["summary.json"] = json.dumps(summary, sort_keys=True).encode()
    said = re.sub(r" in [0-9.]+ s: [0-9,]+ events/s", "", done.stdout.replace(str(out), "OUT"))  # its speed
    files["stdout"] = said.encode()
    return files


def _differences(a: dict[str, bytes], b: dict[str, bytes]) -> list[str]:
    return [name for name in sorted(a.keys() | b.keys()) if a.get(name) != b.get(name)]


@pytest.mark.fast
@needs_build
def test_every_listed_module_loads_compiled() -> None:
    line = _version(_env())
    assert f"compiled path: {len(BUILT['modules'])} module(s) loaded compiled" in line, line  # type: ignore[index]
    assert "loaded pure" not in line, line


@pytest.mark.fast
@needs_build
@pytest.mark.parametrize("sample", SAMPLES)
def test_sample_reports_are_identical(sample: str, tmp_path: Path) -> None:
    compiled = _check(sample, tmp_path / "compiled", _env())
    pure = _check(sample, tmp_path / "pure", _env(HACONFORM_PURE="1"))
    assert _differences(compiled, pure) == []


@pytest.mark.fast
@needs_build
@pytest.mark.parametrize("mechanism", DIGESTS)
def test_verdict_digests_are_identical(mechanism: str) -> None:
    def digest(env: dict[str, str]) -> str:
        cmd = [sys.executable, "scripts/verdict_digest.py", mechanism, "--seeds", "3"]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    compiled, pure = digest(_env()), digest(_env(HACONFORM_PURE="1"))
    assert compiled.count("\n") > 100 and compiled == pure


EXPLORED = ("sr-2s-1m-crash", "am-3s-1db-crash-partition", "pf-2s-1f-replicas")  # each mechanism's first bound


@pytest.mark.fast
@needs_build
@pytest.mark.parametrize("bound", EXPLORED)
def test_explore_figures_are_identical(bound: str) -> None:
    """Session 12: the explorer's compiled modules (fingerprint, state copies, kernel, sr's idle jump) explore the
    same states, edges, levels and verdict as the pure ones."""

    def figures(env: dict[str, str]) -> dict[str, object]:
        cmd = [sys.executable, "-m", "conformance", "explore", bound.partition("-")[0], "--bound", bound, "--json"]
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        row = json.loads(done.stdout)
        kept = ("states", "transitions", "depth", "complete", "result", "violation", "states_per_level", "manifest")
        return {k: row[k] for k in kept}

    compiled, pure = figures(_env()), figures(_env(HACONFORM_PURE="1"))
    assert compiled["states"] and compiled == pure


TWIN = "conformance.engine.core_fold"
TWIN_FROM, TWIN_TO = "seq {e.seq} is recorded after seq", "seq {e.seq} comes after seq"


@pytest.mark.fast
@needs_build
def test_twin_a_different_compiled_module_is_caught(tmp_path: Path) -> None:
    """A compiled core fold built from an altered source but recorded with the real source's hash loads (the
    finder trusts the build's hashes) and changes a violation's text: the comparison above must see it; the
    same build with the real source edited since is stale and not loaded."""
    source = (ROOT / "conformance/engine/core_fold.py").read_text()
    assert TWIN_FROM in source
    altered = tmp_path / "core_fold.py"
    altered.write_text(source.replace(TWIN_FROM, TWIN_TO))
    build = tmp_path / "build"
    # session 16: with its cimport partner, the compiled `Event` (`core_fold.pxd`), or the build refuses it
    cmd = [sys.executable, "scripts/build_fast.py", "--out", str(build), "--jobs", "1"]
    cmd += ["--module", TWIN, "--module", "traces.event"]
    done = subprocess.run([*cmd, "--source", f"{TWIN}={altered}"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and (build / fastpath.MANIFEST).is_file(), done.stderr
    assert "compiled path: 2 module(s)" in _version(_env(HACONFORM_FAST_DIR=str(build)))
    twin = _check("mutants", tmp_path / "twin", _env(HACONFORM_FAST_DIR=str(build)))
    pure = _check("mutants", tmp_path / "pure", _env(HACONFORM_PURE="1"))
    assert "violations.jsonl" in _differences(twin, pure)
    assert TWIN_TO.split("}")[1].encode() in twin["violations.jsonl"]
    # stale: the manifest now says another source was compiled
    manifest = json.loads((build / fastpath.MANIFEST).read_text())
    manifest["modules"][TWIN]["source_sha256"] = fastpath.sha256_of(altered)
    (build / fastpath.MANIFEST).write_text(json.dumps(manifest))
    line = _version(_env(HACONFORM_FAST_DIR=str(build)))
    assert "loaded pure because" in line and TWIN in line, line
    assert _differences(_check("mutants", tmp_path / "stale", _env(HACONFORM_FAST_DIR=str(build))), pure) == []


# Session 13: a fold saved mid-trace by one path and continued by the other. The script runs in a process of its
# own (a pytest process runs pure): `save` feeds every group of a corpus its first half and writes the folds
# (`save_fold`); `load` continues them (`restore_fold`) with the second half; `whole` folds each group in one go.
# Each mode prints every group's verdict (violations, notes, what each rule judged and skipped), one JSON line.
_FOLDS = """
import json, pickle, sys
from pathlib import Path
from conformance.check import trace_contexts
from conformance.engine.stream import Context, groups_of
from model.registry import monitor_runs
from traces import fastpath
from traces.io import read_corpus
from traces.schema import is_context_kind
from traces.verdict import restore_fold, save_fold

mode, corpus, store = sys.argv[1:4]
cut = int(sys.argv[4]) if len(sys.argv) > 4 else 2  # `save` feeds the first 1/cut of each group (the twin: 3)
events = sorted(read_corpus([Path(corpus)]).events, key=lambda e: (e.trace_id, e.seq))
contexts = trace_contexts(events)
saved = pickle.loads(Path(store).read_bytes()) if mode == "load" else {}
out, keep = [], {}
for _, monitor in monitor_runs():
    reads = getattr(monitor, "reads", None)
    for key, group in sorted(groups_of(monitor, events).items()):
        if reads is not None:
            group = [e for e in group if e.mechanism in reads or is_context_kind(e.kind)]
        context = Context()
        context.extend(contexts.get(key[0], ()))
        half = len(group) // 2
        name = f"{monitor.mechanism}:{key}"
        if mode == "load":
            fold = restore_fold(saved[name])
            rest = group[half:]
        else:
            fold = monitor.start(context)
            rest = group if mode == "whole" else group[: len(group) // cut]
        for e in rest:
            fold.feed(e)
        if mode == "save":
            keep[name] = save_fold(fold)
            continue
        r = fold.finish()
        t = r.tally
        out.append([name, [v.to_json() for v in r.violations], list(r.notes), t.judged, t.unjudged])
if mode == "save":
    Path(store).write_bytes(pickle.dumps(keep))
print(json.dumps({"compiled": fastpath.status()["compiled"], "verdicts": out}))
"""


def _folds(mode: str, store: Path, env: dict[str, str], cut: int = 2) -> dict:
    args = [sys.executable, "-c", _FOLDS, mode, "traces/samples/mutants", str(store), str(cut)]
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.fast
@needs_build
def test_folds_saved_mid_trace_move_between_paths(tmp_path: Path) -> None:
    """Folds saved half way by the compiled path and continued by the pure one (and the other way) give the
    verdicts of one pure pass. Control: the script's processes ran the path they were meant to. Twin: folds saved
    a third of the way and continued from half way (the events between never fed) do not."""
    compiled, pure = _env(), _env(HACONFORM_PURE="1")
    whole = _folds("whole", tmp_path / "none", pure)
    assert not whole["compiled"] and len(whole["verdicts"]) > 20
    assert any(v[1] for v in whole["verdicts"])  # the mutants' corpus: violations found
    for saver, loader, name in ((compiled, pure, "c2p"), (pure, compiled, "p2c"), (compiled, compiled, "c2c")):
        saved = _folds("save", tmp_path / name, saver)
        assert bool(saved["compiled"]) == (saver is compiled)
        loaded = _folds("load", tmp_path / name, loader)
        assert bool(loaded["compiled"]) == (loader is compiled)
        assert loaded["verdicts"] == whole["verdicts"], name
    _folds("save", tmp_path / "twin", pure, cut=3)
    assert _folds("load", tmp_path / "twin", pure)["verdicts"] != whole["verdicts"]
