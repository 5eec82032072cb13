# Types for the compiled build of model/am/replay_state.py (issue 32, session 25, "half the cost per event";
# scripts/build_fast.py): the replay's state as a C struct, every field a Python object, in `FIELDS`' order. Not
# final: `Replay`'s parts (`monitor_dag.DagChecks`, `bcss_run.RunRecords`, `monitor_bcss.BcssChecks`) and `Replay`
# itself are Python classes deriving from it. A method typed `@cython.locals(self=ReplayState)` (its module's
# `.pxd` cimports this one) reads and writes these fields directly.
from model.am.state cimport World

cdef class ReplayState:
    cdef public object opts, thresholds_recorded, fold_dag
    # session 26: the world typed, so `self.w.dbs` in a method typed with this struct is two C reads (a `World` or None)
    cdef public World w
    cdef public object runs, last_run, pending, unasked, out, notes
    cdef public object health_changed, tally
