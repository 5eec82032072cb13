# Types for the compiled build of model/pf/monitor.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the fold's state is `model/pf/foldstate.pxd`'s C struct, so the methods typed
# `@cython.locals(self=FoldState)` read its fields without an attribute lookup. The build lists model.pf.foldstate
# as this module's partner; it loads compiled only with it (traces/fastpath.py).
from model.pf.foldstate cimport FoldState
from traces.verdict cimport ContextCursor
