# Types for the compiled build of model/pf/state.py (issue 32, session 14, "half the cost per event";
# scripts/build_fast.py): the fold's records as C structs. Every field stays a Python object (no conversion a
# pure run would not make); `readonly` for the frozen records, `public` for the mutable ones. Final: no
# subclass, so `_values` is a direct C call.
cimport cython

@cython.final
cdef class Change:
    cdef readonly object cn, op, mid, size_kb, target, detail, stamp
    cpdef tuple _values(self)

@cython.final
cdef class Msg:
    cdef readonly object msg_id, code, fid, sender, recipients, cnset, changes, request, requires_response
    cdef readonly object reply_to, reason
    cpdef tuple _values(self)

@cython.final
cdef class Row:
    cdef public object cnset, down, last_heard_ms, last_backfill_ms, avg_transit_ms
    cpdef tuple _values(self)

@cython.final
cdef class Entry:
    cdef readonly object cns, due_ms, attempt, local, asked, asked_ms, base_ms, cause
    cpdef tuple _values(self)

@cython.final
cdef class Replica:
    cdef public object fid, store, origin, cnset, unsent, state, expiry_ms, rows, backfill, statuses
    cdef public object new_replica, view
    cpdef tuple _values(self)
