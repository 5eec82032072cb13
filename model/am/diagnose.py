"""Why a BCSS attempt is not one the seed allows: the most specific statement it breaks, in one sentence.

Seed 002, sections "Best Copy Selection" and "Best copy selection process". When a run tries a copy the
monitor did not allow next (`bcss.allowed_next`), the deviation is filed under the rule of the statement
that was broken, not under the general order rule (issue 24):

- the copy was already tried in this run: `next-best-copy` (AM-025 with AM-I12, "performs steps 3 and 4 on
  the next best copy");
- the copy was left out of the candidate list, blocked or unreachable: `never-blocked` (AM-034); outside the
  responder constraint: `responder-target` (AM-032);
- the copy is in the list at the same health tier and criteria set as the allowed one, but later by the sort
  keys: the sort rule of the mode the seed prescribes (`sort-copy-queue` AM-035, `sort-lossless-dial` AM-036,
  `sort-lossless-switchover` AM-037);
- otherwise (a later tier or criteria set, or a copy meeting no set): `selection-order` (AM-039).

Each message says why the allowed copies are allowed and why the excluded ones are excluded (blocked,
unreachable, over the dial, mount failed, which criteria set and tier).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from model.am import rules as R
from model.am.bcss import Choice, allowed_next
from model.am.state import LOSSLESS, Snapshot
from spec.catalogue import cite
from traces.verdict import Rule

cite("AM-025", "AM-032", "AM-034", "AM-035", "AM-036", "AM-037", "AM-039", "AM-I12", "AM-I16")


def sort_reason(rule: Rule, snap: Snapshot) -> str:
    """Why the sort statement `rule` (`bcss.sort_rule`'s decision for the run) applies, in one clause."""
    if rule is R.SORT_LOSSLESS_SWITCHOVER:
        return "a lossless switchover without a target orders the candidates by activation preference (AM-037)"
    if rule is R.SORT_LOSSLESS_DIAL:
        lossless = sorted(c.server for c in snap.copies if snap.dial(c.server) == LOSSLESS)
        return (
            f"{', '.join(lossless)} has its dial set to Lossless, so the candidates are ordered by activation "
            "preference (AM-036)"
        )
    return "no server of the database is Lossless, so the candidates are ordered by copy queue length (AM-035)"


def _excluded_reason(reason: str) -> str:
    return reason.replace(" (AM-034)", "").replace(" (AM-032)", "")


def context(
    expected: Sequence[Choice],
    excluded: Sequence[tuple[str, str]],
    refused: Mapping[str, str],
) -> str:
    """The allowed list with why each copy is where it is, then every excluded or refused copy and why."""
    parts = ["the seed's order allows: " + ("; ".join(c.why() for c in expected) or "no copy")]
    if excluded:
        parts.append("excluded: " + "; ".join(f"{s} {r}" for s, r in excluded))
    if refused:
        parts.append("refused in this run: " + "; ".join(f"{s} {r}" for s, r in sorted(refused.items())))
    return "; ".join(parts)


def deviation(
    s: str,
    attempt: int,
    expected: Sequence[Choice],
    tried: Collection[str],
    excluded: Sequence[tuple[str, str]],
    refused: Mapping[str, str],
    snap: Snapshot,
    sort: Rule,
) -> tuple[Rule, str]:
    """(rule, sentence) for an attempt of `s` that `allowed_next(expected, tried)` does not allow; `sort` is the
    sort statement that applies to the run (`bcss.sort_rule`, decided once per run)."""
    allowed = allowed_next(expected, tried)
    want = " or ".join(c.server for c in allowed) or "no further copy"
    tail = context(expected, excluded, refused)
    if s in tried:
        why = refused.get(s, "was tried")
        return (
            R.NEXT_BEST_COPY,
            f"attempt {attempt} of this BCSS run is {s} again, which {why} earlier in the run: after a copy "
            f"does not mount or is over the dial, the PAM goes on with the next best copy, each copy at most "
            f"once per run (AM-I12); next allowed: {want}; {tail}",
        )
    out = dict(excluded)
    if s in out:
        reason = _excluded_reason(out[s])
        rule = R.RESPONDER_TARGET if "(AM-032)" in out[s] else R.NEVER_BLOCKED
        if "AM-050" in out[s] or "health tier" in out[s]:
            rule = R.SELECTION_ORDER
        return rule, f"attempt {attempt} of this BCSS run is {s}, which is {reason} and so not a candidate; {tail}"
    chosen = next((c for c in expected if c.server == s), None)
    if chosen is None:
        return R.SELECTION_ORDER, f"attempt {attempt} of this BCSS run is {s}, which holds no copy judged; {tail}"
    first = allowed[0] if allowed else None
    if first is not None and chosen.key[:2] == first.key[:2]:
        return (
            sort,
            f"attempt {attempt} of this BCSS run is {s} (copy queue {chosen.copy_queue}, preference "
            f"{chosen.preference}) but {want} comes first at the same health tier {chosen.tier} and criteria set "
            f"{chosen.criteria_set}: {sort_reason(sort, snap)}; {tail}",
        )
    return (
        R.SELECTION_ORDER,
        f"attempt {attempt} of this BCSS run is {s} (tier {chosen.tier}, criteria set {chosen.criteria_set}) but "
        f"{want} comes first: a criteria set is consulted only when no copy met an earlier one, tiers in order "
        f"(AM-027, AM-039); {tail}",
    )
