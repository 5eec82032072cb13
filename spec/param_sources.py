"""Where each parameter's default stands in the seed text (`spec/param_sources.toml`), and the check that it does.

A golden sample test detects change, not conformance, so a catalogue default is pinned to the seed instead:
each parameter names the seed file and line holding its default and the literal text expected
there; `check_pins` reads that line and converts the text to the catalogue's unit with one of a few explicit
readings (no fuzzy matching), so a changed default, or a changed seed, fails naming the parameter. Where the
seeds give no value (the AutoDatabaseMountDial thresholds of seed 002 "Best Copy Selection", the project's
interpretation selectors), the entry says `source = "none"`, why, and where the value comes from instead.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spec.parameter import DURATION_MS, CatalogueError, Parameter

READINGS = ("duration", "number", "boolean", "name", "clock-period", "clock-offset")

# Explicit unit words of the seeds (English 000-003, Chinese 004) and the catalogue unit they mean.
DURATION_WORDS = {
    "minute": "min",
    "minutes": "min",
    "分钟": "min",
    "hour": "h",
    "hours": "h",
    "小时": "h",
    "day": "d",
    "days": "d",
    "天": "d",
}
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "ten": 10, "twelve": 12}
# A count read from the text must carry the word of the catalogue unit when it has one ("300 KB", "10 log files").
COUNT_UNIT_WORDS = {"KB": ("KB",), "logs": ("log files", "logs"), "count": ()}
BOOLEANS = {"$true": True, "$false": False}

_NUM = r"(\d+|" + "|".join(NUMBER_WORDS) + r")"
_DURATION_RE = re.compile(_NUM + r"[\s-]*(" + "|".join(sorted(DURATION_WORDS, key=len, reverse=True)) + r")\b")
_CLOCK_RE = re.compile(r"(\d{1,2}):(\d{2})\s*([AP])\.M\.")


@dataclass(frozen=True, slots=True)
class Pin:
    seed: str
    line: int
    text: str
    reading: str
    label: str = ""
    label_line: int = 0


@dataclass(frozen=True, slots=True)
class ParamSource:
    """One parameter's source: pins into the seed text, or `source == "none"` with a reason."""

    id: str
    source: str  # "seed" or "none"
    pins: tuple[Pin, ...] = ()
    reason: str = ""
    value_from: str = ""

    def to_json(self) -> dict[str, Any]:
        if self.source == "none":
            return {"source": "none", "reason": self.reason, "value_from": self.value_from}
        return {
            "source": "seed",
            "pins": [{"seed": p.seed, "line": p.line, "text": p.text, "reading": p.reading} for p in self.pins],
        }


def _norm(text: str) -> str:
    """Whitespace normalised: the seeds use no-break spaces (`\\xa0`) inside some values."""
    return " ".join(text.split())


def _number(token: str) -> int:
    return int(token) if token.isdigit() else NUMBER_WORDS[token.lower()]


def _clock_minutes(text: str) -> list[int]:
    """Times of day written '12:15 A.M.' as minutes past midnight (12 A.M. is midnight, 12 P.M. noon)."""
    out = []
    for hh, mm, half in _CLOCK_RE.findall(text):
        hour = int(hh) % 12 + (12 if half == "P" else 0)
        out.append(hour * 60 + int(mm))
    return sorted(out)


def read_value(text: str, reading: str, param: Parameter) -> Any:
    """The value `text` states, in the catalogue unit of `param`: ms for durations, else as the catalogue writes it.

    Raises `ValueError` when the text does not state a value under that reading.
    """
    text = _norm(text)
    if reading == "duration":
        m = _DURATION_RE.search(text)
        if not m:
            raise ValueError(f"no '<number> <minutes|hours|days>' in {text!r}")
        return _number(m.group(1)) * DURATION_MS[DURATION_WORDS[m.group(2)]]
    if reading == "number":
        words = COUNT_UNIT_WORDS.get(param.unit, ())
        pattern = r"(\d+)" + (r"\s*(?:" + "|".join(map(re.escape, words)) + r")\b" if words else r"(?!\S)")
        m = re.search(r"(?<!\S)" + pattern, text)
        if not m:
            raise ValueError(f"no count {'with ' + '/'.join(words) + ' ' if words else ''}in {text!r}")
        return int(m.group(1))
    if reading == "boolean":
        if text not in BOOLEANS:
            raise ValueError(f"{text!r} is not $true or $false")
        return BOOLEANS[text]
    if reading == "name":
        if not re.fullmatch(r"[A-Za-z]+", text):
            raise ValueError(f"{text!r} is not a single name")
        return text
    if reading in ("clock-period", "clock-offset"):
        times = _clock_minutes(text)
        if len(times) < 2:
            raise ValueError(f"fewer than two clock times in {text!r}")
        gaps = {b - a for a, b in zip(times, [*times[1:], times[0] + 24 * 60], strict=True)}
        if len(gaps) != 1:
            raise ValueError(f"clock times {times} are not evenly spaced")
        period = gaps.pop()
        return period * 60_000 if reading == "clock-period" else (times[0] % period) * 60_000
    raise ValueError(f"unknown reading {reading!r}")


def catalogue_value(param: Parameter) -> Any:
    """The default in the unit `read_value` produces: milliseconds for a duration."""
    return param.default_ms if param.is_duration else param.default


def check_pin(pin: Pin, pid: str, param: Parameter, seeds_dir: Path) -> list[str]:
    """Problems with one pin (empty when the seed line states the catalogue default), each naming the parameter."""
    who = f"{pid} {param.name}"
    path = seeds_dir / pin.seed
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        return [f"{who}: cannot read seed {path}: {exc}"]
    problems = []
    if not 1 <= pin.line <= len(lines):
        return [f"{who}: {pin.seed} has no line {pin.line}"]
    line = _norm(lines[pin.line - 1])
    if _norm(pin.text) not in line:
        problems.append(f"{who}: {pin.seed}:{pin.line} does not contain {pin.text!r} (it reads {line[:100]!r})")
    if pin.label and _norm(lines[pin.label_line - 1] if 1 <= pin.label_line <= len(lines) else "") != pin.label:
        problems.append(f"{who}: {pin.seed}:{pin.label_line} is not the row label {pin.label!r}")
    try:
        stated = read_value(pin.text, pin.reading, param)
    except ValueError as exc:
        return [*problems, f"{who}: {pin.seed}:{pin.line}: {exc}"]
    expected = catalogue_value(param)
    if stated != expected:
        problems.append(
            f"{who}: default {param.default!r} {param.unit} ({expected}) differs from {stated} read "
            f"({pin.reading}) from {pin.seed}:{pin.line} {pin.text!r}"
        )
    return problems


def _pin(raw: Any, where: str) -> Pin:
    if not isinstance(raw, dict):
        raise CatalogueError(f"{where}: each [[param.pin]] must be a table")
    for key in ("seed", "line", "text", "reading"):
        if key not in raw:
            raise CatalogueError(f"{where}: pin lacks field {key!r}")
    if raw["reading"] not in READINGS:
        raise CatalogueError(f"{where}: field 'reading' {raw['reading']!r} is not one of {READINGS}")
    if not isinstance(raw["line"], int) or raw["line"] < 1:
        raise CatalogueError(f"{where}: field 'line' must be a positive integer")
    if not str(raw["text"]).strip():
        raise CatalogueError(f"{where}: field 'text' is empty")
    if ("label" in raw) != ("label_line" in raw):
        raise CatalogueError(f"{where}: fields 'label' and 'label_line' go together")
    return Pin(
        seed=str(raw["seed"]),
        line=raw["line"],
        text=str(raw["text"]),
        reading=raw["reading"],
        label=str(raw.get("label", "")),
        label_line=int(raw.get("label_line", 0)),
    )


def load_param_sources(path: Path, seeds: dict[str, str]) -> dict[str, ParamSource]:
    """Read `param_sources.toml`; raise `CatalogueError` naming the file, the entry and the field."""
    if not path.exists():
        return {}
    try:
        doc = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogueError(f"{path}: {exc}") from exc
    out: dict[str, ParamSource] = {}
    for raw in doc.get("param", []):
        pid = raw.get("id", "")
        where = f"{path.name} param {pid or '?'}"
        if pid in out:
            raise CatalogueError(f"{where}: duplicate entry")
        source = raw.get("source")
        if source == "none":
            reason, value_from = _norm(str(raw.get("reason", ""))), _norm(str(raw.get("value_from", "")))
            if not reason or not value_from:
                raise CatalogueError(f"{where}: source 'none' needs a non-empty 'reason' and 'value_from'")
            if raw.get("pin"):
                raise CatalogueError(f"{where}: source 'none' cannot have pins")
            out[pid] = ParamSource(pid, "none", reason=reason, value_from=value_from)
        elif source == "seed":
            pins = tuple(_pin(p, where) for p in raw.get("pin", []))
            if not pins:
                raise CatalogueError(f"{where}: source 'seed' needs at least one [[param.pin]]")
            unknown = [p.seed for p in pins if seeds and p.seed not in seeds]
            if unknown:
                raise CatalogueError(f"{where}: field 'seed' {unknown[0]!r} is not a seed of seeds.toml")
            out[pid] = ParamSource(pid, "seed", pins=pins)
        else:
            raise CatalogueError(f"{where}: field 'source' {source!r} must be 'seed' or 'none'")
    return out
