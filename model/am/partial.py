"""What the Active Manager monitor judges of a database whose DB_CREATE the trace lacks (issue 30, family 4).

The policy is TR-I01 (`spec/requirements/tr.toml`), the same for sr, am and pf: an entity whose beginning the
trace does not show is *partial*; the rules that need the beginning are not judged for it (its events are
counted in the notes with the reason, the verdict unknown when nothing else decides), and every rule that can be
judged from what was recorded is judged. For am the beginning of a database is its DB_CREATE (its copies,
activation preferences, DAG or standalone): the BCSS rules, the mount table, the copy states and the records
need it. Two rules need only what the trace shows (seed 002, "Active Manager"):

- one-active-copy (AM-009): a MOUNTED on one server while the trace showed the database MOUNTED on another
  with no DISMOUNTED of it since is two mounted copies, whatever came before the recording.
- only-pam-activates (AM-008): a BCSS_START (`pam`) or an ACTIVE_MOVE (`by`) from one copy to another made by a
  member of the recorded DAG view that is not the PAM: only the PAM chooses the copy to activate. (Judged only
  when the trace has a DAG view and the server is one of its members, and for a move between two copies: a
  standalone database has no PAM and no second copy.)
"""

from __future__ import annotations

from model.am import events as ev
from model.am import rules as R
from model.am.faults import check_attrs
from model.am.replay import Replay
from traces.schema import Event
from traces.verdict import InputFault


def judge(r: Replay, mounted: dict[str, set[str]], e: Event) -> None:
    """One event of database `e.entity`, whose DB_CREATE is not in the trace; `mounted`: for each such database,
    the servers the trace showed it mounted on (MOUNTED, no DISMOUNTED since). Violations go to the replay's."""
    kind = e.kind
    if kind not in _JUDGED:
        return
    try:
        check_attrs(e)
    except InputFault:
        return  # an unreadable event of a partial database: counted with the others in the notes, not judged
    a, tally = e.attrs, r.tally
    if kind == ev.MOUNTED:
        s, on = a["server"], mounted.setdefault(e.entity, set())
        tally.judge(R.ONE_ACTIVE_COPY)
        others = sorted(on - {s})
        if others:
            r.v(R.ONE_ACTIVE_COPY, e, f"{e.entity} is mounted on {s} while the trace shows it still mounted on "
                f"{', '.join(others)} (its DB_CREATE is not in the trace)", observed=[*others, s])  # fmt: skip
        on.add(s)
    elif kind == ev.DISMOUNTED:
        mounted.get(e.entity, set()).discard(a["server"])
    else:
        who = a.get("pam") if kind == ev.BCSS_START else a.get("by")
        if not r.w.members or who not in r.w.members:
            return
        if kind == ev.ACTIVE_MOVE and (a.get("src") is None or a.get("src") == a.get("dst")):
            return  # a first activation: the database may be a standalone one of a member (no PAM involved)
        tally.judge(R.ONLY_PAM_ACTIVATES)
        if not (who == r.w.pam and r.w.claims == {who}):
            what = "runs BCSS for" if kind == ev.BCSS_START else "moves the active copy of"
            r.v(R.ONLY_PAM_ACTIVATES, e, f"{who} {what} {e.entity} but the PAM is {r.w.pam or 'nobody'}: only "
                "the PAM chooses the copy to activate (its DB_CREATE is not in the trace)", observed=who,
                expected=r.w.pam)  # fmt: skip


_JUDGED = frozenset({ev.MOUNTED, ev.DISMOUNTED, ev.BCSS_START, ev.ACTIVE_MOVE})
