"""The configuration rows of the vocabulary tables (issue 30): each configuration field a monitor reads, with
its type, its catalogue parameter (name and requirement ID, looked up in `spec/`), its meaning and its default
(the value on the dataclass the catalogue's defaults build: `SrConfig`, bcss `Options`, pf `Params`). Used by
`model/<mechanism>/contract.py`; rendered by `haconform protocol-doc`.
"""

from __future__ import annotations

import json
from typing import Any

from spec.catalogue import catalogue
from traces.vocabulary import ConfigField


def shown(v: Any) -> str:
    """A default as the docs show it: JSON-like, in backticks."""
    if isinstance(v, tuple):
        v = [list(p) if isinstance(p, tuple) else p for p in v]
    return f"`{json.dumps(v, separators=(',', ':')).strip(chr(34))}`"


def config_fields(where: str, instance: object, table: dict[str, tuple[str, str, str]]) -> tuple[ConfigField, ...]:
    """One `ConfigField` per entry of `table` (field -> (type, catalogue parameter name or "", meaning)): the
    parameter's requirement ID is looked up in the catalogue (an unknown name fails at import), the default is
    the field's value on `instance`."""
    out = []
    for name, (type_, param, meaning) in table.items():
        label = f"{param} ({catalogue().param_requirement(param).id}): " if param else ""
        out.append(ConfigField(name, where, type_, label + meaning, shown(getattr(instance, name))))
    return tuple(out)
