"""Planted bugs: one per invariant, each a `Policy` that breaks exactly one decision.

Seed 000; each mutant names the rule (and so the requirement) the monitor and the stateful search must
report. A mutant's simulate uses the same generator with a configuration, workload and timing chosen so
that the bug has a chance to show (e.g. RejectMessageOnShadowFailure on for the rejection mutants).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from model.kernel.sim import MINUTE
from model.sr import events as ev
from model.sr import rules as R
from model.sr.cluster import Timing
from model.sr.policy import Policy
from model.sr.sim import Workload, simulate
from model.sr.state import SrConfig
from traces.schema import Event
from traces.verdict import Rule


class AckBeforeShadow(Policy):
    def ack_early(self) -> bool:
        return True


class ShadowOutsideBoundary(Policy):
    def in_boundary_only(self) -> bool:
        return False


class IgnorePreference(Policy):
    def plan(self, cfg: SrConfig, in_dag: bool, multi_site: bool) -> tuple[str, ...]:
        return ("local",) * cfg.max_local + ("remote",) * cfg.max_remote


class AcceptWhenRejectRequired(Policy):
    def outcome_on_failure(self, cfg: SrConfig) -> str:
        return "accepted"


class WrongRejectionText(Policy):
    def rejection_text(self) -> str:
        return "450 4.5.1 Message failed to be made redundant"


class XshadowAdvertised(Policy):
    def advertise_xshadow(self) -> bool:
        return True


class ShadowWhenDisabled(Policy):
    """Shadow attempts despite ShadowRedundancyEnabled false; when they fail the message is even rejected."""

    def shadowing(self, cfg: SrConfig) -> bool:
        return True


class PrematureDiscard(Policy):
    def discard_marks(self, fork: str, forks: Sequence[str]) -> list[str]:
        return list(forks)


class ReleaseBeforeAllForks(Policy):
    def release_ready(self, forks: tuple[str, ...], notified: frozenset[str]) -> bool:
        return bool(notified)


class EarlyPromotion(Policy):
    def promotion_reason(self, now: int, last: int, cfg: SrConfig, original: str, observed: str | None) -> str:
        return super().promotion_reason(now, last, cfg.replace(resubmit_ms=cfg.resubmit_ms // 10), original, observed)


class NeverPromote(Policy):
    def promotion_reason(self, now: int, last: int, cfg: SrConfig, original: str, observed: str | None) -> str:
        return ""


class ResubmitEverything(Policy):
    def may_resubmit(self, fork: str) -> bool:
        return True


class NoDuplicateDetection(Policy):
    def duplicate_detection(self) -> bool:
        return False


class DiscardsInMemory(Policy):
    def persist_discards(self) -> bool:
        return False


class DoubleSend(Policy):
    def sends_per_fork(self) -> int:
        return 2


class PrimaryDropsEarly(Policy):
    def primary_done(self, left: set[str]) -> bool:
        return True


class RejectWhenAcceptConfigured(Policy):
    def outcome_on_failure(self, cfg: SrConfig) -> str:
        return "rejected"


class PromoteOnContact(Policy):
    def promotion_reason(self, now: int, last: int, cfg: SrConfig, original: str, observed: str | None) -> str:
        return "database_id" if observed is not None else super().promotion_reason(now, last, cfg, original, None)


class EarlyShadowExpiry(Policy):
    def shadow_lifetime_ms(self, cfg: SrConfig) -> int:
        return 10 * MINUTE


class SlowHeartbeat(Policy):
    def heartbeat_period(self, cfg: SrConfig) -> int:
        return 2 * cfg.heartbeat_ms


class AckBeforeStore(Policy):
    def store_before_ack(self) -> bool:
        return False


class ShadowAfterSenderGone(Policy):
    def abort_on_inbound_timeout(self) -> bool:
        return False


class ResubmitToHub(Policy):
    def may_resubmit(self, fork: str) -> bool:
        return fork.startswith("hub:") or super().may_resubmit(fork)


class ShortSafetyNetHold(Policy):
    def safetynet_hold_ms(self, cfg: SrConfig) -> int:
        return cfg.safety_net_hold_ms // 2


class LongSafetyNetHold(Policy):
    def safetynet_hold_ms(self, cfg: SrConfig) -> int:
        return cfg.safety_net_hold_ms * 3


class EarlyAutoDiscard(Policy):
    def auto_discard_ms(self, cfg: SrConfig) -> int:
        return cfg.auto_discard_ms // 4


class ShortShadowIdle(Policy):
    def shadow_idle_ms(self, cfg: SrConfig) -> int:
        return cfg.shadow_idle_ms() // 2


class LateQueueExpiry(Policy):
    def queue_lifetime_ms(self, cfg: SrConfig) -> int:
        return cfg.expiration_ms * 4


class LateShadowExpiry(Policy):
    def shadow_lifetime_ms(self, cfg: SrConfig) -> int:
        return (cfg.safety_net_hold_ms + cfg.expiration_ms) * 4


class EarlyQueueExpiry(Policy):
    def queue_lifetime_ms(self, cfg: SrConfig) -> int:
        return 10 * MINUTE


@dataclass(frozen=True)
class Mutant:
    name: str
    expects: Rule  # the rule the monitor must report
    policy: type[Policy]
    options: dict[str, Any] = field(default_factory=dict)
    also_expects: tuple[Rule, ...] = ()  # other rules that equally expose this bug in some runs

    @property
    def rule(self) -> str:
        """The name of the rule the monitor must report (as violations carry it)."""
        return self.expects.name

    @property
    def also(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.also_expects)

    @property
    def rules(self) -> tuple[str, ...]:
        return (self.rule, *self.also)

    def simulate(self, seed: int, **opts: Any) -> list[Event]:
        return simulate(seed, policy=self.policy(), trace_id=f"sr-{self.name}-s{seed}", **{**self.options, **opts})


_REJECT = {"config": {"reject_on_failure": True}, "timing": Timing(stall_p=0.5)}
_FAULTY = {
    "workload": Workload(n_messages=40, fault_gap_ms=(2 * MINUTE, 10 * MINUTE)),
    "timing": Timing(hop_slow_p=0.5),
}
MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant("ack-before-shadow", R.SHADOW_BEFORE_ACK, AckBeforeShadow),
        Mutant("shadow-outside-boundary", R.SHADOW_IN_BOUNDARY, ShadowOutsideBoundary, {"layout": "mixed"}),
        Mutant("ignore-preference", R.SHADOW_PLACEMENT, IgnorePreference, {"layout": "multi-site-dag"}),
        Mutant("accept-when-reject-required", R.REJECT_REQUIRED, AcceptWhenRejectRequired, _REJECT),
        Mutant("wrong-rejection-text", R.REJECTION_TEXT, WrongRejectionText, _REJECT),
        Mutant("xshadow-advertised", R.NO_XSHADOW_ADVERTISED, XshadowAdvertised),
        Mutant(
            "shadow-when-disabled",
            R.SHADOW_DISABLED,
            ShadowWhenDisabled,
            {"config": {"enabled": False}},
            also_expects=(R.FAILURE_OUTCOME,),
        ),
        Mutant("premature-discard", R.NO_PREMATURE_DISCARD, PrematureDiscard, {"timing": Timing(hop_slow_p=0.5)}),
        Mutant(
            "release-before-all-forks",
            R.ALL_FORKS_BEFORE_RELEASE,
            ReleaseBeforeAllForks,
            {"timing": Timing(hop_slow_p=0.5)},
        ),
        Mutant("early-promotion", R.PROMOTION_TIMING, EarlyPromotion, _FAULTY),
        # a shadow that never promotes either loses the message (new database before processing) or is
        # never released (new database after processing: the discard notifications went with it)
        Mutant("never-promote", R.NO_LOSS, NeverPromote, _FAULTY, also_expects=(R.SHADOW_RELEASED,)),
        Mutant(
            "safetynet-resubmits-everything",
            R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY,
            ResubmitEverything,
            {"workload": Workload(n_messages=40, fault_gap_ms=(2 * MINUTE, 6 * MINUTE))},
        ),
        Mutant("no-duplicate-detection", R.DUPLICATE_HIDDEN_FROM_MAILBOX, NoDuplicateDetection, _FAULTY),
        Mutant(
            "discards-in-memory",
            R.SHADOW_RELEASED,
            DiscardsInMemory,
            {**_FAULTY, "config": {"heartbeat_ms": 30 * MINUTE}},
        ),
        Mutant("double-send", R.DUPLICATES_DOCUMENTED, DoubleSend),
        Mutant("ack-before-store", R.SHADOW_ACK_AFTER_STORE, AckBeforeStore),
        Mutant(
            "shadow-after-sender-gone",
            R.SHADOW_WHILE_INBOUND_OPEN,
            ShadowAfterSenderGone,
            {"timing": Timing(stall_p=0.8)},
        ),
        Mutant(
            "safetynet-resubmits-to-hub",
            R.NO_SAFETYNET_RESUBMIT_TO_2010,
            ResubmitToHub,
            {"hub": True, "workload": Workload(n_messages=40, fault_gap_ms=(2 * MINUTE, 6 * MINUTE))},
        ),
        Mutant("slow-heartbeat", R.HEARTBEAT_FREQUENCY, SlowHeartbeat, {"timing": Timing(hop_slow_p=0.5)}),
        Mutant("primary-drops-early", R.PRIMARY_KEEPS_COPY, PrimaryDropsEarly, also_expects=(R.NO_LOSS,)),
        Mutant(
            "reject-when-accept-configured",
            R.FAILURE_OUTCOME,
            RejectWhenAcceptConfigured,
            {"timing": Timing(stall_p=0.5)},
        ),
        Mutant("promote-on-contact", R.PROMOTION_DB_CHANGE, PromoteOnContact),
        Mutant("early-queue-expiry", R.QUEUE_EXPIRY, EarlyQueueExpiry, {"timing": Timing(hop_slow_p=0.5)}),
        Mutant("early-shadow-expiry", R.SHADOW_EXPIRY, EarlyShadowExpiry, {"timing": Timing(hop_slow_p=0.5)}),
    )
}
# Issue 9, family 2: the model behaving with one duration while the recorded configuration says another.
# Kept out of MUTANTS (whose traces the sample corpus ships): the catalogue's multi-day durations are never
# reached by a simulated run, so each names the short configuration it needs. The conformance suite's kill report
# runs them too (`conformance.harness.sr.DURATIONS` gives its runs these short durations).
_SHORT = {"safety_net_hold_ms": 40 * MINUTE, "expiration_ms": 20 * MINUTE}
PARAMETER_MUTANTS: dict[str, Mutant] = {
    m.name: m
    for m in (
        Mutant("short-safetynet-hold", R.SAFETYNET_HOLD, ShortSafetyNetHold, {"config": _SHORT}),
        Mutant("long-safetynet-hold", R.SAFETYNET_HOLD, LongSafetyNetHold, {"config": _SHORT}),
        Mutant(
            "early-auto-discard",
            R.AUTO_DISCARD_INTERVAL,
            EarlyAutoDiscard,
            {"config": {"auto_discard_ms": 60 * MINUTE, "resubmit_ms": 30 * MINUTE}, **_FAULTY},
        ),
        Mutant("short-shadow-idle", R.SESSION_TIMEOUT, ShortShadowIdle, {"timing": Timing(stall_p=0.5)}),
        Mutant("late-queue-expiry", R.QUEUE_EXPIRY, LateQueueExpiry, {"config": _SHORT, **_FAULTY}),
        Mutant("late-shadow-expiry", R.SHADOW_EXPIRY, LateShadowExpiry, {"config": _SHORT, **_FAULTY}),
    )
}
assert ev.MECH == "sr"


def simulators() -> dict[str, Callable[..., list[Event]]]:
    return {name: m.simulate for name, m in MUTANTS.items()}
