# Types for the compiled build of model/am/step.py (issue 32, session 26, "half the cost per event";
# scripts/build_fast.py): the transitions' world and databases are `state.pxd`'s structs, so a function whose
# locals are typed `World`/`DbState` (`@cython.locals` in the source) reads and writes their fields without an
# attribute lookup. The build lists model.am.state as this module's partner; it loads compiled only with it.
from model.am.state cimport CopyState, DbState, World
