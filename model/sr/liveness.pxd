# Types for the compiled build of model/sr/liveness.py (issue 32, session 26, "half the cost per event";
# scripts/build_fast.py): the fold's world is `world.pxd`'s struct, so a function whose locals are typed `World`
# (`@cython.locals` in the source) reads and writes its fields without an attribute lookup. The build lists
# model.sr.world as this module's partner; it loads compiled only with it.
from model.sr.world cimport World
