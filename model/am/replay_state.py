"""The state of the Active Manager monitor's replay (`model.am.replay.Replay`), shared by its parts.

`Replay` is built from mixins, one per family of checks: `monitor_dag.DagChecks` (DAG_VIEW, PAM, maintenance,
SERVER_HEALTH, AM_DAG_CONFIG: seed 002, "Exchange Server Active Manager"), `monitor_bcss.BcssChecks` and its base
`bcss_run.RunRecords` (a BCSS run and its record: seed 002, "Best copy selection process"). Each derives from
`ReplayState`, which holds the replay's fields: the configuration read from the trace (`opts`,
`thresholds_recorded`), whether the DAG events are folded (`fold_dag`), the world folded so far (`w`), the open and
last BCSS run per database, the pending trigger and unasked failure report per database, the violations, notes and
the `Tally` of what each rule judged (issue 29), and the SERVER_HEALTH changes since the last AM_DAG_CONFIG.

A `cdef class` in the compiled build (`replay_state.pxd`; issue 32, session 25): the fields are C struct members, so
the parts' methods typed with it (`@cython.locals(self=ReplayState)`) read them without an attribute lookup, as pf's
`FoldState` (`model/pf/foldstate.py`). Pickled as its class and fields (`__reduce__`, `traces.verdict.restored`), so
a fold saved by one path loads in the other. The parts and `Replay` declare no slots of their own and have no
`__dict__`: a field not listed here cannot be set (an `AttributeError`, never a field lost by a copy).
"""

from __future__ import annotations

from typing import Any

from traces.verdict import reduced

FIELDS = (
    "opts", "thresholds_recorded", "fold_dag", "w", "runs", "last_run", "pending", "unasked", "out", "notes",
    "health_changed", "tally",
)  # fmt: skip


class ReplayState:
    """Every field of one replay (set by `Replay.__init__`); see the module docstring."""

    __fields__ = FIELDS
    __slots__ = FIELDS

    def __reduce__(self) -> tuple[Any, ...]:
        return reduced(self)
