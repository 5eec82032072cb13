"""The verdict engine every check runs, whichever driver (single process, incremental, dataset, Spark) reads
the rows (issue 32: the drivers are sources and sinks around it):
- `driver`: `Engine`, the one read loop (counts, quarantine, held traces, kept events, event-ID hashes);
- `stream`: the router of events into their traces' folds; `folds`, `core_fold`, `core_rules`, `rulesets`:
  the monitors and the core trace rules as folds; `tally`: what each rule judged;
- `trace_index`: the index of a corpus (traces per file, seq spans, event-ID hashes), and `units`: the
  planner of units of whole traces from it, one unit judged, the units' results finished into a report;
- `outcome`: the report's data (`CheckOutcome`, `finish_outcome`) and TR-002's exact resolution;
- `resume`, `statedir`: incremental checking's state and what both of its drivers share;
- `collector`: the cyclic garbage collector paused during a read.
Nothing is imported here: import the module you need."""
