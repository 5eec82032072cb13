"""Rules are objects (issue 29): no rule of any table is named by a string in the model's code.

Every call site uses the rule constant of its table (`rules.SHADOW_BEFORE_ACK.violated(...)`), so a misspelt
rule cannot be named and a rule is found by following a reference, not by searching text. The scan reads
the source of `model/`, of the core rules (`conformance/engine/core_fold.py`, `core_rules.py`) and of the skew
orderings' rules (`spec/claims/skew_rules.py`) with `ast` and reports:
- a string constant equal to a rule name anywhere but as the first argument of `Rule(...)` in a rules table
  (docstrings are prose and are not read);
- a subscript or `.get` of a table named `RULES` outside its own rules module (a lookup by name).
A trace attribute that shares a rule's spelling (am's AM_CONFIG `dial`, rule `dial`) is written once, as a
module-level `*_ATTR` constant of the package's `events.py`, and is not a reference to the rule.
The twin: the same scan over planted sources that do both must report them.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from traces.verdict import Rule, rules_in

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {
    "sr": ("model/sr", "model.sr.rules"),
    "am": ("model/am", "model.am.rules"),
    "pf": ("model/pf", "model.pf.rules"),
    "msgtrk": ("model/msgtrk", "model.msgtrk.rules"),
    "core": (("conformance/engine/core_fold.py", "conformance/engine/core_rules.py"), "conformance.engine.core_rules"),
    "skew": (("model/skew", "spec/claims/skew_rules.py"), "model.skew.rules"),
}


def rule_names() -> set[str]:
    names: set[str] = set()
    for _, module in PACKAGES.values():
        mod = importlib.import_module(module)
        table = getattr(mod, "CORE_RULES", None) if module.endswith("core_fold") else None
        if isinstance(table, dict):
            names |= set(table)
        else:
            names |= {r.name for r in rules_in(mod)}
    return names


def _docstrings(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                ids.add(id(value))
    return ids


def _rule_definitions(tree: ast.AST) -> set[int]:
    """The name constants that define a rule: the first argument of a call to `Rule`."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args:
            fn = node.func
            called = fn.id if isinstance(fn, ast.Name) else fn.attr if isinstance(fn, ast.Attribute) else ""
            if called == "Rule":
                ids.add(id(node.args[0]))
    return ids


def _attribute_names(tree: ast.Module) -> set[int]:
    """The module-level `*_ATTR = "..."` constants: names of the trace format (an events module's)."""
    ids: set[int] = set()
    for node in tree.body:
        constant = isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        if constant and all(isinstance(t, ast.Name) and t.id.endswith("_ATTR") for t in node.targets):
            ids.add(id(node.value))
    return ids


def string_references(
    source: str, where: str, names: set[str], rules_module: bool, events_module: bool = False
) -> list[str]:
    """Every place in `source` that names a rule by a string, or looks a rule up in a table by name."""
    tree = ast.parse(source)
    skip = _docstrings(tree) | (_rule_definitions(tree) if rules_module else set())
    skip |= _attribute_names(tree) if events_module else set()
    found = []
    for node in ast.walk(tree):
        named = isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names
        if named and id(node) not in skip:
            found.append(f"{where}:{node.lineno}: rule {node.value!r} named by a string")
        if rules_module:
            continue
        if isinstance(node, ast.Subscript) and _is_table(node.value):
            found.append(f"{where}:{node.lineno}: a rules table looked up by name")
        get = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
        if get and _is_table(node.func.value):
            found.append(f"{where}:{node.lineno}: a rules table looked up by name (.get)")
    return found


def _is_table(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in ("RULES", "CORE_RULES", "MSGTRK_RULES")


def scan(package: str, names: set[str]) -> list[str]:
    paths, _ = PACKAGES[package]
    files: list[Path] = []
    for path in (paths,) if isinstance(paths, str) else paths:
        files += [ROOT / path] if path.endswith(".py") else sorted((ROOT / path).rglob("*.py"))
    found: list[str] = []
    for f in files:
        rel = str(f.relative_to(ROOT))
        rules_module = f.name in ("rules.py", "core_rules.py", "skew_rules.py")
        found += string_references(f.read_text(), rel, names, rules_module, f.name == "events.py")
    return found


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_no_rule_is_named_by_a_string(package: str) -> None:
    found = scan(package, rule_names())
    assert not found, f"{len(found)} string reference(s) to rules:\n" + "\n".join(found)


def test_twin_the_scan_finds_planted_string_references() -> None:
    names = {"shadow-before-ack", "heartbeat-frequency"}
    planted = (
        '"""A docstring naming shadow-before-ack is prose."""\n'
        "def f(w, e):\n"
        '    out = [breach("shadow-before-ack", (e,), "why")]\n'
        '    req = RULES["heartbeat-frequency"].requirement\n'
        "    also = rules.RULES.get(name)\n"
        "    return out, req, also\n"
    )
    found = string_references(planted, "planted.py", names, rules_module=False)
    assert len(found) == 4, found  # the name, and the lookup with a name: both reported
    assert any("'shadow-before-ack'" in f for f in found)
    attrs = 'SHADOW_ATTR = "shadow-before-ack"\n'  # a trace attribute's name: only in an events module
    assert string_references(attrs, "events.py", names, rules_module=False, events_module=True) == []
    assert len(string_references(attrs, "step.py", names, rules_module=False)) == 1
    table = 'X = Rule("shadow-before-ack", "SR-031", "always", "text")\nY = "heartbeat-frequency"\n'
    assert string_references(table, "rules.py", names, rules_module=True) == [
        "rules.py:2: rule 'heartbeat-frequency' named by a string"
    ]


def test_every_table_row_is_a_rule_object_stamped_with_its_table() -> None:
    for _, module in PACKAGES.values():
        mod = importlib.import_module(module)
        rows = rules_in(mod)
        assert rows and all(isinstance(r, Rule) for r in rows), module
