"""The registry's entry for the imported-log monitor (`model.registry.monitor_runs`): a monitor without a
generator, run by both engines like a mechanism's; it takes the `--skew` bound for cross-server orders."""

from __future__ import annotations

from model.kernel.mechanism import MonitorEntry
from model.msgtrk.monitor import AuditMonitor

ENTRY = MonitorEntry(
    name="msgtrk",
    title="Imported message tracking logs (shadow redundancy as the logs show it)",
    make=AuditMonitor,
    skew="optional",
)
