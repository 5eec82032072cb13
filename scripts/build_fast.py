"""Build the optional compiled path (issue 32): the hot pure-Python modules compiled by Cython, as they are.

    python3 scripts/build_fast.py            build into .fast/ (git-ignored), replacing an earlier build whole
    python3 scripts/build_fast.py --pgo      the same, profile-guided (GCC: built, trained, built again; what
                                             scripts/install.sh runs, scripts/pgo.py says how)
    python3 scripts/build_fast.py --check    say whether a C compiler and Cython are here (exit 0 either way)
    python3 scripts/build_fast.py --out DIR  build into DIR (the tests' twins)
    python3 scripts/build_fast.py --module M --source M=FILE   compile FILE as module M (a twin: a compiled
                                             copy that differs from its source, recorded with the source's hash)

The sources are compiled in Cython's pure-Python mode with `annotation_typing` off: the annotations stay
hints, so the compiled module accepts and returns exactly what the pure one does. A module may have an
augmenting `.pxd` beside its `.py` (session 13: C types for some locals, arguments and containers); it is
compiled with it. `traces.fastpath` loads a module of this build only while the sha256 of its source, of its
`.pxd` (or its absence) and of its extension are the manifest's; nothing here is needed to run haconform,
and without a build (or with `HACONFORM_PURE=1`) the pure modules run.
Session 15: a module whose `.pxd` cimports another project module's declarations (C types of pf's records in
their users) is compiled against that module's struct layout; the manifest lists those modules per module
(`cimports`, read from the `.pxd` and the source's `cython.cimports`), each must be in the same build, and the
finder loads the module only with all of them compiled (`traces.fastpath.CompiledFinder._partners`).
Which modules pay was measured (benchmarks/README.md, "Session 11: compiled path").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from traces import fastpath  # noqa: E402

sys.path.insert(0, str(ROOT / "scripts"))
import pgo  # noqa: E402  (scripts/pgo.py, beside this one)

# The modules compiled: the reader, the engine's per-event path and the folds with the modules they call per
# event.
MODULES: tuple[str, ...] = (
    "traces.event",
    "traces.columnar",
    "traces.io",
    "traces.dataset",
    "traces.verdict",
    "conformance.engine.driver",
    "conformance.engine.stream",
    "conformance.engine.folds",
    "conformance.engine.core_fold",
    "conformance.engine.tally",
    "conformance.engine.trace_index",
    "model.sr.monitor",
    "model.sr.step",
    "model.sr.creation",
    "model.sr.heartbeats",
    "model.sr.maintenance",
    "model.sr.folding",
    "model.sr.world",
    "model.am.monitor",
    "model.am.monitor_dag",
    "model.am.monitor_bcss",
    "model.am.faults",
    "model.am.step",
    "model.am.state",
    "model.am.bcss",
    "model.am.replay",
    "model.am.decisions",
    "model.am.rules",
    "model.pf.monitor",
    "model.pf.deadlines",
    "model.pf.cnset",
    "model.pf.handlers",
    "model.pf.faults",
    "model.pf.step",
    "model.pf.decisions",
    "model.pf.events",
    "model.pf.lifecycle",
    "model.pf.backfill",
    "model.pf.state",
    "model.pf.foldstate",
    "model.pf.properties",
    "model.pf.schedule",
    "model.pf.convergence",
    "conformance.explore.fingerprint",
    "conformance.explore.state",
    "model.kernel.sim",
    "model.kernel.idle",
    "model.kernel.recorder",
    "model.sr.idle",
    "model.sr.cluster",
    "model.sr.cluster_forks",
    "model.sr.cluster_maintenance",
    "model.pf.node",
    "model.pf.idle",
    "model.kernel.network",
    "model.kernel.choice",
    "model.kernel.records",
    "conformance.explore.bfs",
    "conformance.explore.single",
    # session 25: modules the per-event path still ran interpreted (py-spy of a 10^6 check: 2.5% of its samples)
    "model.pf.config",
    "model.am.bcss_run",
    "model.am.events",
    "model.msgtrk.monitor",
    "model.sr.liveness",
    "model.sr.inputs",
    "model.am.replay_state",
)
DIRECTIVES = {"language_level": 3, "annotation_typing": False, "binding": True, "embedsignature": False}
# Debug information: line tables only (session 29). The interpreter's CFLAGS say `-g` (full DWARF, four fifths of
# each extension's bytes); the finder (`traces/fastpath.py`) hashes every extension it loads at every process
# start, so those bytes cost each `haconform` command about 0.04 s. `-g1` keeps what a native profile (py-spy
# `--native`) needs to name lines; the code generated is the same (GCC's `-g` levels change no instruction).
DEBUG_FLAGS = ("-g1",)


def missing() -> str:
    """Why a build cannot be made here ('' when it can)."""
    try:
        import Cython  # noqa: F401
    except ImportError:
        return "Cython is not installed (pip install cython)"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(cc) is None:
        return f"no C compiler ({cc}) found"
    include = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not include.is_file():
        return f"no Python headers ({include})"
    return ""


def source_of(module: str) -> Path:
    return ROOT / (module.replace(".", "/") + ".py")


def pxd_of(source: Path) -> Path:
    """The augmenting declarations Cython reads beside a module's source (they need not exist)."""
    return source.with_suffix(".pxd")


# `from a.b cimport X`, `cimport a.b [as c]` (a `.pxd`), `from cython.cimports.a.b import X` (a source)
_CIMPORT = re.compile(
    r"^\s*(?:from\s+(?P<from>[\w.]+)\s+cimport\b|cimport\s+(?P<plain>[\w.]+)"
    r"|from\s+cython\.cimports\.(?P<pure>[\w.]+)\s+import\b|import\s+cython\.cimports\.(?P<pureplain>[\w.]+))",
    re.MULTILINE,
)


def cimports_of(name: str, compiled: Path) -> list[str]:
    """The project modules whose declarations module `name` cimports, read from its `.pxd` and from `compiled`
    (the source compiled): a project module is one with a `.pxd` in this tree (`cython`, `libc` and the like
    are not). Relative cimports are refused (none is written; the finder could not place them)."""
    texts = [compiled.read_text(encoding="utf-8")]
    pxd = pxd_of(source_of(name))
    if pxd.is_file():
        texts.append(pxd.read_text(encoding="utf-8"))
    found = set()
    for text in texts:
        for match in _CIMPORT.finditer(text):
            target = next(g for g in match.groups() if g)
            if target.startswith("."):
                raise SystemExit(f"build_fast: {name}: a relative cimport ({target}) is not supported")
            if pxd_of(source_of(target)).is_file() and target != name:
                found.add(target)
    return sorted(found)


def build(out: Path, modules: dict[str, Path], jobs: int, flags: Sequence[str] = ()) -> dict[str, dict[str, str]]:
    """Compile `modules` (name -> the file compiled) into `out`, with the compiler's and linker's further `flags`
    (a profile's: `scripts/pgo.py`); returns the manifest's module entries."""
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension

    work = out / "tmp"
    cimports = {name: cimports_of(name, path) for name, path in modules.items()}
    outside = {f"{name} cimports {p}" for name, partners in cimports.items() for p in partners if p not in modules}
    if outside:  # it would load against a pure partner: the finder would never load it
        raise SystemExit(f"build_fast: not in this build: {'; '.join(sorted(outside))} (add them with --module)")
    extensions = []
    hashes = {}  # the real source's and .pxd's hashes, taken when copied: the bytes compiled (a twin: the source's)
    for name, path in modules.items():
        # Cython names the module after the file's place in the packages: a twin's file is copied there
        place = work / "src" / (name.replace(".", "/") + ".py")
        place.parent.mkdir(parents=True, exist_ok=True)
        for parent in place.relative_to(work / "src").parents:
            (work / "src" / parent / "__init__.py").touch()
        shutil.copyfile(path, place)
        pxd = pxd_of(source_of(name))
        if pxd.is_file():
            shutil.copyfile(pxd, pxd_of(place))
        hashes[name] = fastpath.source_hashes(source_of(name))
        extensions.append(Extension(name, [str(place)]))
        # made here, not by Cython: it makes each directory once per process (a cache), and `--pgo` builds twice
        (work / "c" / place.relative_to(work / "src")).parent.mkdir(parents=True, exist_ok=True)
    cwd = os.getcwd()
    os.chdir(work / "src")
    try:
        compiled = cythonize(
            [Extension(e.name, [os.path.relpath(e.sources[0], work / "src")]) for e in extensions],
            compiler_directives=DIRECTIVES,
            build_dir=str(work / "c"),
            nthreads=jobs,
            quiet=True,
        )
        for ext in compiled:
            ext.extra_compile_args = [*ext.extra_compile_args, *DEBUG_FLAGS, *flags]
            ext.extra_link_args = [*ext.extra_link_args, *flags]
        dist = Distribution({"name": "haconform-fast", "ext_modules": compiled})
        cmd = dist.get_command_obj("build_ext")
        cmd.build_lib, cmd.build_temp, cmd.parallel = str(out), str(work / "o"), jobs
        cmd.ensure_finalized()
        cmd.run()
    finally:
        os.chdir(cwd)
    entries = {}
    for name in modules:
        binary = out / Path(cmd.get_ext_filename(name))
        entries[name] = {
            "file": str(binary.relative_to(out)),
            "sha256": fastpath.sha256_of(binary),
            "source": str(source_of(name).relative_to(ROOT)),
            **hashes[name],
            "cimports": cimports[name],
        }
    shutil.rmtree(work)
    return entries


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only say whether a build can be made here")
    parser.add_argument("--out", type=Path, default=None, help="build directory (default .fast/)")
    parser.add_argument("--module", action="append", default=None, help="compile only these modules")
    parser.add_argument("--source", action="append", default=[], help="MODULE=FILE: compile FILE for MODULE")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--pgo", action="store_true", help="GCC's profile-guided build: build, train, build again (scripts/pgo.py)"
    )
    # one stage of `--pgo`, run as a child process (Cython and distutils remember, per process, the directories
    # they made, and the stages compile at one path): built in DIR itself, with the compiler's further flags
    parser.add_argument("--stage", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--cflag", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    why = missing()
    if args.check or why:
        print(f"build_fast: {why or 'a C compiler and Cython are here'}", file=sys.stderr)
        return 0
    names = args.module or list(MODULES)
    unknown = [n for n in names if not source_of(n).is_file()]
    if unknown:
        print(f"build_fast: no source for {', '.join(unknown)}", file=sys.stderr)
        return 2
    modules = {n: source_of(n) for n in names}
    for pair in args.source:
        name, _, file = pair.partition("=")
        if name not in modules or not Path(file).is_file():
            print(f"build_fast: --source {pair}: not a listed module and an existing file", file=sys.stderr)
            return 2
        modules[name] = Path(file).resolve()
    if args.stage is not None:
        write_manifest(args.stage, build(args.stage, modules, args.jobs, args.cflag), {"used": False})
        return 0
    out = (args.out or ROOT / ".fast").resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.pgo:
        if args.module or args.source:
            print("build_fast: --pgo builds every module (no --module, --source)", file=sys.stderr)
            return 2
        return build_pgo(out, args.jobs)
    tmp = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name.lstrip('.')}.tmp-"))
    try:
        entries = build(tmp, modules, args.jobs)
        write_manifest(tmp, entries, {"used": False, "why": "not asked for (--pgo)"})
        replace(out, tmp)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    print(f"build_fast: {len(entries)} module(s) compiled into {out}", file=sys.stderr)
    return 0


def write_manifest(directory: Path, entries: dict[str, dict[str, str]], pgo: dict[str, object]) -> None:
    import Cython

    manifest = {
        "format": fastpath.FORMAT,
        "environment": fastpath.environment(),
        "cython": Cython.__version__,
        "directives": DIRECTIVES,
        "modules": entries,
        "pgo": pgo,
    }
    (directory / fastpath.MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")


def replace(out: Path, built: Path) -> None:
    """The finished build in place of `out`'s earlier one, whole."""
    if out.exists():
        shutil.rmtree(out)
    os.rename(built, out)


def build_pgo(out: Path, jobs: int) -> int:
    """`--pgo` (session 27, `scripts/pgo.py`): an instrumented build, the training on it, then the build with its
    profile, each stage a child process (`--stage`) compiling in one fixed staging directory (GCC names a profile
    after its object file's path), `.<out>.pgo` beside `out`, removed at the end. Where GCC cannot, or the training
    fails, the second stage is made without a profile and the manifest says why: never left instrumented."""
    stage = out.parent / f".{out.name.lstrip('.')}.pgo"
    built, profile, work = stage / "build", stage / "profile", stage / "work"
    shutil.rmtree(stage, ignore_errors=True)  # left by an earlier build that was stopped
    why = pgo.missing()
    trained: list[str] = []
    try:
        if not why:
            _stage(built, jobs, pgo.generate_flags(profile))
            try:
                trained = pgo.train(built, work)
            except RuntimeError as exc:
                why = f"the training failed: {exc}"
            shutil.rmtree(built)
        if why:
            print(f"build_fast: no profile-guided build ({why}); building without a profile", file=sys.stderr)
        _stage(built, jobs, [] if why else pgo.use_flags(profile))
        manifest = json.loads((built / fastpath.MANIFEST).read_text())
        write_manifest(
            built,
            manifest["modules"],
            {"used": True, "trained_on": trained} if not why else {"used": False, "why": why},
        )
        replace(out, built)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    what = "with the training's profile" if not why else "without a profile"
    print(f"build_fast: {len(manifest['modules'])} module(s) compiled into {out} ({what})", file=sys.stderr)
    return 0


def _stage(directory: Path, jobs: int, flags: Sequence[str]) -> None:
    """One stage of `--pgo`: every module built into `directory` by a child process."""
    argv = [sys.executable, __file__, "--stage", str(directory), "--jobs", str(jobs), *(f"--cflag={f}" for f in flags)]
    subprocess.run(argv, check=True)


if __name__ == "__main__":
    sys.exit(main())
