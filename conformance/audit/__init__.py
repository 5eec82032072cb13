"""Auditing real Exchange logs: message tracking logs in, copy-status exports in, a readable report out.

`msgtrk` (reader) and `importer` turn `MSGTRK*.LOG` files into an imported trace (mechanism `msgtrk`),
`monitor` judges it, `copystatus` reads `Get-MailboxDatabaseCopyStatus` exports for `explain`, `html` and
`junit` render a check report (the page: `report_data` orders it cause first, `states` replays the folds for
the model's state, `seedtext` quotes the catalogue and the seeds, `page_assets` holds its CSS and script), `cli`
adds the subcommands. See README.md, "Audit real logs".
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from conformance.monitor import Monitor


def extra_monitors(skew_ms: int | None = None) -> list[tuple[str, Callable[[], Monitor]]]:
    """(name, factory) of the monitors both engines run besides the registered mechanisms' ones."""
    from conformance.audit.monitor import AuditMonitor

    return [("msgtrk", functools.partial(AuditMonitor, skew_ms))]
