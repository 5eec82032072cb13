# C types for the compiled build of model/sr/monitor.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the events it reads per event are `traces/event.pxd`'s struct, so the parameters typed
# `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists traces.event
# as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event
from traces.verdict cimport ContextCursor
from model.sr.world cimport World

# The fold itself (session 26): its fields as C struct members (`SrFold.__fields__`, the same order), Python objects
# but the cursor; pickled and copied through `__reduce__` (`traces.verdict.restored`), on either path alike.
cdef class SrFold:
    cdef public World world
    cdef public object accept_variant
    cdef public ContextCursor cursor
    cdef public object last, violations, malformed, receives, orphans, snapshots, broken, retired, retired_judged
    cdef public object foreign
