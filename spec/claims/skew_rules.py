"""The rules of the clock-skew orderings (`spec.claims.skew`, issue 6), as `traces.verdict.Rule` constants.

Each required ordering across servers' clocks is one rule: TR-003 (a NET_SEND before the NET_RECV of the same
wire message), seed 000 SR-031 (the shadow server received its copy before the primary accepted the message as
redundant) and SR-030 (the shadow stored its copy before its acknowledgement reached the primary). Their
violations carry mechanism `core`, as the skew monitor's (`model.skew.monitor`) always have. Defined here, below
`model`, because the skew check in `spec.claims` builds its orderings from them; `model.skew.rules` re-exports
them. No solver is loaded by this module (z3 stays behind `spec.claims.skew`).
"""

from __future__ import annotations

from spec.catalogue import require
from traces.verdict import Rule, table

NET_SEND_BEFORE_RECV = Rule(
    "net_send_before_recv",
    "TR-003",
    "always",
    "a NET_RECV follows the NET_SEND of the same wire message in true time, under the clock-skew bound",
)
SHADOW_RECEIVED_BEFORE_ACCEPT = Rule(
    "shadow_received_before_accept",
    "SR-031",
    "always",
    "the shadow server received its copy (HARECEIVE) before the primary accepted the message as redundant "
    "(ACCEPT), in true time under the clock-skew bound",
)
SHADOW_STORED_BEFORE_ACK = Rule(
    "shadow_stored_before_ack",
    "SR-030",
    "always",
    "the shadow stored its copy (HARECEIVE) before its acknowledgement reached the primary (SHADOW_ACK), in true "
    "time under the clock-skew bound",
)
RULES: dict[str, Rule] = table(
    __name__, "core", [NET_SEND_BEFORE_RECV, SHADOW_RECEIVED_BEFORE_ACCEPT, SHADOW_STORED_BEFORE_ACK]
)
AMBIGUOUS = "explainable either way within the skew bound"  # why an ambiguous instance is not judged
require(*(r.requirement for r in RULES.values()))
