# C types for the compiled build of conformance/engine/core_fold.py (issue 32, session 16, "half the cost per
# event"; scripts/build_fast.py): the events the fold reads per event are `traces/event.pxd`'s struct, so the
# locals typed `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists
# traces.event as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event

# The fold itself (session 16): its fields as C struct members, read by `feed` without an attribute lookup. Not
# final: `HeldRulesFold` derives from it. Python objects all, as in the pure class.
cdef class TraceRulesFold:
    cdef public object clock, clocked, ordered, out, prev, received, sends, simulated, tally, trace
    # `feed` a C call from a caller that holds the fold typed (`stream.pxd`'s `TraceFolds.core`; session 17);
    # `HeldRulesFold`, a Python subclass, overrides it as a `cpdef` method allows.
    cpdef feed(self, Event e)
