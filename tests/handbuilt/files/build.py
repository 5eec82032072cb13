"""Write the hand-built trace files as JSON Lines files, `tests/handbuilt/files/<mechanism>/<case>.jsonl`.

`python -m tests.handbuilt.files.build` regenerates them; `test_handbuilt_files.py` checks that the files are what
the case builders give and that each file gets its expected verdict through `haconform check`'s own reader.
"""

from __future__ import annotations

import io
from pathlib import Path

from tests.handbuilt.files import am_cases, pf_cases, sr_cases
from traces.schema import Event

HERE = Path(__file__).resolve().parent
MODULES = {"sr": sr_cases, "am": am_cases, "pf": pf_cases}


def cases() -> list[tuple[str, str, object, object]]:
    """(mechanism, name, build, expected) for every case."""
    return [(m, name, build, expected) for m, mod in MODULES.items() for name, build, expected in mod.CASES]


def jsonl(events: list[Event]) -> str:
    out = io.StringIO()
    for e in events:
        out.write(e.to_json() + "\n")
    return out.getvalue()


def path_of(mechanism: str, name: str) -> Path:
    return HERE / mechanism / f"{name}.jsonl"


def main() -> None:
    for m, name, build, _ in cases():
        p = path_of(m, name)
        p.parent.mkdir(exist_ok=True)
        p.write_text(jsonl(build()), encoding="utf-8")  # type: ignore[operator]
        print(p)


if __name__ == "__main__":
    main()
