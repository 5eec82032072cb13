# Types for the compiled build of model/pf/state.py (issue 32, session 14, "half the cost per event";
# scripts/build_fast.py): the fold's records as C structs. Every field stays a Python object (no conversion a
# pure run would not make); `readonly` for the frozen records (`Value`), `public` for the mutable ones. The
# records are final (no subclass); their bases are `model.kernel.records`' (cimported; session 15). (`_values`
# declared `cpdef` is refused by Cython 3.3 as overriding a final method, so it stays a Python method.)
cimport cython
from model.kernel.records cimport Record, Value

@cython.final
cdef class Change(Value):
    cdef readonly object cn, op, mid, size_kb, target, detail, stamp

@cython.final
cdef class Msg(Value):
    cdef readonly object msg_id, code, fid, sender, recipients, cnset, changes, request, requires_response
    cdef readonly object reply_to, reason

@cython.final
cdef class Row(Record):
    cdef public object cnset, down, last_heard_ms, last_backfill_ms, avg_transit_ms

@cython.final
cdef class Entry(Value):
    cdef readonly object cns, due_ms, attempt, local, asked, asked_ms, base_ms, cause

@cython.final
cdef class Replica(Record):
    cdef public object fid, store, origin, cnset, unsent, state, expiry_ms, rows, backfill, statuses
    cdef public object new_replica, view
