"""Every configuration field a monitor reads is in the vocabulary tables with its meaning, type and default
(issue 30): the readers are found by AST (every attribute access in `model/<mechanism>/` whose name is a field
of the mechanism's configuration class: `SrConfig`, bcss `Options`, pf `Params` and `RunConfig`), and every
field of those classes has its row. Twin: a row removed from a table is named with a reader's file and line.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from conformance.harness.protocol_doc import VOCABULARIES, render
from model.am.bcss import Options
from model.pf.config import RunConfig
from model.pf.state import Params
from model.sr.state import SrConfig
from traces.vocabulary import Vocabulary

pytestmark = pytest.mark.unit
ROOT = Path(__file__).resolve().parents[2]
CLASSES: dict[str, tuple[type, ...]] = {"sr": (SrConfig,), "am": (Options,), "pf": (Params, RunConfig)}
ALIASES = {"latency_max_ms": "latency_ms", "params": None}  # RunConfig: the bound as recorded; params: its rows
EXTRA = {"sr": {"sr_topology"}}  # rows for what is not a field of the classes (the recorded topology)


def fields_of(mech: str) -> set[str]:
    names = (ALIASES.get(f.name, f.name) for cls in CLASSES[mech] for f in dataclasses.fields(cls))
    return {n for n in names if n is not None}


def readers(mech: str) -> dict[str, list[str]]:
    """Each configuration field read by an attribute access in `model/<mech>/*.py`, with where."""
    wanted = {f.name: ALIASES.get(f.name, f.name) for cls in CLASSES[mech] for f in dataclasses.fields(cls)}
    out: dict[str, list[str]] = {}
    for path in sorted((ROOT / "model" / mech).glob("*.py")):
        if path.name in ("vocabulary.py", "contract.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and node.attr in wanted:
                name = wanted[node.attr]
                if name is not None:
                    out.setdefault(name, []).append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def undocumented(vocabs: tuple[Vocabulary, ...]) -> list[str]:
    out = []
    for v in vocabs:
        if v.mechanism not in CLASSES:
            continue
        rows = {c.name for c in v.config}
        read = readers(v.mechanism)
        out += [f"{v.mechanism} config {n} (read at {read[n][0]})" for n in sorted(set(read) - rows)]
        out += [
            f"{v.mechanism} config {n} (a field, no row)" for n in sorted(fields_of(v.mechanism) - rows - set(read))
        ]
    return out


def test_every_configuration_field_read_is_documented() -> None:
    assert undocumented(VOCABULARIES) == []
    for m in ("sr", "am", "pf"):
        assert readers(m), m  # the scan finds the readers
    assert {"recv_inactivity_ms", "promotion_check", "preference_by_server"} <= set(readers("sr"))
    assert "thresholds" in readers("am")


def test_no_row_for_a_field_that_does_not_exist() -> None:
    for v in VOCABULARIES:
        if v.mechanism in CLASSES:
            assert {c.name for c in v.config} <= fields_of(v.mechanism) | EXTRA.get(v.mechanism, set()), v.mechanism


def trace_start_keys(mech: str) -> dict[str, str]:
    """The keys of TRACE_START `config` a monitor reads (`cfg.get("<key>")` in `model/<mech>/`), with where."""
    out: dict[str, str] = {}
    for path in sorted((ROOT / "model" / mech).glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "cfg"
                and node.args
                and isinstance(node.args[0], ast.Constant)
            ):
                out.setdefault(str(node.args[0].value), f"{path.relative_to(ROOT)}:{node.lineno}")
    return out


def unlisted_keys(vocabs: tuple[Vocabulary, ...]) -> list[str]:
    out = []
    for v in vocabs:
        if v.mechanism in CLASSES:
            shown = {c.name for c in v.config} | {w for c in v.config for w in (c.where,)}
            for key, where in sorted(trace_start_keys(v.mechanism).items()):
                if key not in shown and not any(f"`config.{key}`" in w for w in shown):
                    out.append(f"{v.mechanism} TRACE_START config.{key} (read at {where})")
    return out


def test_every_trace_start_config_key_read_is_documented() -> None:
    assert trace_start_keys("sr").keys() >= {"sr", "sr_topology"} and "bcss" in trace_start_keys("am")
    assert unlisted_keys(VOCABULARIES) == []
    sr = next(v for v in VOCABULARIES if v.mechanism == "sr")
    cut = dataclasses.replace(sr, config=tuple(c for c in sr.config if c.name != "sr_topology"))
    assert [u.split(" (")[0] for u in unlisted_keys(tuple(cut if v is sr else v for v in VOCABULARIES))] == [
        "sr TRACE_START config.sr_topology"
    ]  # twin


def test_the_rows_are_rendered_with_meaning_type_and_default() -> None:
    text = render()
    for v in VOCABULARIES:
        for c in v.config:
            assert f"| `{c.name}` | {c.where} | {c.type} | {c.default} |" in text, c.name
            assert c.meaning and c.type and c.default
    assert '`[["Lossless",0],["GoodAvailability",6],["BestAvailability",12]]`' in text  # am thresholds as pairs


def test_twin_a_row_removed_is_named_with_its_reader() -> None:
    sr = next(v for v in VOCABULARIES if v.mechanism == "sr")
    cut = dataclasses.replace(sr, config=tuple(c for c in sr.config if c.name != "recv_inactivity_ms"))
    found = undocumented(tuple(cut if v is sr else v for v in VOCABULARIES))
    assert len(found) == 1 and found[0].startswith("sr config recv_inactivity_ms (read at model/sr/")
