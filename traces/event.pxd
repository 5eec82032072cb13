# C type for the compiled build of traces/event.py (issue 32, session 16, "half the cost per event";
# scripts/build_fast.py): `Event` as a `cdef class` whose fields are C struct members (Python objects), so a
# reader that cimports it and types its locals `Event` (`@cython.locals`) reads a field without an attribute
# lookup. Not final: a subclass may restate `__init__` (tests/unit/test_event.py's twin).
cdef class Event:
    cdef public object trace_id, seq, event_id, ts_ms, node, mechanism, entity, kind, attrs, schema_version
