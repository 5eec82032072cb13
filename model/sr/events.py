"""Event kinds of the shadow redundancy model and the attributes each carries.

Seed 000, all sections. Kinds use the Exchange message-tracking vocabulary where one exists (RECEIVE,
HAREDIRECT, HARECEIVE, HAREDIRECTFAIL, HADISCARD, SEND, DELIVER, DUPLICATEDELIVER, RESUBMIT); the rest
are the model's own, for what message tracking does not show (SMTP acknowledgements, session time-outs,
discard notifications, promotion, copies destroyed with a transport database). The entity of every
per-message event is the network message ID; heartbeat events use the entity `hb:<shadow>><primary>`.
`model/sr/README.md` documents each kind and attribute.
"""

from __future__ import annotations

MECH = "sr"

# message-tracking event IDs
RECEIVE = "RECEIVE"  # primary got the message data; attrs: inst, sender, origin, boundary, site, db, forks
HAREDIRECT = "HAREDIRECT"  # primary opens a shadow session; attrs: inst, shadow, try, site, shadow_site
HARECEIVE = "HARECEIVE"  # shadow stored the copy; attrs: inst, primary, boundary, primary_db, forks
HAREDIRECTFAIL = "HAREDIRECTFAIL"  # an attempt failed; attrs: inst, shadow, reason, final
HADISCARD = "HADISCARD"  # shadow released after every fork's discard notification; attrs: inst, primary
SEND = "SEND"  # a fork left for a next hop; attrs: inst, fork, next_hop, via
DELIVER = "DELIVER"  # a fork delivered to Exchange mailboxes; attrs: inst, fork, via
DUPLICATEDELIVER = "DUPLICATEDELIVER"  # duplicate detected and hidden at the mailbox; attrs as DELIVER
FAIL = "FAIL"  # queued forks expired (MessageExpirationTimeout); attrs: inst, forks, reason, expiration_ms
RESUBMIT = "RESUBMIT"  # Safety Net resubmission of a fork; attrs: inst, fork
# the model's own kinds
SHADOW_ACK = "SHADOW_ACK"  # primary got the shadow's acknowledgement; attrs: inst, shadow
ACCEPT = "ACCEPT"  # primary accepted the message; attrs: inst, redundant, acked, response
REJECT = "REJECT"  # primary refused the message; attrs: inst, response
SESSION_TIMEOUT = "SESSION_TIMEOUT"  # attrs: inst, session (inbound|shadow), timeout (parameter name)
DISCARD_NOTIFY = "DISCARD_NOTIFY"  # shadow got a discard notification; attrs: inst, fork, primary
DISCARD_EXPIRE = "DISCARD_EXPIRE"  # primary deleted unqueried discard events (SR-064); attrs: inst, shadow
SAFETYNET = "SAFETYNET"  # copy moved into Safety Net; attrs: inst, role (primary|shadow)
SAFETYNET_EXPIRE = "SAFETYNET_EXPIRE"  # removed after SafetyNetHoldTime; attrs: inst
PROMOTE = "PROMOTE"  # shadow took ownership; attrs: inst, primary, reason, last_contact_ms, ...
SHADOW_EXPIRE = "SHADOW_EXPIRE"  # shadow expired (SR-066); attrs: inst, hold_ms, expiration_ms
LOST = "LOST"  # copy destroyed with its transport database; attrs: inst, role
SNAPSHOT = "SNAPSHOT"  # harness record at the end of a run; attrs: quiesced
XQUERYDISCARD = "XQUERYDISCARD"  # heartbeat entity; attrs: primary, ok, reason, db, held
SR_CONFIG = "SR_CONFIG"  # context record: attrs topology (server -> site, dag, version) and/or sr (settings)

PROCESSING = (DELIVER, DUPLICATEDELIVER, SEND)
REJECTION_TEXT = "451 4.4.0 Message failed to be made redundant"  # SR-020, exact
REJECTION_VARIANT = "450 4.5.1"  # SR-I09: later documentation; accepted only with AcceptRejectionVariant
ACK_TEXT = "250 2.6.0 Queued mail for delivery"

ALL_KINDS = (
    RECEIVE,
    HAREDIRECT,
    HARECEIVE,
    HAREDIRECTFAIL,
    HADISCARD,
    SEND,
    DELIVER,
    DUPLICATEDELIVER,
    RESUBMIT,
    FAIL,
    SHADOW_ACK,
    ACCEPT,
    REJECT,
    SESSION_TIMEOUT,
    DISCARD_NOTIFY,
    DISCARD_EXPIRE,
    SAFETYNET,
    SAFETYNET_EXPIRE,
    PROMOTE,
    SHADOW_EXPIRE,
    LOST,
    SNAPSHOT,
    XQUERYDISCARD,
    SR_CONFIG,
)


def heartbeat_entity(shadow: str, primary: str) -> str:
    return f"hb:{shadow}>{primary}"
