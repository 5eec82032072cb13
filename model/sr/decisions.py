"""Pure decisions of shadow redundancy: where to put the shadow, what to do on failure, when to promote.

Seed 000, "How shadow messages are created" and "SMTP timeouts" (SR-044..SR-048, SR-016, SR-029), "How
shadow messages are maintained" (SR-058, SR-059, SR-062, SR-063), "Messages sent outside a transport high
availability boundary" and the Exchange 2010 section (SR-033, SR-038). The simulator calls these to
choose; `rules.py` folds the recorded events and checks them. No I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from model.sr.state import MAILBOX_KINDS, fork_kind


def attempt_plan(
    preference: str,
    in_dag: bool,
    multi_site: bool,
    max_remote: int,
    max_local: int,
    meaning: str = "attempts",
) -> tuple[str, ...]:
    """Site class ("remote"/"local") of each allowed shadow attempt, in order (SR-044..SR-047, SR-I03).

    Only a DAG spanning sites uses ShadowMessagePreference; elsewhere only local attempts (SR-047, SR-029).
    """
    extra = 1 if meaning == "retries" else 0
    remote = ("remote",) * (max_remote + extra)
    local = ("local",) * (max_local + extra)
    if not (in_dag and multi_site):
        return local
    return {"PreferRemote": remote + local, "RemoteOnly": remote, "LocalOnly": local}[preference]


def shadow_candidates(
    primary: str, site_class: str, members: Mapping[str, tuple[str, str, str]], usable: Callable[[str], bool]
) -> list[str]:
    """Servers that may hold the shadow: same boundary, Exchange 2013, not the primary, in the site
    class asked for, and currently usable (SR-014, SR-015, SR-029). `members` maps server -> (boundary,
    site, version)."""
    boundary, site, _ = members[primary]
    out = []
    for name in sorted(members):
        b, s, version = members[name]
        if name == primary or b != boundary or version != "2013" or not usable(name):
            continue
        if (site_class == "remote") == (s != site):
            out.append(name)
    return out


def failure_outcome(reject: bool) -> str:
    """What happens when no shadow can be made (SR-019, SR-040, SR-048)."""
    return "rejected" if reject else "accepted"


def promotion_reason(
    now_ms: int, last_contact_ms: int, resubmit_ms: int, original_db: str, observed_db: str | None
) -> str:
    """Why a shadow server should take ownership now, or "" (SR-058, SR-059, SR-I06, SR-I11).

    `observed_db` is the primary's database ID seen in a successful session, None when unreachable."""
    if observed_db is not None:
        return "database_id" if observed_db != original_db else ""
    return "resubmit_timespan" if now_ms - last_contact_ms >= resubmit_ms else ""


def safetynet_may_resubmit(fork: str) -> bool:
    """Safety Net resubmits only to Exchange mailboxes inside the boundary (SR-033, SR-038)."""
    return fork_kind(fork) in MAILBOX_KINDS


def release_ready(forks: tuple[str, ...], notified: frozenset[str]) -> bool:
    """The shadow may be released only once every fork is known to be processed (SR-062, SR-063)."""
    return notified.issuperset(forks)
