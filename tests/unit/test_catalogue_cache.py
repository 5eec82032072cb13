"""The parsed catalogue kept between runs (`spec.catalogue.load_cached`, `spec.catalogue_cache`; issue 32,
startup): a current cache gives what the TOML gives without parsing it; a cache left from other TOML is stale and
not used. Twin: a catalogue file edited after the cache was written is read from the TOML, its new text seen, and
the cache rewritten."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from spec import catalogue, catalogue_cache
from spec.catalogue import CACHE_NAME, Catalogue, CatalogueError, cache_inputs, load, load_cached

pytestmark = pytest.mark.unit


@pytest.fixture
def spec_copy(tmp_path: Path) -> Path:
    """The shipped catalogue's input files, copied (the cache is written beside them)."""
    base = tmp_path / "spec"
    shutil.copytree(catalogue.REQUIREMENTS_DIR, base / "requirements")
    for name in ("seeds.toml", catalogue.PARAM_SOURCES_FILE, catalogue.QUOTES_FILE):
        shutil.copy(catalogue.SPEC_DIR / name, base / name)
    return base


def _parsing_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(base: Path | None = None) -> None:
        raise AssertionError("the TOML was parsed although the cache is current")

    monkeypatch.setattr(catalogue, "load", refuse)


def test_a_current_cache_gives_the_catalogue_without_parsing(spec_copy, monkeypatch):
    first = load_cached(spec_copy)
    assert first == load(spec_copy)
    assert (spec_copy / CACHE_NAME).is_file()
    assert not list(spec_copy.glob("*.tmp"))  # written atomically: no temporary file left
    _parsing_refused(monkeypatch)
    assert load_cached(spec_copy) == first


def test_twin_a_stale_cache_is_not_used(spec_copy, monkeypatch):
    before = load_cached(spec_copy)
    path = spec_copy / "requirements" / "sr.toml"
    text = path.read_text(encoding="utf-8")
    assert '\nstatement = "' in text  # the first requirement's statement gains a word
    path.write_text(text.replace('\nstatement = "', '\nstatement = "Edited ', 1), encoding="utf-8")
    stale_key = catalogue_cache.key(cache_inputs(spec_copy))
    assert catalogue_cache.read(spec_copy / CACHE_NAME, stale_key, Catalogue) is None  # detected
    after = load_cached(spec_copy)
    edited = [r for r in after.requirements.values() if r.statement.startswith("Edited ")]
    assert len(edited) == 1 and after != before
    _parsing_refused(monkeypatch)  # and the rewritten cache now holds the edited catalogue
    assert load_cached(spec_copy) == after


def test_a_broken_cache_or_an_unwritable_directory_still_gives_the_catalogue(spec_copy, monkeypatch):
    cache = spec_copy / CACHE_NAME
    cache.write_bytes(catalogue_cache.FORMAT + catalogue_cache.key(cache_inputs(spec_copy)) + b"\nnot a pickle")
    assert load_cached(spec_copy) == load(spec_copy)  # unreadable: parsed again and rewritten
    cache.unlink()
    monkeypatch.setattr(catalogue_cache.tempfile, "mkstemp", _no_write)
    assert load_cached(spec_copy) == load(spec_copy)
    assert not cache.exists()


def test_a_cached_catalogue_still_refuses_a_broken_file(spec_copy):
    load_cached(spec_copy)
    (spec_copy / "requirements" / "sr.toml").write_text('mechanism = "sr"\n[[requirement]]\nid = "SR-1"\n')
    with pytest.raises(CatalogueError, match=r"sr\.toml"):
        load_cached(spec_copy)


def _no_write(*args: object, **kwargs: object) -> tuple[int, str]:
    raise PermissionError("read-only directory")
