"""The registry's entry for the clock-skew monitor (`model.registry.monitor_runs`): run by both engines
only when a bound is given (`haconform check --skew MS`)."""

from __future__ import annotations

from model.kernel.mechanism import MonitorEntry
from model.skew.monitor import SkewMonitor

ENTRY = MonitorEntry(
    name="skew",
    title="Orderings across servers' clocks under a clock-skew bound",
    make=SkewMonitor,
    skew="required",
)
