"""Frozen state of the shadow redundancy model: configuration, forks, and the per-message view.

Seed 000 ("Shadow redundancy components", "How shadow messages are created", "How shadow messages are
maintained"). The configuration reads every default from the catalogue (SR-P01..SR-P20); nothing here
restates a default. `MessageView` is what the transition rules (`rules.py`) fold a message's events
into: the simulator keeps one per message and the monitor rebuilds the same one from a recorded trace.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from spec.catalogue import param_default, param_ms

# Fork names: "mbx" (mailbox recipients in the boundary), "ext:<domain>" (a next hop outside the
# boundary), "hub:<server>" (an Exchange 2010 Hub in the same site), "dsn" (a delivery status
# notification back to the sender), "journal" (a journal report to a journal mailbox).
FORK_KINDS = {"mbx": "mailbox", "ext": "external", "hub": "hub2010", "dsn": "dsn", "journal": "journal"}
CROSSES_BOUNDARY = {"external", "hub2010", "dsn"}  # forks whose next hop is outside the boundary
MAILBOX_KINDS = {"mailbox", "journal"}  # forks delivered to Exchange mailboxes (duplicate detection)


_FIELDS: dict[type, tuple[str, ...]] = {}


def evolve(obj: Any, **changes: Any) -> Any:
    """`dataclasses.replace` for these frozen, slotted, validation-free views, without re-running
    `__init__` (the monitor's hot path: about five times faster)."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    new = object.__new__(cls)
    for name in names:
        object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
    return new


def fork_kind(fork: str) -> str:
    """Kind of a fork from its name (SR-010, SR-063)."""
    return FORK_KINDS[fork.split(":", 1)[0]]


def _d(name: str) -> Any:
    return field(default_factory=lambda: param_default(name))


def _ms(name: str) -> Any:
    return field(default_factory=lambda: param_ms(name))


class ConfigError(ValueError):
    """A configuration the seed forbids (SR-049)."""


@dataclass(frozen=True, slots=True)
class SrConfig:
    """Organisation-wide settings (Set-TransportConfig / Set-TransportService / connectors)."""

    enabled: bool = _d("ShadowRedundancyEnabled")
    reject_on_failure: bool = _d("RejectMessageOnShadowFailure")
    preference: str = _d("ShadowMessagePreference")
    max_remote: int = _d("MaxRetriesForRemoteSiteShadow")
    max_local: int = _d("MaxRetriesForLocalSiteShadow")
    retry_meaning: str = _d("ShadowRetryCountMeaning")
    promotion_check: str = _d("PromotionCheck")
    accept_variant: bool = _d("AcceptRejectionVariant")
    heartbeat_ms: int = _ms("ShadowHeartbeatFrequency")
    resubmit_ms: int = _ms("ShadowResubmitTimeSpan")
    auto_discard_ms: int = _ms("ShadowMessageAutoDiscardInterval")
    safety_net_hold_ms: int = _ms("SafetyNetHoldTime")
    expiration_ms: int = _ms("MessageExpirationTimeout")
    recv_inactivity_ms: int = _ms("ReceiveConnectionInactivityTimeoutMailbox")
    recv_timeout_ms: int = _ms("ReceiveConnectionTimeoutMailbox")
    send_inactivity_ms: int = _ms("SendConnectionInactivityTimeout")

    def validate(self) -> SrConfig:
        if self.recv_inactivity_ms >= self.recv_timeout_ms:
            raise ConfigError("SR-049: ConnectionInactivityTimeout must be smaller than ConnectionTimeout")
        if self.preference not in ("PreferRemote", "RemoteOnly", "LocalOnly"):
            raise ConfigError(f"SR-P03: unknown ShadowMessagePreference {self.preference!r}")
        if self.heartbeat_ms <= 0 or self.resubmit_ms <= 0:
            raise ConfigError("SR-P13/SR-P14: heartbeat and resubmit intervals must be positive")
        return self

    def replace(self, **changes: Any) -> SrConfig:
        return dataclasses.replace(self, **changes).validate()

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class InstView:
    """One delivery attempt of a message by its sender (`inst`), as the rules see it."""

    inst: int
    primary: str
    boundary: str
    db: str
    forks: tuple[str, ...]
    received_ms: int
    enabled: bool
    reject: bool
    plan: tuple[str, ...]  # site class allowed for each shadow attempt, in order (SR-044..SR-047)
    tries: int = 0
    attempt_open: str = ""  # shadow server of the attempt in progress
    shadow: str = ""  # server that stored the shadow (HARECEIVE)
    shadow_ms: int = 0
    shadow_acked: bool = False
    failed: bool = False  # every allowed attempt failed (final HAREDIRECTFAIL)
    inbound_open: bool = True
    outcome: str = ""  # "" | "accepted" | "rejected"
    redundant: bool = False
    processed: frozenset[str] = frozenset()  # forks completed by the primary (discard status, SR-050)
    notified: frozenset[str] = frozenset()  # forks the shadow got discard notifications for
    shadow_state: str = "none"  # none | held | released | promoted | expired | lost
    promoted_ms: int = 0
    primary_lost: bool = False
    primary_done: bool = False  # primary moved the message into Safety Net
    expired: frozenset[str] = frozenset()  # forks failed by MessageExpirationTimeout (SR-067)


@dataclass(frozen=True, slots=True)
class MessageView:
    """Everything the rules know about one message (entity = network message ID)."""

    insts: tuple[InstView, ...] = ()
    delivered: frozenset[str] = frozenset()  # forks delivered or sent at least once
    licences: frozenset[str] = frozenset()  # documented reasons for duplicates seen so far (SR-076)
    lost_nodes: frozenset[str] = frozenset()

    def inst(self, n: int) -> InstView | None:
        for i in self.insts:
            if i.inst == n:
                return i
        return None

    def with_inst(self, view: InstView) -> MessageView:
        others = tuple(i for i in self.insts if i.inst != view.inst)
        return evolve(self, insts=(*others, view))
