"""Layers one way (issue 20): traces <- spec <- model.kernel <- mechanisms <- model.registry <- the engine
(`conformance.engine`) <- drivers, harness, audit (the rest of `conformance`) <- Spark <- CLI.

Every import of every module of the five packages is read with `ast`, at module level, under
`if TYPE_CHECKING:` and inside functions alike. The checks: (a) no import cycle between modules (strongly
connected components of the import graph, one cycle of each shown with `networkx.find_cycle`); (b) no import
from a lower layer to a higher one, `importlib.import_module("...")` calls included (a constant name, or an
f-string's fixed part); (c) no project import inside a function, unless the module imported
loads one of `LAZY_ALLOWED` (an optional heavy dependency, each with its reason) at import: an import
hidden in a function to dodge a cycle fails here even where the cycle is gone; (d) mechanisms do not import
each other; (e) a mechanism package is lazy: its `state` module loads no monitor, simulator or mutants, its
`mechanism` module the monitor only (session 14). The twins feed the same checker a made-up graph with a
cycle, an upward import and a hidden import, and it must report each; (e)'s twin is the `mechanism` module
with its generator and mutants used, which loads all three.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("traces", "spec", "model", "conformance", "spark_trace_check")
LAZY_ALLOWED = {
    "pyspark": "Spark and its JVM start only for `--engine spark` and `ingest --engine spark`",
    "z3": "the solver loads only for claims (`haconform claims`) and clock-skew judgements (`--skew`)",
    "pyarrow": "Arrow (and numpy) load only where Parquet or a dataset is read or written: a check of JSON Lines "
    "needs neither (issue 32, session 15; tests/unit/test_cli_imports.py)",
}
CLI = (  # dispatch to either engine
    "conformance.cli",
    "conformance.__main__",
    "conformance.cli.ingest",
    "conformance.cli.check",
    "conformance.explore.cli",
)
LAYERS = ("traces", "spec", "kernel", "mechanisms", "registry", "engine", "conformance", "spark", "cli")
MECHANISM_FREE = ("model", "model.kernel", "model.registry")


def layer_of(module: str) -> int:
    """The layer of a module of the five packages (`LAYERS`, lowest first)."""
    top, _, rest = module.partition(".")
    second = rest.split(".")[0]
    if top in ("traces", "spec"):
        name = top
    elif top == "model":
        name = {"": "kernel", "kernel": "kernel", "registry": "registry"}.get(second, "mechanisms")
    elif top == "spark_trace_check":
        name = "spark"
    elif module in CLI:
        name = "cli"
    elif module == "conformance" or second == "engine":
        name = "engine"
    else:
        name = "conformance"
    return LAYERS.index(name)


@dataclass(frozen=True)
class Import:
    source: str
    target: str  # a project module, or the top-level name of a third-party package
    line: int
    in_function: bool
    dynamic: bool = False  # `importlib.import_module(NAME)`: a module chosen by name at run time

    def __str__(self) -> str:
        where = "inside a function" if self.in_function else "at module level"
        how = " by importlib" if self.dynamic else ""
        return f"{self.source}:{self.line} imports {self.target}{how} ({where})"


def project_modules(root: Path = ROOT) -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _resolve(name: str, modules: dict[str, Path]) -> str:
    """The project module `name` names (a name inside a module resolves to the module), else its top level."""
    probe = name
    while probe and probe not in modules:
        probe = probe.rpartition(".")[0]
    return probe or name.split(".")[0]


# calls whose first argument names a module loaded later by name: importlib's, and the registry entries'
# generators and mutants loaded on first use (`model.kernel.mechanism.Deferred`, session 14)
LOADERS = ("import_module", "Deferred", "DeferredTable")


def _dynamic_name(call: ast.Call) -> str | None:
    """The module an `importlib.import_module(...)` call (or a `LOADERS` one) names: a string constant whole,
    an f-string up to its first replacement field (`f"model.{m}.rules"` -> `model`: at least that package)."""
    func = call.func
    named = isinstance(func, ast.Attribute) and func.attr in LOADERS
    named = named or (isinstance(func, ast.Name) and func.id in LOADERS)
    if not named or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values and isinstance(arg.values[0], ast.Constant):
        return str(arg.values[0].value).rsplit(".", 1)[0] or None
    return None  # a name held in a variable: not known before run time


def imports_of(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            names: list[str] = []
            if isinstance(child, ast.Import):
                names = [a.name for a in child.names]
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*up, *([child.module] if child.module else [])])
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in child.names]
            for name in dict.fromkeys(names):
                out.append(Import(module, _resolve(name, modules), child.lineno, in_function))
            dynamic = _dynamic_name(child) if isinstance(child, ast.Call) else None
            if dynamic is not None:
                out.append(Import(module, _resolve(dynamic, modules), child.lineno, in_function, dynamic=True))
            visit(child, nested)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)), False)
    return out


@cache
def all_imports(root: Path = ROOT) -> tuple[set[str], list[Import]]:
    modules = project_modules(root)
    return set(modules), [i for m, p in modules.items() for i in imports_of(m, p, modules)]


def heavy(modules: set[str], imports: list[Import]) -> dict[str, str]:
    """Project module -> the `LAZY_ALLOWED` package its import loads (through module-level imports)."""
    graph = nx.DiGraph()
    graph.add_nodes_from(modules | set(LAZY_ALLOWED))
    graph.add_edges_from((i.source, i.target) for i in imports if not i.in_function)
    out = {}
    for dep in LAZY_ALLOWED:
        for module in nx.ancestors(graph, dep) & modules:
            out.setdefault(module, dep)
    return out


def problems(modules: set[str], imports: list[Import]) -> list[str]:
    """Every cycle, upward import and function-level import of a light project module, as sentences."""
    inner = [i for i in imports if i.target in modules and i.target != i.source]
    # a dynamic import runs when called, after every module is loaded: it orders layers, it closes no cycle
    graph = nx.DiGraph((i.source, i.target) for i in inner if not i.dynamic)
    found = []
    for component in sorted(map(sorted, nx.strongly_connected_components(graph))):
        if len(component) > 1:
            cycle = nx.find_cycle(graph.subgraph(component))
            found.append("cycle: " + " -> ".join([*(a for a, _ in cycle), cycle[0][0]]))
    for i in inner:
        if layer_of(i.target) > layer_of(i.source):
            found.append(f"upward: {i} ({LAYERS[layer_of(i.source)]} -> {LAYERS[layer_of(i.target)]})")
    loads = heavy(modules, imports)
    for i in inner:
        if i.in_function and not i.dynamic and i.target not in loads:
            found.append(f"hidden: {i}: nothing heavy to defer (LAZY_ALLOWED: {', '.join(LAZY_ALLOWED)})")
    return found


def test_the_project_imports_one_way():
    modules, imports = all_imports()
    assert len(modules) > 150 and len(imports) > 500  # the scan saw the project
    found = problems(modules, imports)
    assert not found, "\n".join(found)


def test_every_lazy_import_defers_an_allowed_heavy_dependency():
    modules, imports = all_imports()
    loads = heavy(modules, imports)
    lazy = {(i.source, i.target) for i in imports if i.in_function and not i.dynamic and i.target in modules}
    assert lazy and all(loads.get(t) in LAZY_ALLOWED for _, t in lazy)
    assert {"spark_trace_check.job", "spec.claims.skew"} <= set(loads)  # the two heavy families are seen


def test_mechanisms_do_not_import_each_other():
    modules, imports = all_imports()
    mechanism = {m: m.split(".")[1] for m in modules if m.startswith("model.") and m not in MECHANISM_FREE}
    mechanism = {m: p for m, p in mechanism.items() if p not in ("kernel", "registry")}
    crossing = [
        str(i)
        for i in imports
        if i.source in mechanism and mechanism.get(i.target, mechanism[i.source]) != mechanism[i.source]
    ]
    assert not crossing, "\n".join(crossing)


# --- the twins: a made-up graph with each kind of fault must fail ----------------------------------------
def _fake(*edges: tuple[str, str, bool]) -> tuple[set[str], list[Import]]:
    imports = [Import(a, b, n, f) for n, (a, b, f) in enumerate(edges, 1)]
    return {m for i in imports for m in (i.source, i.target) if m not in LAZY_ALLOWED}, imports


def test_twin_a_cycle_fails():
    modules, imports = _fake(
        ("conformance.check", "model.registry", False),
        ("model.registry", "traces.corpus", False),
        ("traces.corpus", "traces.io", False),
        ("traces.io", "traces.corpus", False),
    )
    assert problems(modules, imports) == ["cycle: traces.corpus -> traces.io -> traces.corpus"]


def test_twin_an_upward_import_fails_even_inside_a_function():
    modules, imports = _fake(("model.kernel.workload", "model.registry", True), ("model.registry", "traces.io", False))
    found = problems(modules, imports)
    assert any(f.startswith("upward: model.kernel.workload:1 imports model.registry") for f in found)
    assert any(f.startswith("hidden: model.kernel.workload:1") for f in found)


def test_twin_a_hidden_import_fails_unless_it_defers_a_heavy_dependency():
    modules, imports = _fake(
        ("conformance.pycheck", "conformance.dataset_check", True),  # light: hidden
        ("conformance.cli", "spark_trace_check.job", True),  # loads pyspark: allowed
        ("spark_trace_check.job", "pyspark", False),
    )
    assert problems(modules, imports) == [
        "hidden: conformance.pycheck:1 imports conformance.dataset_check (inside a function): nothing heavy to "
        "defer (LAZY_ALLOWED: pyspark, z3, pyarrow)"
    ]


def test_importlib_imports_are_seen():
    """The scan reads `importlib.import_module` calls too (the registry loads each mechanism by name)."""
    _, imports = all_imports()
    dynamic = {(i.source, i.target) for i in imports if i.dynamic}
    assert ("model.registry", "model") in dynamic  # f"model.{name}.mechanism": at least the package
    assert ("conformance.harness.search", "conformance.harness") in dynamic
    # the registry entries' generators and mutants, named for `model.kernel.mechanism.Deferred` (session 14)
    assert {("model.sr.mechanism", "model.sr.sim"), ("model.pf.mechanism", "model.pf.mutants")} <= dynamic
    assert ("model.registry", "model.kernel.workload") in dynamic


def test_twin_an_upward_importlib_import_fails(tmp_path):
    """A planted `importlib.import_module` of a higher layer (a constant name, and an f-string whose fixed
    part names a higher package), and a `Deferred` entry naming one, are reported as upward, not hidden (a
    dynamic import is lazy by nature)."""
    planted = tmp_path / "workload.py"
    planted.write_text(
        "import importlib\n\n\ndef load(m):\n"
        "    importlib.import_module('conformance.cli')\n"
        "    return importlib.import_module(f'spark_trace_check.{m}')\n"
        "\n\nNET = Deferred('conformance.pycheck', 'check_paths')\n"
    )
    modules = {n: planted for n in ("model.kernel.workload", "conformance.cli", "spark_trace_check")}
    modules["conformance.pycheck"] = planted
    imports = imports_of("model.kernel.workload", planted, modules)
    want = [("importlib", False), ("conformance.cli", True), ("spark_trace_check", True)]
    assert [(i.target, i.dynamic) for i in imports] == [*want, ("conformance.pycheck", True)]
    found = problems(set(modules), imports)
    assert found == [
        "upward: model.kernel.workload:5 imports conformance.cli by importlib (inside a function) (kernel -> cli)",
        "upward: model.kernel.workload:6 imports spark_trace_check by importlib (inside a function) (kernel -> spark)",
        "upward: model.kernel.workload:9 imports conformance.pycheck by importlib (at module level) "
        "(kernel -> conformance)",
    ]


def test_twin_the_layers_are_in_order():
    order = ["traces.io", "spec.catalogue", "model.kernel.sim", "model.sr.monitor", "model.registry"]
    order += ["conformance.engine.stream", "conformance.pycheck", "spark_trace_check.job", "conformance.cli"]
    assert [layer_of(m) for m in order] == list(range(len(LAYERS)))


def _loaded(*modules: str, then: str = "") -> set[str]:
    """The `model.*` modules a fresh interpreter holds after importing `modules` (and running `then`)."""
    code = f"import sys, {', '.join(modules)}; {then or 'pass'}; "
    code += "print(' '.join(m for m in sys.modules if m.startswith('model.')))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    return set(run.stdout.split())


def test_a_mechanism_submodule_loads_no_monitor_simulator_or_mutants():
    """Package `__init__`s that import nothing: each `model.<m>.state` alone; each `model.<m>.mechanism` (the
    registry's entry) loads the monitor only, its generator and mutants on first use (session 14); the twin,
    the entries' generators and mutants used, loads all three, so the probe does see them when they are there."""
    mechanisms = ("sr", "am", "pf")
    parts = {f"model.{m}.{part}" for m in mechanisms for part in ("monitor", "sim", "mutants")}
    monitors = {f"model.{m}.monitor" for m in mechanisms}
    entries = [f"model.{m}.mechanism" for m in mechanisms]
    assert not _loaded(*(f"model.{m}.state" for m in mechanisms)) & parts
    assert _loaded(*entries) & parts == monitors
    used = "; ".join(f"{e}.MECHANISM.simulate.__wrapped__, len({e}.MECHANISM.mutants)" for e in entries)
    assert parts <= _loaded(*entries, then=used)
