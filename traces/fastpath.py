"""The optional compiled path (issue 32, "half the cost per event"): compiled copies of the hot pure-Python
modules, loaded only while each still matches its source byte for byte.

`scripts/build_fast.py` compiles the modules it lists (the reader, the engine, the mechanisms' folds) with
Cython into a directory of their own beside the packages (`.fast/`, git-ignored), with a manifest: per
module the sha256 of the source compiled (and of its augmenting `.pxd`, when it has one: session 13) and of
the extension file built, and the Python and Cython versions. `install()` (called by every top-level
package's `__init__`, so by every process that imports the project: the CLI, the tests, Spark's workers)
puts a finder first on `sys.meta_path` when that manifest exists and `HACONFORM_PURE` is not set. Asked for
a listed module, the finder hashes the source the ordinary import would load, the `.pxd` beside it and the
extension file; it loads the extension only when all are the manifest's (a `.pxd` added or removed since
the build counts as edited), so an edited source is never shadowed by a stale build: the pure module loads
instead, and `status()` names it stale. Pickles name classes by module and qualified name, the same on
either path, so saved folds and Spark's tasks move between a compiled and a pure process
(tests/engine/test_fast_path.py saves folds half way on one path and continues them on the other).

`HACONFORM_FAST_DIR` names another build directory (the tests build twins there). The pure path is the
definition; the compiled one must give the same bytes (tests/engine/test_fast_path.py). A pytest process
itself runs the pure path unless `HACONFORM_FAST_IN_TESTS=1`: tests patch module attributes and builtins
(a compiled module binds builtins such as `open` when it is imported, so a test counting a module's opens
through `builtins.open` sees none); the processes a test starts (the CLI, Spark's workers) and
`python3 -m pytest -m fast` run the compiled one.

Session 15 (format 3): a compiled module that `cimport`s another module's C types (pf's handlers typed with the
`cdef class` records of `model/pf/state.pxd`) reads that module's objects as C structs, so it is loaded only
together with it: the manifest lists, per module, the project modules it cimports (`cimports`), and the finder
loads it only when each of them loads compiled from this build too (in `sys.modules` already, loaded by this
finder; or not yet imported, listed and as built, its own partners likewise). Otherwise it loads pure, and
`status()` names the partner. The typed locals themselves are written in the pure-Python source
(`@cython.locals`), with `shadow` below standing in for the `cython` module when the source runs pure.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec
from importlib.util import spec_from_file_location
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent  # the directory holding the packages
MANIFEST = "manifest.json"
PURE_ENV = "HACONFORM_PURE"
TESTS_ENV = "HACONFORM_FAST_IN_TESTS"
DIR_ENV = "HACONFORM_FAST_DIR"
FORMAT = 3  # the manifest's format (2: the `.pxd` hashes, session 13; 3: the cimports, session 15)


def build_dir() -> Path:
    """Where the build is looked for: `HACONFORM_FAST_DIR`, else `.fast/` beside the packages."""
    return Path(os.environ.get(DIR_ENV) or ROOT / ".fast")


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def source_hashes(source: Path) -> dict[str, str]:
    """What the manifest records of a module's source: its sha256 and its `.pxd`'s ('' when it has none)."""
    pxd = source.with_suffix(".pxd")
    return {"source_sha256": sha256_of(source), "pxd_sha256": sha256_of(pxd) if pxd.is_file() else ""}


def environment() -> dict[str, str]:
    """What an extension is bound to: the interpreter's ABI (its extension suffix) and version."""
    return {"python": sys.version.split()[0], "suffix": EXTENSION_SUFFIXES[0]}


class CompiledFinder(MetaPathFinder):
    """Finds a listed module's compiled copy when its source and extension hashes are the manifest's."""

    def __init__(self, directory: Path, manifest: dict[str, Any]) -> None:
        self.directory = directory
        self.modules: dict[str, dict[str, str]] = manifest["modules"]
        self.loaded: list[str] = []  # modules loaded compiled, in import order
        self.stale: dict[str, str] = {}  # module -> why its pure source was loaded instead
        self.checked: dict[Path, str] = {}  # source -> why its compiled copy must not load ('' when it may)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        entry = self.modules.get(fullname)
        if entry is None or not path:
            return None
        source = Path(next(iter(path))) / (fullname.rpartition(".")[2] + ".py")
        why = self._mismatch(source, entry) or self._partners(fullname, source, {fullname})
        if why:
            self.stale[fullname] = why
            return None
        binary = self.directory / entry["file"]
        spec = spec_from_file_location(fullname, binary, loader=ExtensionFileLoader(fullname, str(binary)))
        if spec is not None:
            self.loaded.append(fullname)
        return spec

    def _mismatch(self, source: Path, entry: dict[str, str]) -> str:
        """Why the compiled copy must not load ('' when it may); a file's hashes taken once per finder."""
        why = self.checked.get(source)
        if why is None:
            why = self.checked[source] = self._hashes_differ(source, entry)
        return why

    def _hashes_differ(self, source: Path, entry: dict[str, str]) -> str:
        if not source.is_file():
            return f"no source at {source}"
        if sha256_of(source) != entry["source_sha256"]:
            return f"{source} changed since the build"
        pxd = source.with_suffix(".pxd")
        if (sha256_of(pxd) if pxd.is_file() else "") != entry.get("pxd_sha256", ""):
            return f"{pxd} changed, or was added or removed, since the build"
        binary = self.directory / entry["file"]
        if not binary.is_file():
            return f"{binary} is missing"
        if sha256_of(binary) != entry["sha256"]:
            return f"{binary} is not the file built"
        return ""

    def _partners(self, fullname: str, source: Path, seen: set[str]) -> str:
        """Why `fullname` must not load compiled for a module it cimports ('' when each of them loads compiled
        from this build: imported by this finder, or not yet imported and loadable, their partners likewise)."""
        root = source.parents[fullname.count(".")]  # the directory holding the top-level package
        for partner in self.modules[fullname].get("cimports", ()):
            if partner in seen:
                continue
            seen.add(partner)
            if partner in sys.modules:
                if partner not in self.loaded:
                    return f"it cimports {partner}, which was loaded pure"
                continue
            entry = self.modules.get(partner)
            if entry is None:
                return f"it cimports {partner}, which is not in this build"
            partner_source = root / (partner.replace(".", "/") + ".py")
            why = self._mismatch(partner_source, entry) or self._partners(partner, partner_source, seen)
            if why:
                return f"it cimports {partner}, which would load pure ({why})"
        return ""


class _Shadow:
    """What the pure path sees as `cython` in a module typed for the compiled build (session 15): the source
    says `if TYPE_CHECKING: import cython` (which Cython compiles as its own directives) `else: from
    traces.fastpath import shadow as cython`, so a pure run needs no Cython and the decorators change nothing."""

    compiled = False

    @staticmethod
    def locals(**types: Any) -> Any:
        """`@cython.locals(name=Type, ...)`: the C types of a function's locals (compiled); the function itself."""
        return _unchanged

    @staticmethod
    def cast(kind: Any, value: Any) -> Any:
        """`cython.cast(Type, value)`: `value` read as a `Type` struct (compiled); `value` itself."""
        return value


def _unchanged(function: Any) -> Any:
    return function


shadow = _Shadow()

_state: dict[str, Any] = {"finder": None, "why": "not installed"}


def read_manifest(directory: Path) -> tuple[dict[str, Any] | None, str]:
    """The build's manifest, or None and why it is not usable here."""
    path = directory / MANIFEST
    if not path.is_file():
        return None, f"no build at {directory} (scripts/build_fast.py makes one)"
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        return None, f"{path}: unreadable manifest ({err})"
    if manifest.get("format") != FORMAT:
        return None, f"{path}: manifest format {manifest.get('format')}, this haconform reads {FORMAT} (rebuild)"
    if manifest.get("environment") != environment():
        return None, f"{path}: built for {manifest.get('environment')}, this interpreter is {environment()}"
    return manifest, ""


def install() -> None:
    """Put the compiled finder first on `sys.meta_path`, once per process, when a usable build exists and
    `HACONFORM_PURE` is not set (see the module)."""
    if _state["finder"] is not None or _state["why"] != "not installed":
        return
    if os.environ.get(PURE_ENV):
        _state["why"] = f"{PURE_ENV} is set"
        return
    if "pytest" in sys.modules and not os.environ.get(TESTS_ENV):
        _state["why"] = f"a pytest process runs the pure path ({TESTS_ENV}=1 for the compiled one)"
        return
    directory = build_dir()
    manifest, why = read_manifest(directory)
    if manifest is None:
        _state["why"] = why
        return
    finder = CompiledFinder(directory, manifest)
    sys.meta_path.insert(0, finder)
    _state["finder"], _state["why"] = finder, ""


def status() -> dict[str, Any]:
    """Which path ran: the modules loaded compiled so far, the listed ones loaded pure and why."""
    finder: CompiledFinder | None = _state["finder"]
    if finder is None:
        return {"compiled": [], "pure": _state["why"]}
    return {"compiled": sorted(finder.loaded), "stale": dict(sorted(finder.stale.items()))}


def listed() -> list[str]:
    """The modules the installed build holds (none without one)."""
    finder: CompiledFinder | None = _state["finder"]
    return sorted(finder.modules) if finder is not None else []


def describe() -> str:
    """One line for `haconform --version`."""
    state = status()
    if not state["compiled"] and "pure" in state:
        return f"pure Python ({state['pure']})"
    line = f"compiled path: {len(state['compiled'])} module(s) loaded compiled"
    if state.get("stale"):
        line += "; loaded pure because their source changed, the build differs or a module they cimport loads pure: "
        line += ", ".join(state["stale"])
    return line
