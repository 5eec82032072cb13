"""Frozen state of the shadow redundancy model: configuration, forks, and the per-message view.

Seed 000 ("Shadow redundancy components", "How shadow messages are created", "How shadow messages are
maintained"). The configuration reads every default from the catalogue (SR-P01..SR-P20); nothing here
restates a default. What the monitor and the generator fold events into
is `step.World` (built on the recorded configuration and topology).
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
    shadow_timeout_ends: str = _d("ShadowSessionTimeoutEnds")
    # SR-I01: ShadowMessagePreference is per server (Set-TransportService); servers not named use `preference`
    preference_by_server: dict[str, str] = field(default_factory=dict)

    def validate(self) -> SrConfig:
        if self.recv_inactivity_ms >= self.recv_timeout_ms:
            raise ConfigError("SR-049: ConnectionInactivityTimeout must be smaller than ConnectionTimeout")
        for pref in (self.preference, *self.preference_by_server.values()):
            if pref not in ("PreferRemote", "RemoteOnly", "LocalOnly"):
                raise ConfigError(f"SR-P03: unknown ShadowMessagePreference {pref!r}")
        if self.shadow_timeout_ends not in ("attempt", "creation"):
            raise ConfigError(f"SR-P21: unknown ShadowSessionTimeoutEnds {self.shadow_timeout_ends!r}")
        if self.heartbeat_ms <= 0 or self.resubmit_ms <= 0:
            raise ConfigError("SR-P13/SR-P14: heartbeat and resubmit intervals must be positive")
        return self

    def preference_of(self, server: str) -> str:
        """The ShadowMessagePreference of one server (SR-I01)."""
        return self.preference_by_server.get(server, self.preference)

    def shadow_idle_ms(self) -> int:
        """How long a stalled primary-to-shadow session stays open: the first of the primary's Send connector
        and the shadow's Receive connector inactivity time-outs to run out closes it (SR-039, SR-I22)."""
        return min(self.send_inactivity_ms, self.recv_inactivity_ms)

    def inbound_max_ms(self) -> int:
        """The longest the sender's session may stay open after its data arrived (SR-039, SR-I22): ConnectionTimeout
        counts from the connection's opening, which the trace does not show and which comes no later than the data;
        so the session may time out at any moment after RECEIVE (no lower bound), but not later than this."""
        return self.recv_timeout_ms

    @classmethod
    def from_json(cls, data: Any) -> SrConfig:
        """The `sr` section of a recorded configuration; keys not recorded take the catalogue default and
        unknown keys are an error naming them."""
        if not isinstance(data, dict):
            raise ConfigError(f"the recorded sr configuration is {type(data).__name__}, not an object")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ConfigError(f"unknown keys in the recorded sr configuration: {unknown}")
        return cls(**data).validate()

    def replace(self, **changes: Any) -> SrConfig:
        return dataclasses.replace(self, **changes).validate()

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
