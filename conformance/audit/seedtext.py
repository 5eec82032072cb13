"""What a report card quotes about a requirement: its statement, its seed by subject, and the seed's sentence.

The catalogue (`spec/requirements/*.toml`, `spec.catalogue`) gives each requirement's statement and its
sources (seed file and section heading); `spec/seeds.toml` names each seed by its subject. The sentence is
read from the seed documents themselves (`spec.catalogue.seeds_dir`, absent from an installed copy without
them): the section's text is the lines after its heading up to the next heading of that seed, and the
sentence quoted is the one sharing most words with the requirement's statement. It is shown as "closest
sentence of the section", never as the requirement (the statement is that); with no seeds at hand, or no
sentence sharing three words, the page names the section only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from spec.catalogue import catalogue, seeds_dir

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*")
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+(?=[A-Z(\"'])")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "for",
        "and",
        "or",
        "is",
        "are",
        "be",
        "by",
        "it",
        "its",
        "as",
        "at",
        "that",
        "this",
        "with",
        "from",
        "than",
        "then",
        "when",
        "only",
        "not",
        "no",
        "any",
        "every",
        "each",
        "one",
        "after",
        "before",
        "into",
        "was",
        "were",
        "has",
        "have",
        "had",
        "which",
        "who",
        "what",
        "if",
        "so",
        "but",
        "may",
        "must",
    ]
)
MIN_SHARED = 3


@dataclass(frozen=True, slots=True)
class Quote:
    """One source of a requirement: the seed's subject and file, the section, and its closest sentence."""

    subject: str
    seed: str
    section: str
    sentence: str


@dataclass(frozen=True, slots=True)
class Cited:
    """A requirement (or interpretation) as a card quotes it."""

    id: str
    statement: str
    quotes: tuple[Quote, ...]


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


@cache
def _seed_lines(seed: str) -> tuple[str, ...]:
    base = seeds_dir()
    path = base / seed if base is not None else None
    if path is None or not Path(path).is_file():
        return ()
    return tuple(line.strip() for line in Path(path).read_text(encoding="utf-8").splitlines())


@cache
def section_text(seed: str, section: str) -> str:
    """The text of `section` of `seed`: after the heading line, up to the next heading of that seed (the
    longest such run, so the table of contents, which repeats the headings, is passed over)."""
    lines = _seed_lines(seed)
    headings = {s.section for s in catalogue().sections if s.seed == seed}
    best: list[str] = []
    for i, line in enumerate(lines):
        if line != section and not (section == "(introduction)" and i == 0):
            continue
        body = []
        for nxt in lines[i + 1 :]:
            if nxt in headings:
                break
            if nxt:
                body.append(nxt)
        if len(body) > len(best):
            best = body
    return " ".join(best)


def closest_sentence(statement: str, text: str) -> str:
    """The sentence of `text` sharing most words with `statement` ("" when none shares `MIN_SHARED`)."""
    want = _words(statement)
    best, score = "", MIN_SHARED - 1
    for sentence in _SENTENCE_END.split(text):
        shared = len(want & _words(sentence))
        if shared > score:
            best, score = sentence.strip(), shared
    return best


@cache
def cited(req_id: str) -> Cited | None:
    """The statement and sources of a requirement or interpretation ID; None when the catalogue lacks it."""
    cat = catalogue()
    req = cat.requirements.get(req_id)
    if req is not None:
        statement, sources = req.statement, req.sources
    else:
        interp = cat.interpretations.get(req_id)
        if interp is None:
            return None
        statement, sources = getattr(interp, "reading", ""), getattr(interp, "sources", ())
    quotes = tuple(
        Quote(
            cat.seeds.get(s.seed, s.seed),
            s.seed,
            s.section,
            closest_sentence(statement, section_text(s.seed, s.section)),
        )
        for s in sources
    )
    return Cited(req_id, statement, quotes)
