"""The compiled path's cimport partners (issue 32, session 15: `traces.fastpath`, manifest format 3).

A compiled module that cimports another project module's declarations (pf's handlers and deadlines typed with
the `cdef class` records of `model/pf/state.pxd`) reads that module's objects as C structs: it must load only
together with a compiled copy of that module from the same build. `scripts/build_fast.py` lists each module's
cimports in the manifest; the finder refuses the module (it loads pure, `status()` says why) when a partner is
not in the build, changed since it, or was loaded pure.

`unit` (no build): a fake build of two modules, `fakepkg.user` cimporting `fakepkg.rec`. Control: both as built,
the user's extension is found. Twins (each fails with the partner check removed, since the user's own files are
as built): the partner's source edited, its `.pxd` edited, its extension replaced, the partner not in the build,
the partner already imported pure, a partner's partner stale. The cimport lines are read from `.pxd` files and
from `cython.cimports` in a source (twin: `cimport cython` and `libc` are not project modules).

`fast` and `slow` (a copy of the tree with a real build of `model.pf.state` and `model.pf.deadlines`, about
40 s): as built, both load compiled and a check of the mutants' samples gives the pure path's violations; with
`Replica`'s slots reordered in the copy's `state.py` since the build, `model.pf.deadlines` loads pure too,
naming its partner, and the check still gives the pure violations. Twin: the same build with the cimports left
out of its manifest loads the typed module against the edited pure records (same size, fields elsewhere) and the
check's verdicts differ (or it fails): what the partner check prevents.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from traces import fastpath

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import build_fast  # noqa: E402

HAS_CYTHON = not build_fast.missing()


def _two_modules(tmp_path: Path) -> tuple[Path, dict]:
    """Package `fakepkg` with `rec.py` (+ `rec.pxd`) and `user.py` (+ `user.pxd`, cimporting `fakepkg.rec`), and a
    build whose manifest records both as compiled, with `user`'s cimports."""
    pkg = tmp_path / "src" / "fakepkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    files = {
        "rec.py": "class Rec:\n    pass\n",
        "rec.pxd": "cdef class Rec:\n    cdef public object a\n",
        "user.py": "def get(r):\n    return r.a\n",
        "user.pxd": "from fakepkg.rec cimport Rec\n",
    }
    for name, text in files.items():
        (pkg / name).write_text(text)
    build = tmp_path / "build"
    (build / "fakepkg").mkdir(parents=True)
    modules = {}
    for mod, partners in (("rec", []), ("user", ["fakepkg.rec"])):
        binary = build / "fakepkg" / (mod + EXTENSION_SUFFIXES[0])
        binary.write_bytes(b"\x7fELF " + mod.encode())
        modules[f"fakepkg.{mod}"] = {
            "file": str(binary.relative_to(build)),
            "sha256": fastpath.sha256_of(binary),
            "source": f"fakepkg/{mod}.py",
            **fastpath.source_hashes(pkg / f"{mod}.py"),
            "cimports": partners,
        }
    manifest = {"format": fastpath.FORMAT, "environment": fastpath.environment(), "modules": modules}
    (build / fastpath.MANIFEST).write_text(json.dumps(manifest))
    return pkg, manifest


def _user(tmp_path: Path, manifest: dict, pkg: Path) -> fastpath.CompiledFinder:
    """A fresh finder asked for `fakepkg.user` (not imported: the finder is asked directly)."""
    finder = fastpath.CompiledFinder(tmp_path / "build", manifest)
    finder.find_spec("fakepkg.user", [str(pkg)])
    return finder


@pytest.mark.unit
def test_a_module_loads_with_its_compiled_partner(tmp_path: Path) -> None:
    """Control of the twins below: user and partner as built."""
    pkg, manifest = _two_modules(tmp_path)
    finder = _user(tmp_path, manifest, pkg)
    assert finder.loaded == ["fakepkg.user"] and not finder.stale
    assert "fakepkg.rec" not in sys.modules  # the partner was checked, not imported


@pytest.mark.unit
@pytest.mark.parametrize("change", ["source", "pxd", "extension"])
def test_a_stale_partner_keeps_its_user_pure(tmp_path: Path, change: str) -> None:
    pkg, manifest = _two_modules(tmp_path)
    if change == "source":
        (pkg / "rec.py").write_text("class Rec:\n    b = 1\n")
    elif change == "pxd":
        (pkg / "rec.pxd").write_text("cdef class Rec:\n    cdef public object a, b\n")
    else:
        (tmp_path / "build" / manifest["modules"]["fakepkg.rec"]["file"]).write_bytes(b"\x7fELF other")
    finder = _user(tmp_path, manifest, pkg)
    assert finder.loaded == [], change  # the user's own files are as built: only its partner refuses it
    why = finder.stale["fakepkg.user"]
    assert why.startswith("it cimports fakepkg.rec, which would load pure"), why


@pytest.mark.unit
def test_a_partner_outside_the_build_or_loaded_pure_keeps_its_user_pure(tmp_path: Path, monkeypatch) -> None:
    pkg, manifest = _two_modules(tmp_path)
    rec = manifest["modules"].pop("fakepkg.rec")
    finder = _user(tmp_path, manifest, pkg)
    assert not finder.loaded and "fakepkg.rec, which is not in this build" in finder.stale["fakepkg.user"]
    manifest["modules"]["fakepkg.rec"] = rec
    monkeypatch.setitem(sys.modules, "fakepkg.rec", object())  # imported already, not by this finder
    finder = _user(tmp_path, manifest, pkg)
    assert not finder.loaded and "fakepkg.rec, which was loaded pure" in finder.stale["fakepkg.user"]


@pytest.mark.unit
def test_a_partners_partner_is_checked(tmp_path: Path) -> None:
    """`user` cimports `rec`, which cimports `base`: a stale `base` keeps both pure (control: `base` as built)."""
    pkg, manifest = _two_modules(tmp_path)
    (pkg / "base.py").write_text("X = 1\n")
    binary = tmp_path / "build" / "fakepkg" / ("base" + EXTENSION_SUFFIXES[0])
    binary.write_bytes(b"\x7fELF base")
    manifest["modules"]["fakepkg.base"] = {
        "file": str(binary.relative_to(tmp_path / "build")),
        "sha256": fastpath.sha256_of(binary),
        **fastpath.source_hashes(pkg / "base.py"),
        "cimports": [],
    }
    manifest["modules"]["fakepkg.rec"]["cimports"] = ["fakepkg.base", "fakepkg.user"]  # a cycle, too
    assert _user(tmp_path, manifest, pkg).loaded == ["fakepkg.user"]  # control
    (pkg / "base.py").write_text("X = 2\n")
    finder = _user(tmp_path, manifest, pkg)
    assert not finder.loaded and "fakepkg.base, which would load pure" in finder.stale["fakepkg.user"]


@pytest.mark.unit
def test_cimport_lines_are_read(tmp_path: Path, monkeypatch) -> None:
    """The build's reading of cimports: `.pxd` forms and a source's `cython.cimports`; not `cython` or `libc`
    (no `.pxd` of theirs in the tree); a module's own name is no partner."""
    monkeypatch.setattr(build_fast, "ROOT", tmp_path)
    pkg = tmp_path / "p"
    pkg.mkdir()
    for name in ("a", "b", "c", "d"):
        (pkg / f"{name}.pxd").write_text("")
    (pkg / "a.py").write_text("from cython.cimports.p.d import X\nimport cython\n")
    (pkg / "a.pxd").write_text("cimport cython\nfrom libc.math cimport sqrt\nfrom p.b cimport B\ncimport p.c as c\n")
    assert build_fast.cimports_of("p.a", pkg / "a.py") == ["p.b", "p.c", "p.d"]
    (pkg / "a.pxd").write_text("from p.a cimport Self\n")
    (pkg / "a.py").write_text("X = 1\n")
    assert build_fast.cimports_of("p.a", pkg / "a.py") == []


@pytest.mark.unit
def test_the_shadow_changes_nothing() -> None:
    """The pure path's stand-in for `cython` (`fastpath.shadow`): the decorator returns the function itself."""

    def f(x: int) -> int:
        return x + 1

    assert fastpath.shadow.locals(x=int)(f) is f and fastpath.shadow.cast(int, "a") == "a"
    assert fastpath.shadow.compiled is False


# --- a real build of a typed user and its records, in a copy of the tree ---------------------------------------

PAIR = ("model.pf.state", "model.pf.deadlines")
# built with them: the partners they cimport in turn, the records' bases (session 15) and the fold's state, which
# `deadlines` types its methods' `self` with (session 16), and am's records, whose bases those are (a pure subclass
# of a compiled `Value` cannot set its fields); none of these cimports `model.pf.state`
BASES = ("model.kernel.records", "model.pf.foldstate")
AM_RECORDS = ("model.am.state", "model.am.bcss")  # (not imported by `_STATUS`: it imports pf's monitor)
_STATUS = "import json, model.pf.monitor; from traces import fastpath; print(json.dumps(fastpath.status()))"
# the twin's edit of the copy's records: `Replica`'s slots in another order. The pure class works as before; a
# compiled user built against the `.pxd`'s order reads one field for another.
SLOTS = "    __slots__ = __fields__\n"
REORDERED = "    __slots__ = (*__fields__[1:], __fields__[0])  # a layout the build did not see\n"


def _env(tree: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (fastpath.PURE_ENV, fastpath.DIR_ENV, fastpath.TESTS_ENV)}
    env["PYTHONPATH"] = str(tree)
    env.update(extra)
    return env


def _run(tree: Path, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True)


def _violations(tree: Path, out: Path, env: dict[str, str]) -> bytes | str:
    """The violations of a check of the mutants' sample corpus, or the error output of a failed check."""
    args = ["-m", "conformance", "check", "traces/samples/mutants", "--engine", "python", "--quiet", "--out", str(out)]
    done = _run(tree, args, env)
    return (out / "violations.jsonl").read_bytes() if done.returncode == 1 else done.stderr


@pytest.mark.fast
@pytest.mark.slow
@pytest.mark.skipif(not HAS_CYTHON, reason=f"no compiled build can be made here ({build_fast.missing()})")
def test_a_typed_user_loads_only_with_its_compiled_records(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(ROOT, tree, ignore=shutil.ignore_patterns(".git", ".fast", "__pycache__", ".pytest_cache"))
    args = ["scripts/build_fast.py", "--jobs", "1", *(f"--module={m}" for m in (*PAIR, *BASES, *AM_RECORDS))]
    done = _run(tree, args, _env(tree))
    assert done.returncode == 0, done.stderr
    path = tree / ".fast" / fastpath.MANIFEST
    manifest = json.loads(path.read_text())
    assert manifest["modules"]["model.pf.deadlines"]["cimports"] == ["model.pf.foldstate", "model.pf.state"]
    pure = _violations(tree, tmp_path / "pure", _env(tree, HACONFORM_PURE="1"))
    assert isinstance(pure, bytes) and pure
    # control: both compiled, the same violations as the pure path
    status = _run(tree, ["-c", _STATUS], _env(tree))
    assert status.returncode == 0 and json.loads(status.stdout)["compiled"] == sorted((*PAIR, *BASES)), status.stderr
    assert _violations(tree, tmp_path / "built", _env(tree)) == pure
    # the records' source edited since the build: both load pure, the partner named, the verdicts the pure ones
    state = tree / "model" / "pf" / "state.py"
    text = state.read_text()
    assert text.count(SLOTS) == 5 and text.rindex(SLOTS) > text.index("class Replica(")
    state.write_text(text[: text.rindex(SLOTS)] + REORDERED + text[text.rindex(SLOTS) + len(SLOTS) :])
    said = json.loads(_run(tree, ["-c", _STATUS], _env(tree)).stdout)
    assert said["compiled"] == sorted(BASES), said
    assert "it cimports model.pf.state" in said["stale"]["model.pf.deadlines"], said
    assert _violations(tree, tmp_path / "stale", _env(tree)) == pure
    # twin: the same build without its cimports recorded loads the typed user against the edited pure records
    manifest["modules"]["model.pf.deadlines"]["cimports"] = []
    path.write_text(json.dumps(manifest))
    said = json.loads(_run(tree, ["-c", _STATUS], _env(tree)).stdout)
    assert said["compiled"] == sorted((*BASES, "model.pf.deadlines")), said
    assert _violations(tree, tmp_path / "twin", _env(tree)) != pure
