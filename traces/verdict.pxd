# C type for the compiled build of traces/verdict.py (issue 32, session 26, "half the cost per event";
# scripts/build_fast.py): the context cursor every fold reads per event, as a C struct (`ContextCursor.__fields__`,
# the same order). A fold whose `.pxd` types its cursor field `ContextCursor` (cimported from here) reads `index`
# and `events` without an attribute lookup. `index` is a C integer (a list position); `events` and `last` objects.
cdef class ContextCursor:
    cdef public object events
    cdef public Py_ssize_t index
    cdef public object last
