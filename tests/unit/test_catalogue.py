"""The requirement catalogue: well-formed, complete over the seeds, parameters with defaults and units."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.catalogue import ID_RE, KINDS, CatalogueError, catalogue, load, seeds_dir

pytestmark = pytest.mark.unit
SEEDS_DIR = seeds_dir() or Path("shared/seeds")
REPO = Path(__file__).resolve().parents[2]


def test_ids_unique_and_well_formed():
    cat = catalogue()
    for rid, req in cat.requirements.items():
        assert ID_RE.match(rid), rid
        assert rid.split("-")[0].lower() == req.mechanism
        assert req.kind in KINDS
        assert req.statement
    for iid in cat.interpretations:
        assert ID_RE.match(iid) and "-I" in iid


def test_every_parameter_has_default_unit_and_a_valid_range():
    params = catalogue().parameters()
    assert len(params) >= 40
    names = [p.name for p in params]
    assert len(names) == len(set(names)), "parameter names must be unique"
    for p in params:
        assert p.default is not None and p.unit, p.name
        if p.unit == "enum":
            assert p.default in p.values, p.name
        if p.range is not None and not isinstance(p.default, bool):
            assert p.range[0] <= p.default <= p.range[1], p.name


def test_known_defaults_from_the_seeds():
    cat = catalogue()
    assert cat.param("ShadowHeartbeatFrequency").default_ms == 2 * 60_000
    assert cat.param("ShadowResubmitTimeSpan").default_ms == 3 * 3_600_000
    assert cat.param("MaxRetriesForRemoteSiteShadow").default == 4
    assert cat.param("ReceiveConnectionInactivityTimeoutEdge").default_ms == 60_000
    assert cat.param("BackfillLaterRetryRemote").default_ms == 48 * 3_600_000
    assert cat.param("ReplicationMessageSizeLimit").default == 300


def test_sources_name_real_seeds_and_sections():
    cat = catalogue()
    sections = {(s.seed, s.section) for s in cat.sections}
    for req in cat.requirements.values():
        for src in req.sources:
            if req.origin == "project":
                assert req.id.startswith("TR-")
                doc = (REPO / src.seed).read_text(encoding="utf-8")
                assert f"## {src.section}" in doc, (req.id, src)
            else:
                assert (src.seed, src.section) in sections, (req.id, src)


def test_every_section_of_every_seed_is_covered_or_out_of_scope():
    cat = catalogue()
    cited = {(s.seed, s.section) for r in cat.requirements.values() for s in r.sources}
    cited |= {(s.seed, s.section) for i in cat.interpretations.values() for s in i.sources}
    uncovered = [(s.seed, s.section) for s in cat.sections if (s.seed, s.section) not in cited and not s.out_of_scope]
    assert not uncovered, f"sections with no requirement and no out_of_scope reason: {uncovered}"


@pytest.mark.skipif(not SEEDS_DIR.is_dir(), reason=f"seed documents not found at {SEEDS_DIR}")
def test_section_titles_appear_verbatim_in_their_seed():
    cat = catalogue()
    assert set(cat.seeds) == {p.name for p in SEEDS_DIR.glob("*.txt")}
    for s in cat.sections:
        if s.section == "(introduction)":
            continue
        # whitespace normalised: seed 003 writes "Exchange Server\u00a02003" with a no-break space
        text = (SEEDS_DIR / s.seed).read_text(encoding="utf-8")
        lines = {" ".join(line.split()) for line in text.splitlines()}
        assert s.section in lines, (s.seed, s.section)


def test_loader_rejects_bad_entries_naming_file_and_field(tmp_path):
    (tmp_path / "requirements").mkdir()
    (tmp_path / "seeds.toml").write_text("")
    bad = tmp_path / "requirements" / "sr.toml"
    bad.write_text(
        'mechanism = "sr"\n[[requirement]]\nid = "SR-001"\nkind = "wish"\nstatement = "x"\n'
        'sources = [{ seed = "a", section = "b" }]\n'
    )
    with pytest.raises(CatalogueError, match=r"sr.toml requirement SR-001: field 'kind'"):
        load(tmp_path)
    bad.write_text(
        'mechanism = "sr"\n[[requirement]]\nid = "AM-001"\nkind = "behaviour"\nstatement = "x"\n'
        'sources = [{ seed = "a", section = "b" }]\n'
    )
    with pytest.raises(CatalogueError, match="prefix"):
        load(tmp_path)
    bad.write_text(
        'mechanism = "sr"\n[[requirement]]\nid = "SR-001"\nkind = "parameter"\nstatement = "x"\n'
        'sources = [{ seed = "a", section = "b" }]\n'
    )
    with pytest.raises(CatalogueError, match="parameter"):
        load(tmp_path)


def test_catalogue_is_dense_and_every_seed_is_cited():
    cat = catalogue()
    assert len(cat.requirements) > 100
    cited = {s.seed for r in cat.requirements.values() for s in r.sources}
    assert set(cat.seeds) <= cited
    assert {r.mechanism for r in cat.requirements.values()} == {"sr", "am", "pf", "bf", "tr"}
    for interp in cat.interpretations.values():
        assert all(cat.has(r) for r in interp.requirements), interp.id
        if interp.parameter:
            cat.param(interp.parameter)  # a selectable alternative names a real parameter


def test_cite_accepts_requirements_and_interpretations_and_rejects_unknown():
    from spec.catalogue import cite

    cite("SR-P13", next(iter(catalogue().interpretations)))
    with pytest.raises(CatalogueError, match="XX-I99"):
        cite("XX-I99")
