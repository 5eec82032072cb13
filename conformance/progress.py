"""Progress of a long `haconform check`: a bar with events/s and an ETA on stderr (tqdm), and the rate.

Shown only when stderr is a terminal (or `--progress` is given) and `--quiet` is not, so test output and logs
stay clean. The Spark engine's bar is `spark_trace_check.progress`. The
final line (always, unless `--quiet`) gives the events checked, the wall time and the rate in events/s.
"""

from __future__ import annotations

import sys
import time
from typing import Any


class Progress:
    """Counts events as groups finish; `start(total)` once the plan knows the total."""

    def __init__(
        self, *, bar: bool, final_line: bool, label: str = "checking", done: str = "checked", unit: str = "events"
    ) -> None:
        self.bar_enabled, self.final_line, self.label, self.verb, self.unit = bar, final_line, label, done, unit
        self.bar: Any = None
        self.done = 0
        self.t0 = time.monotonic()

    @classmethod
    def for_args(cls, args: Any, **kw: str) -> Progress:
        quiet = bool(getattr(args, "quiet", False))
        wanted = bool(getattr(args, "progress", False)) or sys.stderr.isatty()  # `--progress`: even when not a tty
        return cls(bar=not quiet and wanted, final_line=not quiet, **kw)

    def start(self, total: int | None) -> None:
        """`total` None: a count and a rate, no ETA (the input's size is not known before it is read)."""
        self.t0 = time.monotonic()
        if self.bar_enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=total,
                unit=self.unit.removesuffix("s"),
                unit_scale=True,
                desc=self.label,
                file=sys.stderr,
                leave=False,
            )

    def advance(self, events: int) -> None:
        self.done += events
        if self.bar is not None:
            self.bar.update(events)

    def rate(self) -> float:
        return self.done / max(time.monotonic() - self.t0, 1e-9)

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()
        if self.final_line and exc[0] is None:
            seconds = time.monotonic() - self.t0
            rate = f"{self.rate():,.0f} {self.unit}/s"
            print(f"{self.verb} {self.done} {self.unit} in {seconds:.1f} s: {rate}", file=sys.stderr)
