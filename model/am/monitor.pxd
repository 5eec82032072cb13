# C types for the compiled build of model/am/monitor.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the events it reads per event are `traces/event.pxd`'s struct, so the parameters typed
# `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists traces.event
# as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event
from traces.verdict cimport ContextCursor

# The fold itself (session 25): its fields as C struct members (`AmFold.__fields__`, the same order), Python objects
# all, as in the pure class; pickled through `__reduce__` (`traces.verdict.restored`), on either path alike.
cdef class AmFold:
    cdef public object configured
    cdef public ContextCursor cursor  # session 26: its `index` and `events` C reads
    cdef public object dag_config, dag_db, dag_state, error, facts, last, live, own
    cdef public object partial_mounted, replay, result, stopped, unseen, watched
# Session 25: the replay's state (`replay_state.pxd`): methods typed `@cython.locals(self=ReplayState)` read its fields
# as C struct members; the build lists model.am.replay_state as a partner of this module.
from model.am.replay_state cimport ReplayState
