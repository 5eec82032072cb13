"""A catalogue parameter (`Parameter`: default, unit, valid range), its units, and the catalogue's error.

Below both the catalogue (`spec.catalogue`, which loads `spec/requirements/*.toml`) and the table of where
each parameter's default stands in the seeds (`spec.param_sources`), which the catalogue loads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Units a parameter may use; durations convert to milliseconds (the model's virtual time unit).
DURATION_MS = {"ms": 1, "s": 1_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
OTHER_UNITS = ("count", "logs", "KB", "bool", "enum", "list")


class CatalogueError(ValueError):
    """A catalogue file is malformed; the message names the file, the entry and the field."""


@dataclass(frozen=True, slots=True)
class Source:
    seed: str
    section: str


@dataclass(frozen=True, slots=True)
class Parameter:
    """A configurable value with its default, unit and valid range (durations in the unit given)."""

    name: str
    default: Any
    unit: str
    range: tuple[Any, Any] | None = None
    values: tuple[str, ...] = ()
    scope: str = ""

    @property
    def is_duration(self) -> bool:
        return self.unit in DURATION_MS

    def to_ms(self, value: int | float) -> int:
        """Convert a value in this parameter's unit to integer milliseconds."""
        if not self.is_duration:
            raise CatalogueError(f"parameter {self.name} has unit {self.unit!r}, not a duration")
        return round(value * DURATION_MS[self.unit])

    @property
    def default_ms(self) -> int:
        return self.to_ms(self.default)
