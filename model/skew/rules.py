"""The rules of the clock-skew monitor (`model.skew.monitor`, `haconform check --skew MS`): one per required
ordering across servers' clocks, TR-003 (NET_SEND before NET_RECV), SR-031 (the shadow received before the
primary's acceptance) and SR-030 (the shadow stored before its acknowledgement), seed 000 and issue 6.

Defined in `spec.claims.skew_rules` (the skew check in `spec.claims` builds its orderings from them, and spec
sits below model) and re-exported here as this package's table, so that `model.skew` names them like every
other mechanism package does.
"""

from __future__ import annotations

from spec.claims.skew_rules import (
    AMBIGUOUS,
    NET_SEND_BEFORE_RECV,
    RULES,
    SHADOW_RECEIVED_BEFORE_ACCEPT,
    SHADOW_STORED_BEFORE_ACK,
)

__all__ = ["AMBIGUOUS", "NET_SEND_BEFORE_RECV", "RULES", "SHADOW_RECEIVED_BEFORE_ACCEPT", "SHADOW_STORED_BEFORE_ACK"]
