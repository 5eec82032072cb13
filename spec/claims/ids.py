"""Which catalogue requirement each claim comes from (one place, so the IDs are easy to audit).

The test `tests/claims/test_catalogue_ids.py` asserts every ID exists and is of kind ordering, timing,
parameter or invariant; `require` below fails at import if one is missing.
"""

from __future__ import annotations

from spec.catalogue import require

SR_IDS = {
    "shadow_order": "SR-P09",
    "shadow_attempts": "SR-P04",
    "timeouts_mailbox": "SR-P06",
    "timeouts_frontend": "SR-P07",
    "timeouts_edge": "SR-P08",
    "new_db": "SR-P13",
    "same_db": "SR-P14",
    "expiry": "SR-P16",
    "auto_discard": "SR-P15",
}
PF_IDS = {
    "status_36h": "PF-P05",
    "replica_add": "PF-P01",
    "replica_delete": "PF-P04",
}
BF_IDS = {
    "ladder": "BF-P01",
    "request_tick": "BF-P01",
    "within_five_minutes": "BF-P01",
    "example_24h": "BF-P03",
    "cost_over_version": "BF-P01",
    "cost_over_count": "BF-P01",
    "down_last": "BF-P01",
}
AM_IDS = {
    "cql_primary": "AM-P01",
    "lossless_ap": "AM-P01",
    "lli_is_cql": "AM-P01",
    "dial_monotone": "AM-P03",
}

ALL_IDS = {
    **{f"sr.{k}": v for k, v in SR_IDS.items()},
    **{f"pf.{k}": v for k, v in PF_IDS.items()},
    **{f"bf.{k}": v for k, v in BF_IDS.items()},
    **{f"am.{k}": v for k, v in AM_IDS.items()},
}
require(*ALL_IDS.values())
