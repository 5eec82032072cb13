# C types for the compiled build of model/am/bcss_run.py (issue 32, session 25, "half the cost per event";
# scripts/build_fast.py): the replay's state (`replay_state.pxd`), so `RunRecords`' methods typed
# `@cython.locals(self=ReplayState)` read its fields as C struct members. The build lists model.am.replay_state as
# this module's partner; it loads compiled only with it (traces/fastpath.py).
from model.am.replay_state cimport ReplayState
