"""The requirement catalogue: loading, validating and querying `spec/requirements/*.toml`.

Every normative statement of the seed documents (`../shared/seeds/`, listed in `spec/seeds.toml`) is one
`Requirement`; parameters carry their default, unit and valid range; `Interpretation`s record where the
seeds are vague or disagree and which reading the model takes. The TOML files are the single source: the
models read parameter defaults from here rather than restating them.
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, partial
from pathlib import Path
from typing import Any

from spec.catalogue_cache import cached
from spec.param_sources import ParamSource, load_param_sources
from spec.parameter import DURATION_MS, OTHER_UNITS, CatalogueError, Parameter, Source

__all__ = ["DURATION_MS", "OTHER_UNITS", "CatalogueError", "Parameter", "Source"]  # also importable from here

SPEC_DIR = Path(__file__).resolve().parent
REQUIREMENTS_DIR = SPEC_DIR / "requirements"
SEEDS_FILE = SPEC_DIR / "seeds.toml"
QUOTES_FILE = "seed_quotes.toml"  # the seed sentence each source quotes (issue 31; scripts/seed_quotes.py writes it)
PARAM_SOURCES_FILE = "param_sources.toml"  # where each parameter's default stands in the seeds (spec/param_sources.py)

MECHANISMS = {
    "sr": "Shadow redundancy (transport)",
    "am": "Active Manager and best copy and server selection",
    "pf": "Public folder replication",
    "bf": "Public folder backfill, adding and deleting replicas",
    "tr": "Trace format and mechanism-independent trace rules",
}
KINDS = ("behaviour", "invariant", "ordering", "timing", "parameter", "interoperability")
ID_RE = re.compile(r"^(SR|AM|PF|BF|TR)-(\d{3}|P\d{2}|I\d{2})$")


@dataclass(frozen=True, slots=True)
class Requirement:
    id: str
    mechanism: str
    kind: str
    statement: str
    sources: tuple[Source, ...]
    parameter: Parameter | None = None
    origin: str = "seed"  # "seed", or "project" for TR- rules of the trace format itself
    notes: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "mechanism": self.mechanism,
            "kind": self.kind,
            "statement": self.statement,
            "sources": [{"seed": s.seed, "section": s.section} for s in self.sources],
            "origin": self.origin,
        }
        if self.parameter is not None:
            p = self.parameter
            out["parameter"] = {
                "name": p.name,
                "default": p.default,
                "unit": p.unit,
                "range": list(p.range) if p.range is not None else None,
                "values": list(p.values),
                "scope": p.scope,
            }
        if self.notes:
            out["notes"] = self.notes
        return out


@dataclass(frozen=True, slots=True)
class Interpretation:
    id: str
    topic: str
    sources: tuple[Source, ...]
    reading: str
    alternatives: str
    requirements: tuple[str, ...] = ()
    parameter: str = ""  # name of the parameter that selects the alternative, if any
    # what enforces it (issue 24): "MECH:rule" (a monitor rule), "claim:NAME" (a z3 claim), "test:PATH::NAME";
    # or why nothing does: it cannot be observed in a trace, or it could be but no rule checks it yet
    covered_by: tuple[str, ...] = ()
    not_observable: str = ""
    not_enforced: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "topic": self.topic,
            "sources": [{"seed": s.seed, "section": s.section} for s in self.sources],
            "reading": self.reading,
            "alternatives": self.alternatives,
            "requirements": list(self.requirements),
            "parameter": self.parameter,
            "covered_by": list(self.covered_by),
            "not_observable": self.not_observable,
            "not_enforced": self.not_enforced,
        }


@dataclass(frozen=True, slots=True)
class SeedSection:
    seed: str
    section: str
    out_of_scope: str = ""


@dataclass(frozen=True, slots=True)
class SeedQuote:
    """The sentence of a seed section a requirement's source quotes, and how it was chosen: "closest" (the
    sentence sharing most words with the statement) or "opening" (none shares enough: the section's first)."""

    id: str
    seed: str
    section: str
    sentence: str
    how: str


QUOTE_HOWS = ("closest", "opening")


@dataclass(frozen=True)
class Catalogue:
    requirements: dict[str, Requirement]
    interpretations: dict[str, Interpretation]
    sections: tuple[SeedSection, ...]
    seeds: dict[str, str] = field(default_factory=dict)  # file name -> subject
    param_sources: dict[str, ParamSource] = field(default_factory=dict)  # parameter ID -> where its default stands
    quotes: dict[tuple[str, str, str], SeedQuote] = field(default_factory=dict)  # (ID, seed, section) -> quote

    def get(self, req_id: str) -> Requirement:
        try:
            return self.requirements[req_id]
        except KeyError:
            raise KeyError(f"unknown requirement ID {req_id!r}") from None

    def has(self, req_id: str) -> bool:
        return req_id in self.requirements

    @cached_property
    def by_param(self) -> dict[str, Requirement]:
        """Parameter name -> the first requirement that carries it (built once: the models read parameter
        defaults while building their state, once per trace checked; issue 32, session 13)."""
        out: dict[str, Requirement] = {}
        for req in self.requirements.values():
            if req.parameter is not None:
                out.setdefault(req.parameter.name, req)
        return out

    def param(self, name: str) -> Parameter:
        return self.param_requirement(name).parameter  # type: ignore[return-value]

    def param_requirement(self, name: str) -> Requirement:
        try:
            return self.by_param[name]
        except KeyError:
            raise KeyError(f"unknown parameter {name!r}") from None

    def parameters(self, mechanism: str | None = None) -> list[Parameter]:
        return [
            r.parameter
            for r in self.requirements.values()
            if r.parameter is not None and (mechanism is None or r.mechanism == mechanism)
        ]

    def by_mechanism(self, mechanism: str) -> list[Requirement]:
        return [r for r in self.requirements.values() if r.mechanism == mechanism]


def _sources(raw: Any, where: str) -> tuple[Source, ...]:
    if not isinstance(raw, list) or not raw:
        raise CatalogueError(f"{where}: field 'sources' must be a non-empty list")
    out = []
    for i, s in enumerate(raw):
        if not isinstance(s, dict) or not s.get("seed") or not s.get("section"):
            raise CatalogueError(f"{where}: sources[{i}] needs non-empty 'seed' and 'section'")
        out.append(Source(str(s["seed"]), str(s["section"])))
    return tuple(out)


def _parameter(raw: Any, where: str) -> Parameter:
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where}: field 'parameter' must be a table")
    for key in ("name", "default", "unit"):
        if key not in raw:
            raise CatalogueError(f"{where}: parameter lacks field {key!r}")
    unit = raw["unit"]
    if unit not in DURATION_MS and unit not in OTHER_UNITS:
        raise CatalogueError(f"{where}: parameter unit {unit!r} is not one of {sorted(DURATION_MS)} {OTHER_UNITS}")
    rng = raw.get("range")
    return Parameter(
        name=str(raw["name"]),
        default=raw["default"],
        unit=unit,
        range=tuple(rng) if rng is not None else None,  # type: ignore[arg-type]
        values=tuple(raw.get("values", ())),
        scope=str(raw.get("scope", "")),
    )


def _requirement(raw: dict[str, Any], mechanism: str, where: str) -> Requirement:
    rid = raw.get("id", "")
    where = f"{where} requirement {rid or '?'}"
    if not ID_RE.match(rid):
        raise CatalogueError(f"{where}: field 'id' {rid!r} does not match {ID_RE.pattern}")
    if rid.split("-")[0].lower() != mechanism:
        raise CatalogueError(f"{where}: field 'id' prefix does not match the file's mechanism {mechanism!r}")
    kind = raw.get("kind")
    if kind not in KINDS:
        raise CatalogueError(f"{where}: field 'kind' {kind!r} is not one of {KINDS}")
    statement = str(raw.get("statement", "")).strip()
    if not statement:
        raise CatalogueError(f"{where}: field 'statement' is empty")
    param = _parameter(raw["parameter"], where) if "parameter" in raw else None
    if (kind == "parameter") != (param is not None):
        raise CatalogueError(f"{where}: kind 'parameter' and a 'parameter' table go together")
    return Requirement(
        id=rid,
        mechanism=mechanism,
        kind=kind,
        statement=" ".join(statement.split()),
        sources=_sources(raw.get("sources"), where),
        parameter=param,
        origin=str(raw.get("origin", "seed")),
        notes=" ".join(str(raw.get("notes", "")).split()),
    )


def _interpretation(raw: dict[str, Any], where: str) -> Interpretation:
    iid = raw.get("id", "")
    where = f"{where} interpretation {iid or '?'}"
    if not ID_RE.match(iid) or "-I" not in iid:
        raise CatalogueError(f"{where}: field 'id' {iid!r} must look like XX-I01")
    for key in ("topic", "reading", "alternatives"):
        if not str(raw.get(key, "")).strip():
            raise CatalogueError(f"{where}: field {key!r} is empty")
    return Interpretation(
        id=iid,
        topic=" ".join(str(raw["topic"]).split()),
        sources=_sources(raw.get("sources"), where),
        reading=" ".join(str(raw["reading"]).split()),
        alternatives=" ".join(str(raw["alternatives"]).split()),
        requirements=tuple(raw.get("requirements", ())),
        parameter=str(raw.get("parameter", "")),
        covered_by=_strings(raw.get("covered_by", []), f"{where}: field 'covered_by'"),
        not_observable=" ".join(str(raw.get("not_observable", "")).split()),
        not_enforced=" ".join(str(raw.get("not_enforced", "")).split()),
    )


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise CatalogueError(f"{where} must be a list of non-empty strings")
    return tuple(value)


def load(spec_dir: Path | None = None) -> Catalogue:
    """Read and validate the whole catalogue; raise `CatalogueError` naming file, entry and field."""
    base = spec_dir or SPEC_DIR
    requirements: dict[str, Requirement] = {}
    interpretations: dict[str, Interpretation] = {}
    for path in sorted((base / "requirements").glob("*.toml")):
        try:
            doc = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise CatalogueError(f"{path}: {exc}") from exc
        mechanism = doc.get("mechanism")
        if mechanism not in MECHANISMS:
            raise CatalogueError(f"{path}: field 'mechanism' {mechanism!r} is not one of {sorted(MECHANISMS)}")
        for raw in doc.get("requirement", []):
            req = _requirement(raw, mechanism, str(path.name))
            if req.id in requirements:
                raise CatalogueError(f"{path.name}: duplicate requirement ID {req.id}")
            requirements[req.id] = req
        for raw in doc.get("interpretation", []):
            interp = _interpretation(raw, str(path.name))
            if interp.id in interpretations:
                raise CatalogueError(f"{path.name}: duplicate interpretation ID {interp.id}")
            interpretations[interp.id] = interp
    seeds_doc = tomllib.loads((base / "seeds.toml").read_text(encoding="utf-8"))
    seeds = {s["file"]: s["subject"] for s in seeds_doc.get("seed", [])}
    sections = tuple(
        SeedSection(seed=s["file"], section=sec["title"], out_of_scope=sec.get("out_of_scope", ""))
        for s in seeds_doc.get("seed", [])
        for sec in s.get("section", [])
    )
    sources = load_param_sources(base / PARAM_SOURCES_FILE, seeds)
    for pid in sources:
        if pid not in requirements or requirements[pid].parameter is None:
            raise CatalogueError(f"{PARAM_SOURCES_FILE} param {pid}: not a parameter requirement of the catalogue")
    quotes = load_quotes(base / QUOTES_FILE)
    return Catalogue(requirements, interpretations, sections, seeds, sources, quotes)


def load_quotes(path: Path) -> dict[tuple[str, str, str], SeedQuote]:
    """`spec/seed_quotes.toml`: one `[[quote]]` per (requirement or interpretation ID, seed, section); a
    malformed entry is a `CatalogueError` naming the file, the entry and the field. An absent file is no
    quotes (`quote_problems` then names every source)."""
    if not path.is_file():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: {exc}") from exc
    out: dict[tuple[str, str, str], SeedQuote] = {}
    for i, raw in enumerate(doc.get("quote", [])):
        where = f"{path.name} quote {i + 1} ({raw.get('id', '?')})"
        for key in ("id", "seed", "section", "sentence", "how"):
            if not isinstance(raw.get(key), str) or not raw[key].strip():
                raise CatalogueError(f"{where}: field {key!r} must be a non-empty string")
        if raw["how"] not in QUOTE_HOWS:
            raise CatalogueError(f"{where}: field 'how' {raw['how']!r} is not one of {QUOTE_HOWS}")
        q = SeedQuote(raw["id"], raw["seed"], raw["section"], raw["sentence"], raw["how"])
        if (q.id, q.seed, q.section) in out:
            raise CatalogueError(f"{where}: a second quote for {q.id}, {q.seed}, section {q.section!r}")
        out[(q.id, q.seed, q.section)] = q
    return out


def quote_problems(cat: Catalogue) -> list[str]:
    """Every source of a requirement or interpretation without a stored seed quote, and every stored quote of
    no source (stale): each names the ID, the seed and the section; fixed by running `scripts/seed_quotes.py`."""
    wanted = {(r.id, s.seed, s.section) for r in cat.requirements.values() for s in r.sources}
    wanted |= {(i.id, s.seed, s.section) for i in cat.interpretations.values() for s in i.sources}
    out = [f"{k[0]}: no seed quote for {k[1]}, section {k[2]!r}" for k in sorted(wanted - set(cat.quotes))]
    out += [f"{k[0]}: a quote of no source ({k[1]}, section {k[2]!r})" for k in sorted(set(cat.quotes) - wanted)]
    return out


def seeds_dir() -> Path | None:
    """Where the seed documents are: `$HACONFORM_SEEDS`, else `shared/seeds` beside the checkout or an ancestor.

    The main checkout finds `../shared/seeds`; a git worktree nested deeper finds the same directory higher up.
    None when there is none (an installed copy without the seeds).
    """
    env = os.environ.get("HACONFORM_SEEDS")
    if env:
        return Path(env)
    for parent in SPEC_DIR.parent.parents:
        candidate = parent / "shared" / "seeds"
        if candidate.is_dir():
            return candidate
    return None


CACHE_NAME = ".catalogue-cache.pickle"  # beside the TOML, git-ignored (`spec.catalogue_cache`)
# the modules whose classes the cached catalogue holds or whose code built it: a change to one makes the cache stale
CODE = ("catalogue.py", "parameter.py", "param_sources.py", "catalogue_cache.py")


def cache_inputs(base: Path) -> list[Path]:
    """Every file `load(base)` reads and every module of `CODE`: the key of `load_cached(base)`'s cache."""
    files = sorted((base / "requirements").glob("*.toml"))
    files += [base / "seeds.toml", base / PARAM_SOURCES_FILE, base / QUOTES_FILE]
    return [f for f in files if f.is_file()] + [SPEC_DIR / name for name in CODE]


def load_cached(base: Path | None = None) -> Catalogue:
    """`load(base)`, from the parsed cache beside the TOML when its key is the files' now (issue 32, startup)."""
    base = base or SPEC_DIR
    return cached(base / CACHE_NAME, cache_inputs(base), partial(load, base), Catalogue)


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The shipped catalogue, loaded once (from its parsed cache when that is current)."""
    return load_cached()


def param_default(name: str) -> Any:
    """Default value of a parameter as written in the catalogue (durations: see `param_ms`)."""
    return catalogue().param(name).default


def param_ms(name: str) -> int:
    """Default of a duration parameter in milliseconds."""
    return catalogue().param(name).default_ms


def require(*req_ids: str) -> None:
    """Assert at import time that the cited requirement IDs exist (used by models and checks)."""
    cat = catalogue()
    missing = [r for r in req_ids if not cat.has(r)]
    if missing:
        raise CatalogueError(f"cited requirement IDs not in the catalogue: {missing}")


def cite(*ids: str) -> None:
    """Like `require`, but also accepts interpretation IDs (XX-INN)."""
    cat = catalogue()
    missing = [i for i in ids if not cat.has(i) and i not in cat.interpretations]
    if missing:
        raise CatalogueError(f"cited IDs not in the catalogue: {missing}")
