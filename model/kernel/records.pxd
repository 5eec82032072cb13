# Types for the compiled build of model/kernel/records.py (issue 32; scripts/build_fast.py): the records' bases
# as C types, so that the records of pf (`model/pf/state.pxd`) and am (`model/am/state.pxd`, `bcss.pxd`) derive
# from them (`cimport`; session 14 declared them in pf's own module, session 15 moved them here).
cdef class Record:
    pass

cdef class Value(Record):
    pass
