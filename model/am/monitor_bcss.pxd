# C types for the compiled build of model/am/monitor_bcss.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the events it reads per event are `traces/event.pxd`'s struct, so the parameters typed
# `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists traces.event
# as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event
# Session 25: the replay's state (`replay_state.pxd`): methods typed `@cython.locals(self=ReplayState)` read its fields
# as C struct members; the build lists model.am.replay_state as a partner of this module.
from model.am.replay_state cimport ReplayState
from model.am.state cimport DbState
