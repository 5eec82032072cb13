"""The shadow redundancy vocabulary's checked parts (issue 30): the recorders as roles over the trace so far,
the formats, the ordering rules as predicates, and the configuration fields the monitors read (`SrConfig`).
Used by `model/sr/vocabulary.py`; checked on every simulated trace by `tests/unit/test_vocabulary_contract.py`.
Seed 000; the roles follow the simulator (`model/sr/sim.py`), the orderings the recorder's order (SR-030, SR-031,
SR-053).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from model.kernel.vocabulary import config_fields
from model.sr.state import SrConfig
from traces.contract import History, Hit, before, custom, json_object, last_of, pattern
from traces.schema import Event
from traces.vocabulary import ConfigField, Order, Role

DB_ID = pattern("`<server>-db<n>`", r".+-db\d+", strict=False)  # compared, never parsed
BOUNDARY = pattern("`dag:<dag>` or `site:<site>`", r"(dag|site):.+")
FORK_FMT = pattern("`mbx`, `ext:<domain>`, `hub:<server>`, `dsn` or `journal`", r"mbx|dsn|journal|(ext|hub):.+")
HB_ENTITY = pattern("`hb:<shadow>><primary>`", r"hb:[^>]+>[^>]+", strict=False)
TOPOLOGY = json_object("JSON object: server -> {site, dag (null: none), version}")
SETTINGS = json_object("JSON object of SrConfig fields", [f.name for f in dataclasses.fields(SrConfig)])


def _receivers(h: History, e: Event) -> set[str]:
    return {r.node for r in h.of("RECEIVE", e.entity)}


def _shadows(h: History, e: Event) -> set[str]:
    return {r.node for r in h.of("HARECEIVE", e.entity)}


def _primary(e: Event, h: History) -> bool:
    same = [r.node for r in h.of("RECEIVE", e.entity) if r.attrs.get("inst") == e.attrs.get("inst")]
    return e.node in (same or _receivers(h, e))


def _redirected(e: Event, h: History) -> bool:
    return any(r.attrs.get("shadow") == e.node for r in h.of("HAREDIRECT", e.entity))


def _holder(e: Event, h: History) -> bool:
    return e.node in _receivers(h, e) | _shadows(h, e)


def _topology_server(e: Event, h: History) -> bool:
    return e.node != "sim"


PRIMARY = Role("the primary (the node of the instance's RECEIVE)", _primary)
RECEIVER = Role("the primary (a server, not `sim`)", _topology_server)
SHADOW_TO_BE = Role("the shadow (the `shadow` of an earlier HAREDIRECT of the message)", _redirected)
SHADOW = Role("the shadow (a node that recorded the message's HARECEIVE)", lambda e, h: e.node in _shadows(h, e))
HOLDER = Role("a holder (the primary or a shadow of the message)", _holder)
DELIVERER = Role("the delivering holder (the primary, a promoted shadow, or the Safety Net resubmitter)", _holder)
QUERIER = Role(
    "the shadow querying (`hb:<shadow>>...`)",
    lambda e, h: e.entity == f"hb:{e.node}>{e.attrs.get('primary')}",
)

INSTANCE_KINDS = frozenset(
    {
        "HAREDIRECT", "HARECEIVE", "SHADOW_ACK", "HAREDIRECTFAIL", "SESSION_TIMEOUT", "ACCEPT", "REJECT", "DELIVER",
        "DUPLICATEDELIVER", "SEND", "DISCARD_NOTIFY", "HADISCARD", "SAFETYNET", "SAFETYNET_EXPIRE", "PROMOTE",
        "FAIL", "RESUBMIT", "SHADOW_EXPIRE", "DISCARD_EXPIRE", "LOST",
    }
)  # fmt: skip


def _inst(e: Event) -> tuple[str, object]:
    return e.entity, e.attrs.get("inst")


def _once(events: list[Event]) -> Iterator[Hit]:
    answered: dict[tuple[str, object], int] = {}
    for e in events:
        if e.mechanism == "sr" and e.kind in ("ACCEPT", "REJECT"):
            if _inst(e) in answered:
                yield e.kind, "order", f"a second answer to the instance (first: seq {answered[_inst(e)]})", e.seq
            answered.setdefault(_inst(e), e.seq)


def _notify_before_discard(events: list[Event]) -> Iterator[Hit]:
    released: dict[tuple[str, object, str], int] = {}
    for e in events:
        key = (*_inst(e), e.node)
        if e.kind == "HADISCARD":
            released.setdefault(key, e.seq)
        elif e.kind == "DISCARD_NOTIFY" and key in released:
            yield e.kind, "order", f"after the shadow's HADISCARD (seq {released[key]})", e.seq


def _primary_safetynet_last(events: list[Event]) -> Iterator[Hit]:
    moved: dict[tuple[str, object, str], int] = {}
    for e in events:
        key = (*_inst(e), e.node)
        if e.kind == "SAFETYNET" and e.attrs.get("role") == "primary":
            moved.setdefault(key, e.seq)
        elif e.kind in ("SEND", "DELIVER") and e.attrs.get("via") == "primary" and key in moved:
            yield e.kind, "order", f"a fork sent after the primary's SAFETYNET (seq {moved[key]})", e.seq


def _topology_first(events: list[Event]) -> Iterator[Hit]:
    first = next((e.seq for e in events if e.kind == "RECEIVE" and e.mechanism == "sr"), None)
    topo = [e for e in events if e.kind == "SR_CONFIG" and "topology" in e.attrs]
    if first is not None and topo and topo[0].seq > first:
        yield (
            "SR_CONFIG",
            "topology",
            f"the first recorded topology comes after the first RECEIVE (seq {first})",
            topo[0].seq,
        )


def _query_key(e: Event) -> tuple[str, object]:
    return e.node, e.attrs.get("primary")


SR = lambda e: e.mechanism == "sr"  # noqa: E731

ORDERING: tuple[Order, ...] = (
    before(
        "RECEIVE before everything else of its instance (any distance)",
        {"RECEIVE"}, INSTANCE_KINDS, _inst, _inst, instant=False, when=SR, when_first=SR,
    ),
    before(
        "HAREDIRECT before the HARECEIVE of that attempt (any distance; HARECEIVE is the shadow's)",
        {"HAREDIRECT"}, {"HARECEIVE"}, lambda e: (*_inst(e), e.attrs.get("shadow")), lambda e: (*_inst(e), e.node),
        instant=False, required=True,
    ),
    before(
        "HAREDIRECT before the HAREDIRECTFAIL of that attempt (the same `shadow` and `try`; none for `No suitable "
        "shadow servers`, whose `shadow` is ``)",
        {"HAREDIRECT"}, {"HAREDIRECTFAIL"}, lambda e: (*_inst(e), e.attrs.get("shadow"), e.attrs.get("try")),
        lambda e: (*_inst(e), e.attrs.get("shadow"), e.attrs.get("try")), instant=False, required=True,
        when=lambda e: bool(e.attrs.get("shadow")),
    ),
    before(
        "HARECEIVE (shadow) before its SHADOW_ACK (primary): the shadow acknowledges the copy it made (SR-030)",
        {"HARECEIVE"}, {"SHADOW_ACK"}, lambda e: (*_inst(e), e.node), lambda e: (*_inst(e), e.attrs.get("shadow")),
        instant=False, required=True,
    ),
    before(
        "SHADOW_ACK before ACCEPT when `redundant` (SR-031)",
        {"SHADOW_ACK"}, {"ACCEPT"}, _inst, _inst, instant=False, required=True,
        when=lambda e: e.attrs.get("redundant") is True,
    ),
    custom("ACCEPT or REJECT once per instance", _once),
    before(
        "SEND, DELIVER or DUPLICATEDELIVER of a fork by the primary (`via` `primary`) only after its ACCEPT",
        {"ACCEPT"}, {"SEND", "DELIVER", "DUPLICATEDELIVER"}, _inst, _inst, instant=False, required=True,
        when=lambda e: e.attrs.get("via") == "primary",
    ),
    before(
        "XQUERYDISCARD before what it causes at the same instant: the DISCARD_NOTIFY, HADISCARD and PROMOTE of that "
        "shadow for that primary (SR-053)",
        {"XQUERYDISCARD"}, {"DISCARD_NOTIFY", "HADISCARD", "PROMOTE"}, _query_key, _query_key,
    ),
    custom("every DISCARD_NOTIFY of a shadow's forks before its HADISCARD (SR-I20)", _notify_before_discard),
    before(
        "a shadow's SAFETYNET (`role` `shadow`) after its HADISCARD: the copy moves to Safety Net once every fork "
        "was processed (SR-012, SR-I20)",
        {"HADISCARD"}, {"SAFETYNET"}, lambda e: (*_inst(e), e.node), lambda e: (*_inst(e), e.node), instant=False,
        required=True, when=lambda e: e.attrs.get("role") == "shadow",
    ),
    custom(
        "a primary's SAFETYNET (`role` `primary`) after the last SEND or DELIVER of its forks (`via` `primary`)",
        _primary_safetynet_last,
        lenient=False,
    ),
    custom(
        "SR_CONFIG before the events it configures (it applies from its position): a recorded topology comes "
        "before the first RECEIVE",
        _topology_first,
        lenient=False,
    ),
    before(
        "an XQUERYDISCARD `reason` `session` follows, at its instant, the HAREDIRECT by which the querying server "
        "opened a shadow session to the queried one (the session carries the query, SR-I05)",
        {"HAREDIRECT"}, {"XQUERYDISCARD"}, lambda e: (e.node, e.attrs.get("shadow")),
        lambda e: (e.node, e.attrs.get("primary")), required=True, when=lambda e: e.attrs.get("reason") == "session",
    ),
    last_of("SNAPSHOT last for its message", "SNAPSHOT", lambda e: e.entity, scope=SR),
)  # fmt: skip


_WHERE = "TRACE_START `config.sr`, SR_CONFIG `sr`"
_MS = "integer (ms)"
_TABLE: dict[str, tuple[str, str, str]] = {
    "enabled": ("boolean", "ShadowRedundancyEnabled", "shadow redundancy on or off"),
    "reject_on_failure": ("boolean", "RejectMessageOnShadowFailure", "reject (451) when no shadow is made (SR-020)"),
    "preference": ("string", "ShadowMessagePreference", "`PreferRemote`, `RemoteOnly` or `LocalOnly`"),
    "max_remote": ("integer", "MaxRetriesForRemoteSiteShadow", "shadow attempts in another site"),
    "max_local": ("integer", "MaxRetriesForLocalSiteShadow", "shadow attempts in the local site"),
    "retry_meaning": ("string", "ShadowRetryCountMeaning", "what a retry count counts: `attempts` or `retries`"),
    "promotion_check": (
        "string",
        "PromotionCheck",
        "when a shadow checks for promotion: `heartbeatTick` (at its heartbeat queries) or `exactTimer` (a timer at "
        "the exact ShadowResubmitTimeSpan; XQUERYDISCARD `reason` `timer`)",
    ),
    "accept_variant": ("boolean", "AcceptRejectionVariant", "the rejection may read `450 4.5.1` (SR-I09)"),
    "heartbeat_ms": (_MS, "ShadowHeartbeatFrequency", "the heartbeat interval, bounded from both sides (SR-055, "
                     "SR-078, SR-I30)"),
    "resubmit_ms": (_MS, "ShadowResubmitTimeSpan", "no contact for this long: the shadow promotes (SR-058)"),
    "auto_discard_ms": (_MS, "ShadowMessageAutoDiscardInterval", "queued discard events kept this long (SR-064)"),
    "safety_net_hold_ms": (_MS, "SafetyNetHoldTime", "how long Safety Net keeps a copy (SR-065)"),
    "expiration_ms": (_MS, "MessageExpirationTimeout", "queued forks expire after this (SR-067)"),
    "recv_inactivity_ms": (
        _MS,
        "ReceiveConnectionInactivityTimeoutMailbox",
        "the Receive connector's ConnectionInactivityTimeout on mailbox servers: bounds an idle inbound or shadow "
        "session (SR-039, SR-I22); smaller than `recv_timeout_ms` (SR-049)",
    ),
    "recv_timeout_ms": (
        _MS,
        "ReceiveConnectionTimeoutMailbox",
        "the Receive connector's ConnectionTimeout on mailbox servers: the longest the sender's session stays open "
        "after RECEIVE (SR-039, SR-I22)",
    ),
    "send_inactivity_ms": (
        _MS,
        "SendConnectionInactivityTimeout",
        "the Send connector's ConnectionInactivityTimeout: with `recv_inactivity_ms`, the first to run out closes a "
        "stalled primary-to-shadow session (SR-039, SR-I22)",
    ),
    "shadow_timeout_ends": (
        "string",
        "ShadowSessionTimeoutEnds",
        "what a shadow session's time-out ends: `attempt` (that attempt; the next shadow server is tried) or "
        "`creation` (shadow creation for the message)",
    ),
    "preference_by_server": (
        "object: server -> preference",
        "",
        "per-server ShadowMessagePreference (Set-TransportService, SR-I01); servers not named use `preference`",
    ),
}  # fmt: skip
CONFIG: tuple[ConfigField, ...] = (
    *config_fields(_WHERE, SrConfig(), _TABLE),
    ConfigField(
        "sr_topology",
        "TRACE_START `config.sr_topology`, SR_CONFIG `topology`",
        "JSON object: server -> {site, dag, version}",
        "each server's Active Directory site, DAG (null: none) and Exchange version: the boundaries (SR-006) and the "
        "shadow plan are derived from it",
        "(none: no shadow plan is derived)",
    ),
)
CONFIG_KEYS = ("layout", "n_servers", "sr", "sr_topology")  # the keys of TRACE_START `config` (sr runs)
