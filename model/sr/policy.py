"""The model's decisions as one overridable object: each mutant overrides exactly one method.

Seed 000; every method delegates to the pure functions of `decisions.py` (or returns the seed's fixed
behaviour, such as the exact rejection text SR-020 and XSHADOW never advertised SR-036). `mutants.py`
plants one bug per invariant by subclassing this class.
"""

from __future__ import annotations

from collections.abc import Sequence

from model.sr import decisions
from model.sr import events as ev
from model.sr.state import SrConfig


class Policy:
    """The model's decisions; each mutant overrides exactly one method (see `mutants.py`)."""

    def plan(self, cfg: SrConfig, in_dag: bool, multi_site: bool) -> tuple[str, ...]:
        return decisions.attempt_plan(
            cfg.preference, in_dag, multi_site, cfg.max_remote, cfg.max_local, cfg.retry_meaning
        )

    def shadowing(self, cfg: SrConfig) -> bool:
        return cfg.enabled

    def ack_early(self) -> bool:
        return False

    def in_boundary_only(self) -> bool:
        return True

    def outcome_on_failure(self, cfg: SrConfig) -> str:
        return decisions.failure_outcome(cfg.reject_on_failure)

    def rejection_text(self) -> str:
        return ev.REJECTION_TEXT

    def advertise_xshadow(self) -> bool:
        return False

    def discard_marks(self, fork: str, forks: Sequence[str]) -> list[str]:
        return [fork]

    def release_ready(self, forks: tuple[str, ...], notified: frozenset[str]) -> bool:
        return decisions.release_ready(forks, notified)

    def promotion_reason(self, now: int, last: int, cfg: SrConfig, original: str, observed: str | None) -> str:
        return decisions.promotion_reason(now, last, cfg.resubmit_ms, original, observed)

    def may_resubmit(self, fork: str) -> bool:
        return decisions.safetynet_may_resubmit(fork)

    def duplicate_detection(self) -> bool:
        return True

    def persist_discards(self) -> bool:
        return True

    def sends_per_fork(self) -> int:
        return 1

    def heartbeat_period(self, cfg: SrConfig) -> int:
        return cfg.heartbeat_ms

    def primary_done(self, left: set[str]) -> bool:
        return not left

    def shadow_lifetime_ms(self, cfg: SrConfig) -> int:
        return cfg.safety_net_hold_ms + cfg.expiration_ms

    def queue_lifetime_ms(self, cfg: SrConfig) -> int:
        return cfg.expiration_ms

    def safetynet_hold_ms(self, cfg: SrConfig) -> int:
        return cfg.safety_net_hold_ms

    def auto_discard_ms(self, cfg: SrConfig) -> int:
        return cfg.auto_discard_ms

    def shadow_idle_ms(self, cfg: SrConfig) -> int:
        return cfg.shadow_idle_ms()

    def store_before_ack(self) -> bool:
        return True

    def abort_on_inbound_timeout(self) -> bool:
        return True
