# C types for the compiled build of conformance/engine/folds.py (issue 32, session 16, "half the cost per
# event"; scripts/build_fast.py): the events it routes per event are `traces/event.pxd`'s struct, so the
# locals typed `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists
# traces.event as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event

# The folds of one group (session 17): its fields as C struct members, read by `feed` without an attribute lookup.
# Python objects all, as in the pure class; pickled and copied through `__reduce__` and `finish_copy`.
cdef class GroupFolds:
    cdef public object all, first, folds, reads, routes, scope, seen, strange, vocab
    # `feed` a C call from a caller that holds the group typed (`stream.pxd`'s `TraceFolds`; session 17)
    cpdef feed(self, Event e)
