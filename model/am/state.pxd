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

# Session 26: the world the am fold and generator change per event, and its databases, as C structs too (`Record`s:
# mutable, `public`). A transition typed `@cython.locals(w=World, d=DbState)` (its module's `.pxd` cimports these)
# reads and writes their fields without an attribute lookup.
@cython.final
cdef class DbState(Record):
    cdef public object name, dag, copies, active, on, mounting, lgen, last_mounted, stuck

@cython.final
cdef class World(Record):
    cdef public object dag, members, up, groups, claims, dials, health, dbs, opts, cached_quorum, cached_view
    cdef public object view_source
