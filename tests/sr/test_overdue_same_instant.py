"""SR-058 (promotion-overdue): after a failed query past ShadowResubmitTimeSpan without contact, the shadows the
shadow server held for that primary at the query must be promoted within that instant. A shadow made later in
the same instant (the primary restarted at that millisecond and shadowed a new message) is not owed yet: judging
it at the end of the instant made a false alarm against a correct system (issue 34, found by `sr_node.py`).
Twin: the old shadow not promoted is still caught."""

from __future__ import annotations

import pytest

from model.sr import rules as R
from spec.catalogue import param_ms
from tests.sr.test_late_bounds import CREATED as LATE_CREATED
from tests.sr.test_late_bounds import _check, _rules

HB = param_ms("ShadowHeartbeatFrequency")
SPAN = param_ms("ShadowResubmitTimeSpan")
CREATED = LATE_CREATED[:6]  # received, shadowed on EX02, accepted; EX01 crashes at +1 s
FAILED = [(k * HB, "EX02", "XQUERYDISCARD", {"primary": "EX01", "ok": False, "reason": "heartbeat"})
          for k in range(1, SPAN // HB + 2)]  # fmt: skip
AT = FAILED[-1][0]  # the failed query past the span: EX02 must promote what it holds for EX01 at once


def _new_shadow_at_the_same_instant(promote_old: bool) -> list[tuple]:
    promoted = [(AT, "EX02", "PROMOTE", {"inst": 1, "primary": "EX01", "reason": "resubmit"})] if promote_old else []
    return [
        *CREATED,
        *FAILED,
        *promoted,
        (AT, "EX01", "RESTART", {"storage": "new"}),
        (AT, "EX01", "RECEIVE", {"inst": 2, "forks": ["mbx"]}),
        (AT, "EX01", "HAREDIRECT", {"inst": 2, "shadow": "EX02", "try": 1}),
        (AT, "EX02", "HARECEIVE", {"inst": 2, "primary": "EX01"}),
        (AT + 1, "EX01", "SHADOW_ACK", {"inst": 2, "shadow": "EX02"}),
    ]


@pytest.mark.unit
def test_a_shadow_made_later_in_the_instant_of_the_failed_query_is_not_owed() -> None:
    result = _check(_new_shadow_at_the_same_instant(promote_old=True))
    assert R.PROMOTION_OVERDUE.name not in _rules(result), result
    assert result.tally.judged[R.PROMOTION_OVERDUE.name] >= 1


@pytest.mark.unit
def test_twin_the_shadow_held_at_the_failed_query_not_promoted_is_caught() -> None:
    result = _check(_new_shadow_at_the_same_instant(promote_old=False))
    assert R.PROMOTION_OVERDUE.name in _rules(result), result
