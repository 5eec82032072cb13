# C types for the compiled build of conformance/engine/stream.py (issue 32, session 16, "half the cost per
# event"; scripts/build_fast.py): the events it routes per event are `traces/event.pxd`'s struct, so the
# locals typed `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists
# traces.event as this module's partner; it loads compiled only with it (traces/fastpath.py).
from conformance.engine.core_fold cimport TraceRulesFold
from conformance.engine.folds cimport GroupFolds
from traces.event cimport Event

# Every fold of one trace (session 17): its fields as C struct members, read by `feed` without an attribute lookup.
# Python objects all, as in the pure class; pickled and copied through `__reduce__` and `finish_copy`.
cdef class TraceFolds:
    cdef public object context, entities, entity_runs
    # the core fold and the trace's group typed (session 17): their `feed` (`cpdef`) a C call from `feed`
    cdef public TraceRulesFold core
    cdef public GroupFolds trace
    cpdef feed(self, Event e)
