"""What a report card quotes about a requirement: its statement, its seed by subject, and the seed's sentence.

The catalogue (`spec/requirements/*.toml`, `spec.catalogue`) gives each requirement's statement and its
sources (seed file and section heading); `spec/seeds.toml` names each seed by its subject. The sentence
quoted is stored in the catalogue (`spec/seed_quotes.toml`, shipped in the package: issue 31), so a card
quotes it from an installed copy without the seeds. It was chosen from the seed once, by
`scripts/seed_quotes.py` with `choose_quote` below: the section's text is the lines after its heading up to
the next heading of that seed, and the sentence quoted is the one sharing most words with the statement
("closest sentence of the section"); when none shares `MIN_SHARED` words (the Chinese translation, seed 004,
shares none with an English statement) it is the section's opening sentence, and the card says which. The
quote is never the requirement (the statement is that). When the seeds are at hand the tests check every
stored quote still stands in its section (`quote_stands`); seeds may move, the stored quote does not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from spec.catalogue import SPEC_DIR, catalogue, seeds_dir

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z(\"'•])|(?<=[。！？；])")
_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the of to in on for and or is are be by it its as at that this with from than then when only not no "
        "any every each one after before into was were has have had which who what if so but may must",
    )
)
MIN_SHARED = 3
HOW_TEXT = {
    "closest": "closest sentence of the section",
    "opening": "the section's opening sentence: no sentence of it shares the statement's words",
}


@dataclass(frozen=True, slots=True)
class Quote:
    """One source of a requirement: the seed's subject and file, the section, its quoted sentence and how that
    sentence was chosen (`HOW_TEXT`); `sentence` is "" when the catalogue records no quote for the source."""

    subject: str
    seed: str
    section: str
    sentence: str
    how: str = "closest"


@dataclass(frozen=True, slots=True)
class Cited:
    """A requirement (or interpretation) as a card quotes it."""

    id: str
    statement: str
    quotes: tuple[Quote, ...]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _norm(line: str) -> str:
    """A line with its whitespace (no-break spaces too) collapsed; a Markdown heading without its `#`s."""
    line = " ".join(line.split())
    return line.lstrip("#").strip() if line.startswith("#") else line


def seed_path(seed: str) -> Path | None:
    """The seed file: in the seeds directory; a project document (`traces/README.md`, TR- requirements) in the
    repository or package beside `spec/`. None when it is not at hand."""
    base = seeds_dir()
    for path in (base / seed if base is not None else None, SPEC_DIR.parent / seed):
        if path is not None and path.is_file():
            return path
    return None


@cache
def _seed_lines(seed: str) -> tuple[str, ...]:
    path = seed_path(seed)
    if path is None:
        return ()
    return tuple(_norm(line) for line in path.read_text(encoding="utf-8").splitlines())


@cache
def _headings(seed: str) -> frozenset[str]:
    """The seed's section headings: those `spec/seeds.toml` lists, and every `#` line of a Markdown document."""
    out = {_norm(s.section) for s in catalogue().sections if s.seed == seed}
    path = seed_path(seed) if seed.endswith(".md") else None
    if path is not None:
        out |= {_norm(line) for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")}
    return frozenset(out)


@cache
def section_text(seed: str, section: str) -> str:
    """The text of `section` of `seed`, its lines joined (`section_lines`)."""
    return " ".join(section_lines(seed, section))


@cache
def section_lines(seed: str, section: str) -> tuple[str, ...]:
    """The non-empty lines of `section` of `seed`: after the heading line, up to the next heading of that seed
    (the longest such run, so the table of contents, which repeats the headings, is passed over)."""
    lines, headings = _seed_lines(seed), _headings(seed)
    want = _norm(section)
    best: list[str] = []
    for i, line in enumerate(lines):
        if line != want and not (section == "(introduction)" and i == 0):
            continue
        body = []
        for nxt in lines[i + 1 :]:
            if nxt in headings:
                break
            if nxt:
                body.append(nxt)
        if len(body) > len(best):
            best = body
    return tuple(best)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def closest_sentence(statement: str, text: str) -> str:
    """The sentence of `text` sharing most words with `statement` ("" when none shares `MIN_SHARED`)."""
    want = _words(statement)
    best, score = "", MIN_SHARED - 1
    for sentence in (u for line in text.split("\n") for u in sentences(line)):
        shared = len(want & _words(sentence))
        if shared > score:
            best, score = sentence, shared
    return best


def _md_units(lines: tuple[str, ...]) -> list[str]:
    """A Markdown section as quotable units: each table row (its cells), each run of prose lines joined."""
    units: list[str] = []
    prose: list[str] = []
    for line in lines:
        if line.startswith("|"):
            if prose:
                units.append(" ".join(prose))
                prose = []
            if line.strip("|- "):
                units.append(line.strip("| "))
        else:
            prose.append(line)
    if prose:
        units.append(" ".join(prose))
    return units


def choose_quote(statement: str, seed: str, section: str) -> tuple[str, str]:
    """(sentence, how) for one source, from the seed text (module docstring); ("", "") when the section's
    text is not at hand."""
    text = section_text(seed, section)
    if not text:
        return "", ""
    if seed.endswith(".md"):  # a project document: a table row is a unit of its own, never a whole table
        text = "\n".join(_md_units(section_lines(seed, section)))
    if best := closest_sentence(statement, text):
        return best, "closest"
    return sentences(text)[0], "opening"


def quote_stands(sentence: str, seed: str, section: str) -> bool | None:
    """Whether a stored quote still stands in its seed section; None when the seed is not at hand."""
    if seed_path(seed) is None:
        return None
    return " ".join(sentence.split()) in section_text(seed, section)


@cache
def cited(req_id: str) -> Cited | None:
    """The statement, sources and stored quotes of a requirement or interpretation ID; None when the catalogue
    lacks it. Read from the catalogue only: no seed file is opened."""
    cat = catalogue()
    req = cat.requirements.get(req_id)
    if req is not None:
        statement, sources = req.statement, req.sources
    else:
        interp = cat.interpretations.get(req_id)
        if interp is None:
            return None
        statement, sources = interp.reading, interp.sources
    quotes = []
    for s in sources:
        q = cat.quotes.get((req_id, s.seed, s.section))
        sentence, how = (q.sentence, q.how) if q is not None else ("", "")
        quotes.append(Quote(cat.seeds.get(s.seed, s.seed), s.seed, s.section, sentence, how))
    return Cited(req_id, statement, tuple(quotes))
