# C types for the compiled build of model/pf/decisions.py (issue 32, session 15, "half the cost per event";
# scripts/build_fast.py): the decisions the monitor asks per event (`has_others`, `entry_due`, `view_step`, ...)
# read `model/pf/state.pxd`'s structs through the locals typed with them (`@cython.locals` in the source). The
# build lists model.pf.state as this module's partner; it loads compiled only with it (traces/fastpath.py).
from model.pf.state cimport Change, Entry, Replica, Row
