"""Traceability (issue 9): every behaviour, invariant, ordering and timing requirement is cited somewhere, or
listed with a reason in spec/uncited.toml; every parameter bounds a rule or is listed in spec/observability.

The lists are checked in both directions, so an entry made stale by a new citation fails too.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.cli import main
from conformance.coverage import (
    CATEGORIES,
    GATED_KINDS,
    PACKAGE_OF,
    PACKAGES,
    collect,
    gaps,
    load_observability,
    load_uncited,
    rules_table,
    unbound_parameters,
)
from spec.catalogue import CatalogueError, catalogue
from traces.verdict import Rule

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def cov():
    return collect(catalogue())


def test_every_gated_requirement_is_cited_or_listed_with_a_reason(cov):
    unlisted, _ = gaps(catalogue(), cov, load_uncited(catalogue()))
    assert not unlisted, (
        f"requirements of kind {'/'.join(GATED_KINDS)} cited by nothing in model/, conformance/, spec/claims/ or "
        f"tests/ and not listed in spec/uncited.toml: {unlisted}"
    )


def test_uncited_list_is_not_stale(cov):
    _, stale = gaps(catalogue(), cov, load_uncited(catalogue()))
    assert not stale, {rid: cov.of(rid)[0].where for rid in stale}  # cited now: remove it from spec/uncited.toml


def test_structured_sources_are_read(cov):
    cat = catalogue()
    seen = {c.category for rid in cat.requirements for c in cov.of(rid)}
    assert {"properties", "claims", "tests", "code"} <= seen
    for pkg, status in cov.tables.items():
        if status == "table":  # a mechanism whose RULES is a table: each row is a citation of its requirement
            for name, rule in cov.rules[pkg].items():
                assert any(c.category == "rules" and repr(name) in c.where for c in cov.of(rule.requirement))


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_twin_a_requirement_loses_its_only_citation_and_the_check_fails(tmp_path):
    cat = catalogue()
    rid = next(r.id for r in cat.requirements.values() if r.kind == "invariant")
    others = {r.id for r in cat.requirements.values() if r.kind in GATED_KINDS} - {rid}
    listed = dict.fromkeys(others, "listed for the twin")
    cited = _tree(tmp_path / "a", {"tests/test_x.py": f'"""checks {rid}"""\n', "model/x.py": "pass\n"})
    cov = collect(cat, root=cited, structured=False)
    assert [c.where for c in cov.of(rid)] == ["tests/test_x.py:1"]
    assert gaps(cat, cov, listed) == ([], [])
    bare = _tree(tmp_path / "b", {"tests/test_x.py": '"""checks nothing"""\n', "model/x.py": "pass\n"})
    assert gaps(cat, collect(cat, root=bare, structured=False), listed) == ([rid], [])


def test_twin_a_listed_requirement_that_is_cited_is_stale(tmp_path):
    cat = catalogue()
    rid = next(r.id for r in cat.requirements.values() if r.kind == "behaviour")
    cov = collect(cat, root=_tree(tmp_path, {"conformance/m.py": f"RULE = {rid!r}\n"}), structured=False)
    assert cov.of(rid)[0].category == "code"
    assert rid in gaps(cat, cov, {rid: "thought uncited"})[1]


def test_ids_are_matched_whole_and_interpretations_do_not_count(tmp_path):
    cat = catalogue()
    interp = next(iter(cat.interpretations))
    cov = collect(cat, root=_tree(tmp_path, {"tests/t.py": f"# {interp} XSR-0011 SR-0011\n"}), structured=False)
    assert not cov.citations


def test_uncited_list_rejects_missing_reasons_and_parameters(tmp_path):
    cat = catalogue()
    path = tmp_path / "uncited.toml"
    path.write_text('[[uncited]]\nid = "SR-002"\n')
    with pytest.raises(CatalogueError, match=r"uncited.toml \[\[uncited\]\] #1 \(SR-002\): needs"):
        load_uncited(cat, path)
    path.write_text('[[uncited]]\nid = "SR-P13"\nreason = "a parameter"\n')
    with pytest.raises(CatalogueError, match="kind 'parameter' need not be listed"):
        load_uncited(cat, path)
    assert all(len(reason) > 30 for reason in load_uncited(cat).values())


# --- parameters with rules -------------------------------------------------------------------------------------


@pytest.mark.parametrize("package", PACKAGES)
def test_every_parameter_bounds_a_rule_or_is_listed_unobservable(package):
    cat = catalogue()
    exempt = load_observability(cat)
    table, status = rules_table(package)
    if table is None:
        pytest.skip(f"not enforced for {package} yet: {status}")
    tables = {p: t for p in PACKAGES if (t := rules_table(p)[0]) is not None}
    problems = unbound_parameters(cat, tables, exempt, package)
    assert not problems, "\n".join(problems)


def _rule(req: str, *params: str) -> Rule:
    return Rule("r", req, "always", "s", params)


def test_twin_a_parameter_in_no_rule_and_not_exempt_is_reported():
    cat = catalogue()
    params = [r.id for r in cat.requirements.values() if r.parameter is not None and PACKAGE_OF[r.mechanism] == "sr"]
    full = {"sr": {"all": _rule("SR-031", *params)}}
    assert unbound_parameters(cat, full, {}, "sr") == []
    dropped = {"sr": {"all": _rule("SR-031", *params[1:])}}
    problems = unbound_parameters(cat, dropped, {}, "sr")
    assert len(problems) == 1 and problems[0].startswith(f"{params[0]} ")
    assert unbound_parameters(cat, dropped, {params[0]: ("unobservable", "why", "sr.toml")}, "sr") == []
    both = unbound_parameters(cat, full, {params[0]: ("unobservable", "why", "sr.toml")}, "sr")
    assert len(both) == 1 and "yet is listed" in both[0]
    typo = unbound_parameters(cat, {"sr": {"x": _rule("SR-031", *params, "SR-P99")}}, {}, "sr")
    assert typo == ["model/sr/rules.py RULES['x'].params: 'SR-P99' is not a parameter"]


def test_observability_loader_names_file_and_entry(tmp_path):
    cat = catalogue()
    (tmp_path / "observability").mkdir()
    (tmp_path / "observability" / "sr.toml").write_text(
        '[[unobservable]]\nid = "SR-P07"\nreason = "x"\n[[no_bound]]\nid = "SR-P18"\nreason = "y"\n'
    )
    assert load_observability(cat, tmp_path) == {
        "SR-P07": ("unobservable", "x", "sr.toml"),
        "SR-P18": ("no_bound", "y", "sr.toml"),
    }
    (tmp_path / "observability" / "am.toml").write_text('[[unobservable]]\nid = "SR-031"\nreason = "x"\n')
    with pytest.raises(CatalogueError, match=r"observability/am.toml SR-031: not a parameter"):
        load_observability(cat, tmp_path)
    (tmp_path / "observability" / "am.toml").write_text('[[unobservable]]\nid = "SR-P07"\nreason = "x"\n')
    with pytest.raises(CatalogueError, match=r"observability/sr\.toml SR-P07: already listed in am\.toml"):
        load_observability(cat, tmp_path)


# --- the CLI ---------------------------------------------------------------------------------------------------


def test_coverage_command_prints_the_matrix(capsys):
    assert main(["coverage", "--json", "--mechanism", "sr"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = {r["id"]: r for r in doc["requirements"]}
    assert rows and all(rid.startswith("SR-") for rid in rows)
    assert set(CATEGORIES) <= set(rows["SR-031"]) and rows["SR-031"]["rules"] >= 1
    assert doc["uncited_unlisted"] == [] and doc["listed_but_cited"] == []
    assert main(["coverage"]) == 0
    assert "cited by nothing" in capsys.readouterr().out


def test_spec_id_shows_citations_and_where_the_default_stands(capsys):
    assert main(["spec", "SR-P16"]) == 0
    out = capsys.readouterr().out
    assert "default at: 000_bc7da9fde6232d0b.txt:334: '2 days'" in out and "cited by" in out
    assert main(["spec", "AM-P03", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["default_source"]["source"] == "none" and "AM-I09" in doc["default_source"]["value_from"]
    assert main(["spec", "SR-031", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["cited_by"]["claims"]


def test_a_rules_table_of_rule_is_read_as_structured_citations(monkeypatch):
    import model.sr.rules as sr_rules

    table = {"only-rule": Rule("only-rule", "SR-031", "always", "ack after the shadow's ack", ("SR-P13", "SR-P14"))}
    monkeypatch.setattr(sr_rules, "RULES", table, raising=False)
    assert rules_table("sr") == (table, "table")
    cov = collect(catalogue(), packages=("sr",))
    assert cov.tables == {"sr": "table"}
    where = "model/sr/rules.py RULES['only-rule']"
    assert [c.where for c in cov.of("SR-031") if c.category == "rules"] == [where]
    assert [c.where for c in cov.of("SR-P14") if c.category == "rules"] == [where]
    monkeypatch.setattr(sr_rules, "RULES", {"x": "SR-031"}, raising=False)
    assert rules_table("sr")[0] is None and "not yet a dict" in rules_table("sr")[1]
