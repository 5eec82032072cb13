# C types for the compiled build of model/sr/step.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): the events it reads per event are `traces/event.pxd`'s struct, so the parameters typed
# `Event` (`@cython.locals` in the source) read fields without an attribute lookup. The build lists traces.event
# as this module's partner; it loads compiled only with it (traces/fastpath.py).
from traces.event cimport Event
from model.sr.world cimport World
