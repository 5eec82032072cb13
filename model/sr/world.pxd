# C type for the compiled build of model/sr/world.py (issue 32, session 26, "half the cost per event";
# scripts/build_fast.py): the sr fold's world as a C struct, every field a Python object, in `World.__fields__`' order.
# A function whose locals are typed `World` (`@cython.locals(w=World)`; its module's `.pxd` cimports this one) reads
# and writes these fields directly. Final (no subclass).
cimport cython

@cython.final
cdef class World:
    cdef public object cfg, topo, notes, up, boot, epoch, group, db_names, db_owner, contact, last_query
    cdef public object last_heartbeat, last_ok, observed_epoch, held, held_since, owed, handed, owed_at_boot, msgs, at
    cdef public object due, db_due, db_pending, db_late, unread_queries, destroyed, held_unseen, end_checked, ended
    cdef public object tally, _plans
