# Types for the compiled build of model/pf/foldstate.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the fold's state as a C struct, every field a Python object, in `FIELDS`' order. Not
# final: `PfFold`'s parts (`handlers.Handlers`, `deadlines.Deadlines`, ...) and `PfFold` itself are Python classes
# deriving from it, with a `__dict__`. A method typed `@cython.locals(self=FoldState)` (its module's `.pxd`
# cimports this one) reads and writes these fields directly.
from traces.verdict cimport ContextCursor

cdef class FoldState:
    cdef public ContextCursor cursor  # session 26: its `index` and `events` C reads
    cdef public object stopped, cfg, ctx_of, changes, change_fid, hier_targets, sends, received, reps
    cdef public object held, views, mounted, local_home, backups, pending_since, restored, removed_after_delete_now
    cdef public object expired_now, expect_file, expect_requests, ends, new_readings, new_alts, created_sole, groups
    cdef public object violations, notes, tally
    cdef public object dirty, dirty_stores, volatile, following, heap, indexed, version, count, live, cfg_seen
    cdef public object up, up_since, owed_from, last_request, dead_since, announce_owed, restoring, flagged, owed
    cdef public object last_ms, due_seen
    cdef public object runs, changed_at, open_faults, ended_faults, created_ms, cnset_changed_ms
