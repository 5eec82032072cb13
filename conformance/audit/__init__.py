"""Auditing real Exchange logs: message tracking logs in, copy-status exports in, a readable report out.

`msgtrk` (reader) and `importer` turn `MSGTRK*.LOG` files into an imported trace (mechanism `msgtrk`),
which the registered monitor `model.msgtrk.monitor` judges (`model.registry.monitor_runs`); `copystatus`
reads `Get-MailboxDatabaseCopyStatus` exports for `explain`, `html` and `junit` render a check report (the
page: `report_data` orders it cause first, `cards` renders the cards, one per cause, the rest on demand,
`custody` the imports' chain of custody, `states` replays the folds for the model's state, `seedtext` quotes
the catalogue's stored seed sentences, `page_assets` holds its CSS and script, `headless` drives Chromium for
its tests and benchmark), `cli` adds the subcommands.
See README.md, "Audit real logs". Nothing is imported here.
"""
