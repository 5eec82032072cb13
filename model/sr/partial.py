"""What the shadow redundancy monitor judges of a message whose beginning the trace lacks (issue 30, family 4).

The policy is TR-I01 (`spec/requirements/tr.toml`), the same for sr, am and pf: an entity whose beginning the
trace does not show is *partial*; the rules that need that beginning are skipped for it (counted in the
`Tally` with the reason, the verdict unknown when nothing else decides it), and every rule that can be judged
from what was recorded is judged. For sr the beginning of a message (one delivery attempt) is its RECEIVE on
the primary; an event of an attempt whose RECEIVE is not in the trace still shows, by itself and the recorded
configuration and topology:

- HARECEIVE: the shadow server and the primary it names. Seed 000, "Requirements for shadow redundancy" and
  "Shadow redundancy with Exchange 2010 Hub Transport servers" (SR-015, SR-036): a shadow lives on another
  Exchange 2013 server of the primary's boundary, whatever came before; a 2013 server holding a shadow whose
  primary is an Exchange 2010 Hub is a violation of shadow-in-boundary. The boundary it records is judged
  against the recorded topology (SR-006).
- RESUBMIT: the fork Safety Net sends again. Seed 000, "Messages sent outside a transport high availability
  boundary" and the 2010 section (SR-033, SR-038): never a fork that crossed the boundary, never a 2010 Hub.
- REJECT: the text of the rejection (SR-020): exactly the seed's, or the recorded variant.

Everything else about such an attempt (its copies' states, shadow placement, timing against RECEIVE, duplicates)
needs the beginning and is skipped with the reason `NO_RECEIVE`. The shadows a server says it holds beyond those
the trace showed it make (XQUERYDISCARD `held` above the count derived) are shadows whose beginning the trace
lacks: `heartbeats.query` counts that instance of shadow-record-as-derived as not judged, with `HELD_UNSEEN`.
"""

from __future__ import annotations

from model.sr import events as ev
from model.sr import rules as R
from model.sr.inputs import fork_kind
from model.sr.state import CROSSES_BOUNDARY
from model.sr.world import World
from traces.schema import Event
from traces.verdict import Rule, Violation

NO_RECEIVE = "an event of a message whose RECEIVE is not in the trace"
HELD_UNSEEN = "the shadow server holds shadows whose creation (HARECEIVE) is not in the trace"


def orphan(w: World, e: Event, rule: Rule) -> list[Violation]:
    """An event of an attempt whose RECEIVE is not in the trace: `rule` (its transition rule) is skipped, and the
    rules it shows by itself are judged (module docstring)."""
    w.tally.skip(rule, NO_RECEIVE)
    judge = _JUDGED.get(e.kind)
    return judge(w, e) if judge is not None else []


def _hareceive(w: World, e: Event) -> list[Violation]:
    s, p = e.node, e.attrs.get("primary")
    if not isinstance(p, str) or not w.knows(s, p):
        w.tally.skip(R.SHADOW_IN_BOUNDARY, NO_RECEIVE if not isinstance(p, str) else "a server the recorded "
                     "topology does not name")  # fmt: skip
        return []
    w.tally.judge(R.SHADOW_IN_BOUNDARY)
    version = w.topo[p][2]  # type: ignore[index]
    out = []
    if w.boundary(s) != w.boundary(p) or s == p or version != "2013" or w.topo[s][2] != "2013":  # type: ignore[index]
        why = f"the shadow is on {s} in {w.boundary(s)} for primary {p}, an Exchange {version} server in " \
              f"{w.boundary(p)}: not another Exchange 2013 server of the primary's boundary"  # fmt: skip
        out.append(R.SHADOW_IN_BOUNDARY.violated((e,), why, observed=w.boundary(s), expected=w.boundary(p),
                                                 server=s, primary=p, primary_version=version))  # fmt: skip
    boundary = e.attrs.get("boundary")
    if boundary is not None:
        w.tally.judge(R.TOPOLOGY_AS_RECORDED)
        if boundary != w.boundary(s):
            out.append(R.TOPOLOGY_AS_RECORDED.violated((e,), f"HARECEIVE records for {s} boundary {boundary!r}, "
                              f"not {w.boundary(s)!r}", server=s, observed=boundary,
                              expected=w.boundary(s)))  # fmt: skip
    return out


def _resubmit(w: World, e: Event) -> list[Violation]:
    fork = e.attrs.get("fork")
    if not isinstance(fork, str):
        return []
    kind = fork_kind(e, fork)
    w.tally.judge(R.NO_SAFETYNET_RESUBMIT_TO_2010)
    w.tally.judge(R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY)
    if kind == "hub2010":
        return [R.NO_SAFETYNET_RESUBMIT_TO_2010.violated((e,), f"Safety Net resubmitted fork {fork} to an Exchange "
                       "2010 Hub", observed=fork, fork_kind=kind)]  # fmt: skip
    if kind in CROSSES_BOUNDARY:
        return [R.NO_SAFETYNET_RESUBMIT_ACROSS_BOUNDARY.violated((e,), f"Safety Net resubmitted fork {fork}, which "
                       "had already crossed the boundary", observed=fork, fork_kind=kind)]  # fmt: skip
    return []


def _reject(w: World, e: Event) -> list[Violation]:
    text = e.attrs.get("response")
    if text is None:
        return []
    w.tally.judge(R.REJECTION_TEXT)
    variant = w.cfg.accept_variant and isinstance(text, str) and text.startswith(ev.REJECTION_VARIANT)
    if text == ev.REJECTION_TEXT or variant:
        return []
    return [R.REJECTION_TEXT.violated((e,), f"the rejection reads {text!r}, not {ev.REJECTION_TEXT!r}",
                                      observed=text, expected=ev.REJECTION_TEXT, parameter="SR-P20")]  # fmt: skip


_JUDGED = {ev.HARECEIVE: _hareceive, ev.RESUBMIT: _resubmit, ev.REJECT: _reject}
