# Types for the compiled build of model/pf/cnset.py (issue 32, "half the cost per event"; scripts/build_fast.py):
# the merge walks over `CNSet.parts` with their tuples, lists and indices typed. The counters stay Python ints
# (no C overflow a pure run would not have), so compiled and pure compute the same values.
cimport cython

@cython.locals(out=list, i=Py_ssize_t, j=Py_ssize_t)
cpdef tuple _meet(tuple a, tuple b)

@cython.locals(out=list, cur=object)
cpdef tuple _minus(tuple a, tuple b)

@cython.locals(parts=list, changed=bint, j=Py_ssize_t, n=Py_ssize_t, part=tuple, ranges=tuple, t=tuple, left=tuple)
cpdef object _minus_parts(tuple mine, tuple theirs)

@cython.locals(parts=list, j=Py_ssize_t, n=Py_ssize_t, ranges=tuple, both=tuple)
cpdef tuple _meet_parts(tuple mine, tuple theirs)

@cython.locals(j=Py_ssize_t, n=Py_ssize_t, k=Py_ssize_t, m=Py_ssize_t, ranges=tuple, t=tuple)
cpdef bint _subset(tuple mine, tuple theirs) except -1

# The set itself (session 14): a C struct holding `parts` (a tuple, as every constructor gives), `__init__` and
# `__eq__` compiled; final (no subclass).
@cython.final
cdef class CNSet:
    cdef readonly tuple parts
