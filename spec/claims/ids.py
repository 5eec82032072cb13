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
    "broadcast": "PF-023",
    "expiry_reset": "PF-029",
}
BF_IDS = {
    "ladder": "BF-005",
    "request_tick": "BF-007",
    "within_five_minutes": "BF-030",
    "example_24h": "BF-027",
    "parallel": "BF-017",
    "new_replica": "BF-008",
    "cost_over_version": "BF-015",
    "cost_over_count": "BF-016",
    "down_last": "BF-011",
}
AM_IDS = {
    "cql_primary": "AM-035",
    "lossless_ap": "AM-036",
    "lli_is_cql": "AM-035",
    "dial_monotone": "AM-P01",
    "acll_before_mount": "AM-024",
    "sort_rules": "AM-036",
    "tiers": "AM-027",
    "criteria_order": "AM-039",
}

# Further requirements a claim encodes besides the one it is filed under.
COVERS = {
    "sr.shadow_before_ack": ("SR-001", "SR-028", "SR-030"),
    "sr.new_db_delay.as_stated": ("SR-055",),
    "sr.new_db_delay.repaired": ("SR-055",),
    "sr.same_db_delay.as_stated": ("SR-055", "SR-058"),
    "sr.same_db_delay.repaired": ("SR-055", "SR-058"),
    "sr.promote_before_safety_net_expiry": ("SR-058", "SR-067"),
    "sr.discard_events_outlive_decision": ("SR-058",),
    "pf.status_message_36h": ("PF-029",),
    "pf.status_message_36h.broadcast_anchor": ("PF-029",),
    "pf.replica_add.step1_before_step2": ("BF-025",),
    "pf.replica_delete.confirm_before_delete_now": ("BF-029", "BF-033"),
    "bf.initial_request.repaired": ("BF-006",),
    "bf.remove_replica.within_five_minutes": ("BF-007",),
    "bf.add_replica.retry_after_24h": ("BF-005", "BF-019"),
    "am.acll_before_mount": ("AM-051",),
    "am.bcss.sort_rules_exhaustive": ("AM-035",),
    "am.bcss.lossless_preference_first": ("AM-037",),
    "am.bcss.copy_queue_first": ("AM-037",),
    "am.bcss.healthier_tier_first": ("AM-P07",),
}

ALL_IDS = {
    **{f"sr.{k}": v for k, v in SR_IDS.items()},
    **{f"pf.{k}": v for k, v in PF_IDS.items()},
    **{f"bf.{k}": v for k, v in BF_IDS.items()},
    **{f"am.{k}": v for k, v in AM_IDS.items()},
}
require(*ALL_IDS.values(), *(r for ids in COVERS.values() for r in ids))
