"""Who cites each requirement: rules, properties, claims, tests and other code (issue 9, traceability).

Structured sources come first: each mechanism's rules table (`model/<m>/rules.py`: `RULES`, a dict of
`traces.verdict.Rule`, whose `params` also cite parameters), its `PROPERTIES`, and the z3 claims of
`spec/claims` (`requirement` and `covers`). Everything else is found by scanning source text for catalogue
IDs: `model/`, `conformance/`, `spec/claims/`, `traces/`, `spark_trace_check/` ("code") and `tests/`
("tests"). Those modules are read by name at run time (importlib), so that a mechanism without a rules
table is reported, not an import error. It reads the model, so it sits above it (in `conformance`).

`spec/uncited.toml` lists, with a reason, the behaviour, invariant, ordering and timing requirements that
nothing cites yet; `spec/observability/<m>.toml` lists the parameters a trace cannot show (`[[unobservable]]`)
or that do not bound observable behaviour (`[[no_bound]]`). Both lists are checked in both directions by
`tests/unit/test_coverage.py`, so they cannot go stale.
"""

from __future__ import annotations

import importlib
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec.catalogue import SPEC_DIR, Catalogue, CatalogueError
from traces.verdict import Rule

REPO = SPEC_DIR.parent
CATEGORIES = ("rules", "properties", "claims", "tests", "code")
GATED_KINDS = ("behaviour", "invariant", "ordering", "timing")  # must be cited, or listed in uncited.toml
PACKAGES = ("sr", "am", "pf")  # mechanism packages under model/ with a rules table
PACKAGE_OF = {"sr": "sr", "am": "am", "pf": "pf", "bf": "pf"}  # catalogue mechanism -> package that checks it
CODE_DIRS = ("model", "conformance", "spec/claims", "traces", "spark_trace_check")
TEST_DIRS = ("tests",)
TEST_SUFFIXES = (".py", ".toml", ".json", ".jsonl")  # hand-built traces and their expected verdicts count
ID_TOKEN = re.compile(r"\b(?:SR|AM|PF|BF|TR)-(?:\d{3}|P\d{2})\b")
EXEMPTION_KINDS = ("unobservable", "no_bound")


@dataclass(frozen=True, slots=True, order=True)
class Citation:
    requirement: str
    category: str  # one of CATEGORIES
    where: str  # "model/sr/rules.py RULES['x']", "spec/claims sr.shadow_before_ack", "tests/unit/t.py:12"
    detail: str = ""

    def to_json(self) -> dict[str, str]:
        return {"category": self.category, "where": self.where, "detail": self.detail}


@dataclass
class Coverage:
    """Every citation found, by requirement ID; `tables` says, per package, whether RULES is a table of Rule."""

    citations: dict[str, list[Citation]] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)  # package -> "table" or why not
    rules: dict[str, dict[str, Any]] = field(default_factory=dict)  # package -> RULES (when a table)

    def of(self, req_id: str) -> list[Citation]:
        return self.citations.get(req_id, [])

    def by_category(self, req_id: str) -> dict[str, list[Citation]]:
        out: dict[str, list[Citation]] = {c: [] for c in CATEGORIES}
        for cit in self.of(req_id):
            out[cit.category].append(cit)
        return out

    def is_cited(self, req_id: str) -> bool:
        return bool(self.of(req_id))


def _import(name: str) -> Any | None:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and name.startswith(exc.name):
            return None
        raise


def rules_table(package: str) -> tuple[dict[str, Any] | None, str]:
    """`model.<package>.rules.RULES` when it is a dict of `Rule`, else None and the reason."""

    module = _import(f"model.{package}.rules")
    if module is None:
        return None, f"model/{package}/rules.py does not exist"
    table = getattr(module, "RULES", None)
    if not isinstance(table, dict) or not table:
        return None, f"model/{package}/rules.py does not export RULES as a non-empty dict"
    wrong = [k for k, v in table.items() if not isinstance(v, Rule)]
    if wrong:
        return None, f"model/{package}/rules.py RULES is not yet a dict of traces.verdict.Rule (e.g. {wrong[0]!r})"
    return table, "table"


def _structured(packages: Iterable[str]) -> tuple[list[Citation], dict[str, str], dict[str, dict[str, Any]]]:
    out: list[Citation] = []
    tables: dict[str, str] = {}
    found: dict[str, dict[str, Any]] = {}
    for pkg in packages:
        table, status = rules_table(pkg)
        tables[pkg] = status
        if table is not None:
            found[pkg] = table
            for name, rule in table.items():
                where = f"model/{pkg}/rules.py RULES[{name!r}]"
                out.append(Citation(rule.requirement, "rules", where, f"{rule.kind}: {rule.statement}"))
                out += [Citation(p, "rules", where, f"bounds {rule.kind} rule {name}") for p in rule.params]
        props = getattr(_import(f"model.{pkg}.properties"), "PROPERTIES", None)
        items = props.items() if isinstance(props, Mapping) else ((getattr(p, "name", "?"), p) for p in props or ())
        for name, prop in items:
            req = getattr(prop, "requirement", None)
            if isinstance(req, str):
                out.append(
                    Citation(
                        req,
                        "properties",
                        f"model/{pkg}/properties.py PROPERTIES[{name!r}]",
                        str(getattr(prop, "statement", "")),
                    )
                )
    registry = _import("spec.claims.registry")
    if registry is not None:
        for claim in registry.all_claims():
            for req in (claim.requirement, *claim.covers):
                out.append(Citation(req, "claims", f"spec/claims {claim.name}", claim.statement))
    return out, tables, found


def _scan(root: Path, dirs: Iterable[str], suffixes: tuple[str, ...], category: str) -> list[Citation]:
    out = []
    for d in dirs:
        for path in sorted((root / d).rglob("*")):
            if path.suffix not in suffixes or not path.is_file() or "__pycache__" in path.parts:
                continue
            rel = path.relative_to(root).as_posix()
            for no, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                for rid in ID_TOKEN.findall(line):
                    out.append(Citation(rid, category, f"{rel}:{no}", line.strip()[:100]))
    return out


def _origin(cit: Citation) -> str | None:
    """The file a structured citation was read from (its text mentions are the same citation)."""
    if cit.category in ("rules", "properties"):
        return cit.where.split(" ", 1)[0]
    if cit.category == "claims":
        return "spec/claims/"
    return None


def collect(cat: Catalogue, root: Path = REPO, packages: Iterable[str] = PACKAGES, structured: bool = True) -> Coverage:
    """Every citation of every catalogue requirement under `root`."""
    cits, tables, found = _structured(packages) if structured else ([], {}, {})
    origins = {(c.requirement, o) for c in cits if (o := _origin(c))}
    text = _scan(root, CODE_DIRS, (".py",), "code") + _scan(root, TEST_DIRS, TEST_SUFFIXES, "tests")
    for c in text:
        path = c.where.rsplit(":", 1)[0]
        if (c.requirement, path) in origins or (
            path.startswith("spec/claims/") and (c.requirement, "spec/claims/") in origins
        ):
            continue  # the structured reading already counts this mention
        cits.append(c)
    cov = Coverage(tables=tables, rules=found)
    for c in sorted(set(cits)):
        if cat.has(c.requirement):
            cov.citations.setdefault(c.requirement, []).append(c)
    return cov


def _listed(path: Path, key: str, where: str) -> list[tuple[str, str]]:
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: {exc}") from exc
    out = []
    for i, raw in enumerate(doc.get(key, [])):
        rid, reason = str(raw.get("id", "")), " ".join(str(raw.get("reason", "")).split())
        if not rid or not reason:
            raise CatalogueError(f"{where} [[{key}]] #{i + 1} ({rid or '?'}): needs a non-empty 'id' and 'reason'")
        out.append((rid, reason))
    return out


def load_uncited(cat: Catalogue, path: Path | None = None) -> dict[str, str]:
    """`spec/uncited.toml`: requirement ID -> why nothing cites it yet. Only gated kinds may be listed."""
    path = path or SPEC_DIR / "uncited.toml"
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    for rid, reason in _listed(path, "uncited", path.name):
        if not cat.has(rid):
            raise CatalogueError(f"{path.name} {rid}: not a requirement of the catalogue")
        if cat.get(rid).kind not in GATED_KINDS:
            raise CatalogueError(f"{path.name} {rid}: kind {cat.get(rid).kind!r} need not be listed")
        if rid in out:
            raise CatalogueError(f"{path.name} {rid}: listed twice")
        out[rid] = reason
    return out


def load_observability(cat: Catalogue, spec_dir: Path = SPEC_DIR) -> dict[str, tuple[str, str, str]]:
    """`spec/observability/<m>.toml`: parameter ID -> (kind of exemption, reason, file).

    `[[unobservable]]`: the parameter bounds behaviour a trace cannot show. `[[no_bound]]`: it does not bound
    observable behaviour at all (it steers only the generator's own choices). Each entry: `id`, `reason`.
    """
    out: dict[str, tuple[str, str, str]] = {}
    for path in sorted((spec_dir / "observability").glob("*.toml")):
        for kind in EXEMPTION_KINDS:
            for rid, reason in _listed(path, kind, f"observability/{path.name}"):
                where = f"observability/{path.name} {rid}"
                if not cat.has(rid) or cat.get(rid).parameter is None:
                    raise CatalogueError(f"{where}: not a parameter requirement of the catalogue")
                if rid in out:
                    raise CatalogueError(f"{where}: already listed in {out[rid][2]}")
                out[rid] = (kind, reason, path.name)
    return out


def unbound_parameters(
    cat: Catalogue, tables: Mapping[str, Mapping[str, Any]], exempt: Mapping[str, Any], package: str
) -> list[str]:
    """Problems with the parameters `package` checks: in no `Rule.params` and not exempt, or both at once."""
    in_rules = {p for table in tables.values() for rule in table.values() for p in rule.params}
    problems = []
    for req in cat.requirements.values():
        if req.parameter is None or PACKAGE_OF.get(req.mechanism) != package:
            continue
        if req.id not in in_rules and req.id not in exempt:
            problems.append(f"{req.id} {req.parameter.name}: in no Rule.params and not in spec/observability")
        if req.id in in_rules and req.id in exempt:
            problems.append(f"{req.id} {req.parameter.name}: bounds a rule yet is listed in spec/observability")
    for pkg, table in tables.items():
        for name, rule in table.items():
            for p in rule.params:
                if not cat.has(p) or cat.get(p).parameter is None:
                    problems.append(f"model/{pkg}/rules.py RULES[{name!r}].params: {p!r} is not a parameter")
    return problems


def gaps(cat: Catalogue, cov: Coverage, uncited: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(gated requirements cited by nothing and not listed, listed requirements that are cited after all)."""
    missing = [r.id for r in cat.requirements.values() if r.kind in GATED_KINDS and not cov.is_cited(r.id)]
    return [r for r in missing if r not in uncited], [r for r in uncited if cov.is_cited(r)]


def matrix(cat: Catalogue, cov: Coverage, mechanism: str | None = None) -> list[dict[str, Any]]:
    """One row per requirement: its kind and the number of citations per category."""
    rows = []
    for req in cat.requirements.values():
        if mechanism and req.mechanism != mechanism:
            continue
        by = cov.by_category(req.id)
        rows.append({"id": req.id, "kind": req.kind, **{c: len(by[c]) for c in CATEGORIES}})
    return rows
