# Types for the compiled build of model/am/state.py (issue 32, session 15, "half the cost per event";
# scripts/build_fast.py): the records the am fold makes per event as C structs, on the bases of
# `model.kernel.records` (cimported), as pf's (`model/pf/state.pxd`). Every field stays a Python object;
# `readonly` for the frozen records (`Value`), `public` for `CopyState` (a `Record`, hashable). Final (no subclass).
cimport cython
from model.kernel.records cimport Record, Value

@cython.final
cdef class CopyState(Record):
    cdef public object server, status, lli, replay_queue, content_index, preference, blocked, suspended, reachable

@cython.final
cdef class Health(Value):
    cdef readonly object components

@cython.final
cdef class Snapshot(Value):
    cdef readonly object database, source, last_log_generated, copies, dials, health
