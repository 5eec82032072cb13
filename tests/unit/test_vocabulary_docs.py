"""The vocabulary in the shipped docs (issue 18): every kind and attribute the simulators record is in the
vocabulary tables and so in `conformance/PROTOCOL.md` and `traces/README.md`; PROTOCOL.md points only at files
the installed package ships; every request field is explained. Each check has its twin that must fail."""

from __future__ import annotations

import dataclasses
import fnmatch
import json
import re
import tomllib
from collections import defaultdict
from pathlib import Path

import pytest

from conformance.harness.protocol_doc import DOC_PATH, TRACES_README, VOCABULARIES, render, render_traces_readme
from model.registry import get, simulate
from traces.schema import Event
from traces.vocabulary import Vocabulary

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
Recorded = dict[tuple[str, str], set[str]]

RUNS = [  # (model, seed, options): a few seeds, and settings that reach the expiries, Safety Net and deletes
    *[("sr", s, {}) for s in range(4)],
    ("sr", 1, {"config": {"safety_net_hold_ms": 40 * 60_000, "expiration_ms": 20 * 60_000}}),
    ("sr", 2, {"config": {"auto_discard_ms": 30 * 60_000, "safety_net_hold_ms": 40 * 60_000}}),
    *[("am", s, {}) for s in range(3)],
    *[("pf", s, {}) for s in range(3)],
    ("pf", 4, {"concurrent_removal": True}),
    ("net", 1, {}),
]


def recorded(events: list[Event], into: Recorded) -> Recorded:
    for e in events:
        into[(e.mechanism, e.kind)].update(e.attrs)
    return into


@pytest.fixture(scope="module")
def model_records() -> Recorded:
    out: Recorded = defaultdict(set)
    for model, seed, opts in RUNS:
        recorded(simulate(model, seed, **opts), out)
    for sim in list(get("sr").mutants.values())[:6]:  # planted bugs record the same vocabulary
        recorded(sim(3), out)
    return out


def undocumented(records: Recorded, vocabs: tuple[Vocabulary, ...]) -> list[str]:
    """Each kind recorded but not in its mechanism's table, and each attribute recorded but not documented."""
    by_mech = {v.mechanism: v for v in vocabs}
    out = []
    for (mech, kind), attrs in sorted(records.items()):
        vocab = by_mech.get(mech)
        doc = vocab.get(kind) if vocab else None
        if doc is None:
            out.append(f"{mech} kind {kind}")
            continue
        out += [f"{mech} {kind}.{a}" for a in sorted(attrs - doc.attr_names())]
    return out


def missing_from_text(vocabs: tuple[Vocabulary, ...], text: str) -> list[str]:
    """Kinds and attributes of the tables that a document does not show in its rows."""
    out = []
    for v in vocabs:
        for k in v.kinds:
            if f"| `{k.kind}` |" not in text:
                out.append(f"{v.mechanism} kind {k.kind}")
            out += [f"{k.kind}.{a.name}" for a in k.attrs if not re.search(rf"\| `{k.kind}` \| `{a.name}`", text)]
    return out


def test_every_recorded_kind_and_attribute_is_documented(model_records: Recorded) -> None:
    assert {m for m, _ in model_records} >= {"core", "sr", "am", "pf"}
    assert undocumented(model_records, VOCABULARIES) == []


def test_twin_a_kind_removed_from_the_table_fails(model_records: Recorded) -> None:
    sr = next(v for v in VOCABULARIES if v.mechanism == "sr")
    cut = dataclasses.replace(sr, kinds=tuple(k for k in sr.kinds if k.kind != "HARECEIVE"))
    vocabs = tuple(cut if v is sr else v for v in VOCABULARIES)
    assert undocumented(model_records, vocabs) == ["sr kind HARECEIVE"]
    assert "sr kind HARECEIVE" not in missing_from_text(vocabs, render())  # the tables are what the docs show
    assert missing_from_text(VOCABULARIES, render().replace("| `HARECEIVE` |", "| HARECEIVE |"))


def test_twin_an_attribute_removed_from_the_table_fails(model_records: Recorded) -> None:
    pf = next(v for v in VOCABULARIES if v.mechanism == "pf")
    send = pf.get("REPL_SEND")
    assert send is not None
    short = dataclasses.replace(send, attrs=tuple(a for a in send.attrs if a.name != "requires_response"))
    cut = dataclasses.replace(pf, kinds=tuple(short if k is send else k for k in pf.kinds))
    assert undocumented(model_records, tuple(cut if v is pf else v for v in VOCABULARIES)) == [
        "pf REPL_SEND.requires_response"
    ]


def test_both_shipped_docs_show_every_kind_and_are_current() -> None:
    protocol = DOC_PATH.read_text(encoding="utf-8")
    readme = TRACES_README.read_text(encoding="utf-8")
    assert protocol == render(), "run `haconform protocol-doc`"
    assert readme == render_traces_readme(readme), "run `haconform protocol-doc`"
    assert missing_from_text(VOCABULARIES, protocol) == []
    assert missing_from_text(VOCABULARIES, readme) == []
    assert "stall_p" in protocol and "hub:<server>" in protocol


def test_the_tables_are_the_registered_vocabularies() -> None:
    for v in VOCABULARIES:
        if v.mechanism != "core":
            assert v.names() == get(v.mechanism).kinds, v.mechanism


def _shipped(path: str) -> bool:
    """Whether the installed package holds `path` (pyproject: packages and their package data)."""
    conf = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    top, _, rest = path.partition("/")
    if top not in conf["packages"]["find"]["include"] and f"{top}*" not in conf["packages"]["find"]["include"]:
        return False
    if path.endswith(".py"):
        return True
    return any(fnmatch.fnmatch(rest, g) for g in conf.get("package-data", {}).get(top, []))


def unshipped_references(text: str) -> list[str]:
    refs = set(re.findall(r"[A-Za-z_][\w<>.-]*(?:/[\w<>*.-]+)+\.(?:md|py|json|toml|txt)\b", text))
    return sorted(r for r in refs if not _shipped(r))


def test_protocol_points_only_at_shipped_files() -> None:
    assert unshipped_references(DOC_PATH.read_text(encoding="utf-8")) == []
    assert unshipped_references("see model/sr/README.md and examples/sut/sr_node.py") == [  # twin
        "examples/sut/sr_node.py",
        "model/sr/README.md",
    ]


def unexplained_fields(schema: object, path: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            if not sub.get("description"):
                out.append(f"{path}/{name}")
            out += unexplained_fields(sub, f"{path}/{name}")
        for key, sub in schema.items():
            if key != "properties":
                out += unexplained_fields(sub, f"{path}/{key}")
    elif isinstance(schema, list):
        for sub in schema:
            out += unexplained_fields(sub, path)
    return out


def test_every_request_field_is_explained() -> None:
    for m in ("sr", "am", "pf"):
        doc = json.loads((ROOT / "conformance" / "harness" / "schemas" / f"{m}.json").read_text(encoding="utf-8"))
        assert unexplained_fields(doc) == [], m
    twin = {"operations": {"x": {"args": {"properties": {"stall_p": {"type": "number"}}}}}}
    assert unexplained_fields(twin) == ["/operations/x/args/stall_p"]
