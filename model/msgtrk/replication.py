"""The imported-log monitor's reading of `S:Replication` in the custom-data of the primary's RECEIVE rows
(FIELD-NOTES: `S:Replication=<shadow short name>`, `=Failed` or `=Disabled`; issue 31), interpretation SR-I31.

Seed 000, "Messages received from outside a transport high availability boundary" (step 2: the primary opens a
session "with the Transport service on a different Mailbox server in the organization to create a redundant copy")
and "SMTP timeouts" / "Shadow redundancy is enabled by default" ("If the value of this parameter is $true the
primary message is rejected with the transient error 451 4.4.0"). Judged:
- a server name: the shadow is another server than the primary (SR-028), one instance per RECEIVE;
- `Failed` with RejectMessageOnShadowFailure on (recorded at import): the message does not go on to a next hop
  (SEND, SENDEXTERNAL, DELIVER) of the primary after that RECEIVE (SR-021), one instance per RECEIVE; where the
  primary logged HAREDIRECTFAIL for the message that row is judged instead (one fault, one violation).
Not judged, with the reason (skipped in the tally, listed in `conformance/audit/IMPORTED-LOGS.md`): `Failed` with
RejectMessageOnShadowFailure off (the RECEIVE itself records the acceptance SR-019 asks for: nothing further is
stated); `Disabled` (the seed's shadow rules hold "as long as shadow redundancy is enabled"); whether the name
agrees with HAREDIRECT's shadow (no seed sentence says that the two name one server: the shadow may be retried
on another); an empty value.
"""

from __future__ import annotations

from collections.abc import Mapping

from model.msgtrk import rules as R
from model.msgtrk.judging import Judge
from spec.catalogue import require
from traces.schema import Event

require("SR-019", "SR-021", "SR-028")

REJECT_OFF = "S:Replication=Failed with RejectMessageOnShadowFailure off: the RECEIVE is the acceptance SR-019 asks for"
DISABLED = "S:Replication=Disabled: shadow redundancy is off on the primary, and the seed's rules hold while it is on"
EMPTY = "S:Replication with an empty value"
JUDGED_ON_FAIL = "the primary's HAREDIRECTFAIL of the message is judged instead (msgtrk-shadow-failure-reject)"


NEVER_JUDGED = (
    "S:Replication naming another shadow than HAREDIRECT's: not judged, no seed sentence says the two name one "
    "server (the shadow may be retried on another)"
)


def not_judged(values: Mapping[str, int], reject: bool) -> list[str]:
    """What the import's S:Replication values leave unjudged, with the reason (for IMPORT_START and the docs)."""
    out = []
    if (values.get("Failed") or values.get("failed")) and not reject:
        out.append(f"{REJECT_OFF}: not judged")
    if values.get("Disabled") or values.get("disabled"):
        out.append(f"{DISABLED}: not judged")
    if values.get(""):
        out.append(f"{EMPTY}: not judged")
    if any(v.lower() not in ("failed", "disabled", "") for v in values):
        out.append(NEVER_JUDGED)
    return out


def judge_replication(j: Judge, entity: str, primary: str, prim: list[Event], hops: list[Event]) -> None:
    """Each RECEIVE of the primary that carries S:Replication (`attrs["replication"]`, set at import)."""
    for r in (e for e in prim if e.kind == "RECEIVE" and "replication" in e.attrs):
        value = str(r.attrs["replication"]).strip()
        if value.lower() == "disabled":
            for rule in (R.REPLICATION_OTHER_SERVER, R.REPLICATION_FAILED_REJECT):
                j.tally.skip(rule, DISABLED)
        elif value.lower() == "failed":
            if not j.cfg.reject:
                j.tally.skip(R.REPLICATION_FAILED_REJECT, REJECT_OFF)
                continue
            if any(e.kind == "HAREDIRECTFAIL" for e in prim):
                j.tally.skip(R.REPLICATION_FAILED_REJECT, JUDGED_ON_FAIL)
                continue
            j.tally.judge(R.REPLICATION_FAILED_REJECT)
            later = [h for h in hops if h.seq > r.seq]
            if later:
                j.bad(
                    R.REPLICATION_FAILED_REJECT,
                    entity,
                    [r, later[0]],
                    f"RejectMessageOnShadowFailure is true and {primary}'s RECEIVE records S:Replication=Failed, "
                    f"yet the message without a shadow went on ({later[0].kind})",
                    replication=value,
                )
        elif not value:
            j.tally.skip(R.REPLICATION_OTHER_SERVER, EMPTY)
        else:
            j.tally.judge(R.REPLICATION_OTHER_SERVER)
            if value == primary:
                j.bad(
                    R.REPLICATION_OTHER_SERVER,
                    entity,
                    [r],
                    f"{primary}'s RECEIVE names itself as the shadow server (S:Replication={value})",
                    shadow=value,
                )
