"""Which catalogue requirement each claim comes from (one place, so the IDs are easy to audit).

The test `tests/claims/test_catalogue_ids.py` asserts every ID exists and is of kind ordering, timing,
parameter or invariant; `require` below fails at import if one is missing.
"""

from __future__ import annotations

from spec.catalogue import require

SR_IDS = {
    "shadow_order": "SR-031",
    "shadow_attempts": "SR-901",
    "timeouts_mailbox": "SR-049",
    "timeouts_frontend": "SR-049",
    "timeouts_edge": "SR-049",
    "new_db": "SR-071",
    "same_db": "SR-074",
    "expiry": "SR-066",
    "auto_discard": "SR-064",
}
PF_IDS = {
    "status_36h": "PF-030",
    "replica_add": "BF-026",
    "replica_delete": "BF-032",
}
BF_IDS = {
    "ladder": "BF-005",
    "request_tick": "BF-007",
    "within_five_minutes": "BF-030",
    "example_24h": "BF-027",
    "parallel": "BF-017",
    "cost_over_version": "BF-015",
    "cost_over_count": "BF-016",
    "down_last": "BF-011",
}
AM_IDS = {
    "cql_primary": "AM-035",
    "lossless_ap": "AM-036",
    "lli_is_cql": "AM-035",
    "dial_monotone": "AM-P01",
}

ALL_IDS = {
    **{f"sr.{k}": v for k, v in SR_IDS.items()},
    **{f"pf.{k}": v for k, v in PF_IDS.items()},
    **{f"bf.{k}": v for k, v in BF_IDS.items()},
    **{f"am.{k}": v for k, v in AM_IDS.items()},
}
require(*ALL_IDS.values())
