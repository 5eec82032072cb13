# C types for the compiled build of model/pf/deadlines.py (issue 32, session 15, "half the cost per event";
# scripts/build_fast.py): the records it reads per event are `model/pf/state.pxd`'s structs, so the locals typed
# with them (`@cython.locals` in the source) read fields without an attribute lookup. The build lists
# model.pf.state as this module's partner; it loads compiled only with it (traces/fastpath.py).
from model.pf.state cimport Entry, Replica
# Session 16: the fold itself (`foldstate.pxd`), its methods typed `@cython.locals(self=FoldState)`.
from model.pf.foldstate cimport FoldState
