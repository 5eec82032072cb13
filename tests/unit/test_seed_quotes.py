"""The seed sentence each requirement rests on ships with the package (issue 31, item 4).

`spec/seed_quotes.toml` (written by `scripts/seed_quotes.py`) quotes one sentence per requirement and
interpretation source; a card reads it from the catalogue, never from the seeds. Checked: every source has a
quote (twin: a catalogue copy with one quote removed is named by `quote_problems`), every quote still stands in
its seed section when the seeds are at hand (skipped otherwise; twin: an altered quote does not stand), a
card quotes the seed with the seeds away (`seeds_dir` patched to None), and, marked slow, from a wheel built
from this tree and unpacked outside it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conformance.audit import seedtext
from spec import catalogue as catalogue_mod
from spec.catalogue import QUOTES_FILE, SPEC_DIR, CatalogueError, catalogue, load, quote_problems, seeds_dir

pytestmark = pytest.mark.unit
REPO = Path(__file__).resolve().parents[2]
SR031 = "After the primary server receives acknowledgement from the shadow server"


def _clear() -> None:
    seedtext.cited.cache_clear()
    seedtext.section_text.cache_clear()
    seedtext.section_lines.cache_clear()
    seedtext._seed_lines.cache_clear()
    seedtext._headings.cache_clear()


def test_every_source_has_a_quote():
    cat = catalogue()
    assert quote_problems(cat) == []
    assert len(cat.quotes) >= 600
    assert {q.how for q in cat.quotes.values()} == {"closest", "opening"}


def test_twin_a_requirement_without_its_quote_is_named(tmp_path):
    copy = tmp_path / "spec"
    shutil.copytree(SPEC_DIR, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    text = (copy / QUOTES_FILE).read_text(encoding="utf-8")
    start = text.index('[[quote]]\nid = "SR-031"')
    end = text.index("[[quote]]", start + 1)
    (copy / QUOTES_FILE).write_text(text[:start] + text[end:], encoding="utf-8")
    problems = quote_problems(load(copy))
    assert len(problems) == 1 and problems[0].startswith("SR-031: no seed quote for 000_bc7da9fde6232d0b.txt")
    (copy / QUOTES_FILE).write_text(text.replace('\nhow = "closest"', '\nhow = "guessed"', 1), encoding="utf-8")
    with pytest.raises(CatalogueError, match=r"seed_quotes.toml quote \d+ \(\w\w-\w+\): field 'how' 'guessed'"):
        load(copy)


def test_every_quote_stands_in_its_seed_section():
    if seeds_dir() is None:
        pytest.skip("the seeds are not at hand: the stored quotes cannot be checked against them")
    gone = [
        f"{q.id} {q.seed} {q.section!r}"
        for q in catalogue().quotes.values()
        if seedtext.quote_stands(q.sentence, q.seed, q.section) is False
    ]
    assert gone == [], f"quotes no longer in their seed section (run scripts/seed_quotes.py): {gone[:5]}"
    src = catalogue().get("SR-031").sources[0]
    q = catalogue().quotes[("SR-031", src.seed, src.section)]
    assert seedtext.quote_stands(q.sentence.replace("primary", "secondary"), q.seed, q.section) is False  # twin


def test_a_card_quotes_the_seed_with_the_seeds_away(monkeypatch):
    monkeypatch.setattr(catalogue_mod, "seeds_dir", lambda: None)
    monkeypatch.setattr(seedtext, "seeds_dir", lambda: None)
    monkeypatch.setattr(seedtext, "SPEC_DIR", Path("/nonexistent/spec"))
    _clear()
    try:
        assert seedtext.seed_path("000_bc7da9fde6232d0b.txt") is None  # nothing to read the sentence from
        c = seedtext.cited("SR-031")
        assert c is not None and SR031 in c.quotes[0].sentence and c.quotes[0].how == "closest"
        from conformance.audit.cards import quote as _quote

        assert SR031 in _quote("SR-031") and "closest sentence of the section" in _quote("SR-031")
        assert "opening sentence" in _quote("BF-P01")  # the Chinese seed's quote says how it was chosen
    finally:
        _clear()


@pytest.mark.slow
def test_an_installed_wheel_quotes_the_seed_outside_the_repository(tmp_path):
    """Builds the wheel from a copy of this tree (pip, isolated build), unpacks it in a temporary directory with no
    `shared/seeds` above it, and asks it for a card's quote in a fresh interpreter."""
    src = tmp_path / "src"  # a copy: pip builds in the source tree, which is left untouched
    skip = shutil.ignore_patterns(".git", "build", "*.egg-info", "__pycache__", ".hypothesis", ".ruff_cache", "out")
    shutil.copytree(REPO, src, ignore=skip)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    if built.returncode:
        pytest.skip(f"the wheel could not be built here (pip needs setuptools>=68): {built.stderr[-300:]}")
    wheel = next((tmp_path / "dist").glob("haconform-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        assert f"spec/{QUOTES_FILE}" in zf.namelist()
        zf.extractall(tmp_path / "site")
    probe = (
        "import spec, sys; from conformance.audit.seedtext import cited, seed_path; from spec.catalogue import "
        "seeds_dir; assert spec.__file__.startswith(sys.argv[1]), spec.__file__; assert seeds_dir() is None; "
        "assert seed_path('000_bc7da9fde6232d0b.txt') is None; print(cited('SR-031').quotes[0].sentence)"
    )
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path / "site"), "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "site")], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    assert SR031 in run.stdout
