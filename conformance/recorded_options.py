"""The check options a shrunk trace needs, recorded in it by `haconform shrink` and read back by `haconform check`.

A violation found with `check --skew MS` (the cross-server orderings of
spec/claims/skew.py and the imported logs' cross-server rules, which are judged only under a clock bound) must
be found again when the shrunk trace is checked, by whoever receives it, without knowing the option. Of the
options of `check`, only `--skew` changes what is judged (`--strict`, `--allow-unknown`, `--allow-empty` change
the exit status, `--engine` and the rest how it runs): `shrink` records it in the attributes of the shrunk
trace's first event (TRACE_START or IMPORT_START, which every cut keeps), as `check_options`, a list of
`--name=value` strings; `check` given that file and no `--skew` uses the recorded bound and says so on one line.
An option given on the command line wins (also said). Only files named on the command line are looked at (the
first event of each), never the files of a directory: a corpus is checked with the options given.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Sequence

from traces.io import TraceFile, TraceFileError, iter_trace_file, trace_kind
from traces.schema import Event

ATTR = "check_options"
SKEW = "--skew"


def record(events: Sequence[Event], skew_ms: int | None) -> list[Event]:
    """The events with the options the violation was found under recorded in the first event's attributes."""
    if skew_ms is None or not events:
        return list(events)
    first = events[0]
    attrs = {**first.attrs, ATTR: [f"{SKEW}={skew_ms}"]}
    return [dataclasses.replace(first, attrs=attrs), *events[1:]]


def recorded_skew(path: str) -> int | None:
    """The `--skew` recorded in the first event of the trace file `path`, if any."""
    kind = trace_kind(path)
    if kind is None or not os.path.isfile(path):
        return None
    try:
        for part in iter_trace_file(TraceFile(path, path, kind)):
            first = part.events[0] if part.events else None
            if first is None:
                return None
            for item in first.attrs.get(ATTR) or ():
                name, _, value = str(item).partition("=")
                if name == SKEW and value.lstrip("-").isdigit():
                    return int(value)
            return None
    except (TraceFileError, OSError, ValueError):
        return None  # the check itself names what is wrong with the file
    return None


def apply(args: argparse.Namespace) -> str | None:
    """Set `args.skew` from the files named when none was given; the one line saying so (or None)."""
    found = {p: s for p in args.paths if (s := recorded_skew(p)) is not None}
    if not found:
        return None
    values = sorted(set(found.values()))
    where = ", ".join(sorted(found))
    if args.skew is not None:
        if values != [args.skew]:
            return (
                f"haconform check: --skew {args.skew} as given ({where} recorded {SKEW} {'/'.join(map(str, values))})"
            )
        return None
    if len(values) > 1:
        return f"haconform check: {where} recorded different {SKEW} bounds ({', '.join(map(str, values))}); none used"
    args.skew = values[0]
    return f"haconform check: {SKEW} {values[0]}, as recorded by haconform shrink in {where}"
