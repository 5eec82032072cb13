# Types for the compiled build of model/am/bcss.py (issue 32, session 15; scripts/build_fast.py): BCSS's ordered
# list as C structs, on the bases of `model.kernel.records` (cimported), as am's fold records (`state.pxd`).
# Every field stays a Python object, `readonly` (frozen records). Final (no subclass).
cimport cython
from model.kernel.records cimport Value

@cython.final
cdef class Choice(Value):
    cdef readonly object server, criteria_set, tier, copy_queue, replay_queue, preference, key

@cython.final
cdef class Selection(Value):
    cdef readonly object order, excluded, sort, sort_rule
