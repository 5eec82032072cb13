# Types for the compiled build of model/am/decisions.py (issue 32, session 26; scripts/build_fast.py): the
# generator's world and databases are `state.pxd`'s structs, so a decision whose locals are typed `World`/`DbState`
# (`@cython.locals` in the source) reads their fields without an attribute lookup. The build lists model.am.state as
# this module's partner; it loads compiled only with it.
from model.am.state cimport DbState, World
