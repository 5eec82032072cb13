"""The pf generator's layouts and canned scenarios that reach the backfill and schedule rules (issue 34).

Seeds 001 ("Default Replication Event Schedule", "Deleting a Replica") and 003 ("Backfill Time-outs",
"Selecting a Backfill Server", "Restoring from Backup"). Random steps alone rarely keep a store up over
several replication periods with changes to send, lose a backfill request, or leave two stores holding the
same missing changes; each scenario here builds one such situation on an existing folder, in a few calls:

- `schedule_watch`: changes made on one store every four minutes for 48 minutes, so its hierarchy and content
  broadcasts are observed over several periods (PF-023, PF-038);
- `source_tie`: A, then C, down while changes on B replicate to the other, then back: each backfill check
  chooses between two holders, which cost (from A), version (`LAYOUTS` "cost-vs-version", from C) or the order
  (layout "one-version", from C) decide (BF-011);
- `retry_after_timeout`: a gap revealed, then every message lost for 13 hours: the first backfill request
  is lost and the entry is retried after its retry time-out (BF-006, BF-007, BF-036);
- `pending_with_entries`: a replica with a filed backfill entry removed: delete pending drops its entries
  (BF-029, BF-I12), and its clients are redirected (BF-028);
- `restore_with_entries`: a store backed up while it has a filed backfill entry, then restored: the backup
  brings the backfill array back (BF-023, BF-024).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from model.kernel.sim import HOUR, MINUTE
from spec.catalogue import require

require("PF-023", "PF-038", "BF-006", "BF-007", "BF-011", "BF-029", "BF-024", "BF-036")

Call = dict[str, Any]
STORES = ["A", "B", "C"]
# (name, routing group, version) per store. "cost-vs-version": from A, B is cheaper and C newer (cost decides);
# from C, A and B cost the same and A is newer (version decides). "one-version": from C, A and B tie on cost
# and version (the count of missing changes, then the name, decide).
LAYOUTS: dict[str, list[tuple[str, str, str]]] = {
    "cost-vs-version": [("A", "rg0", "2003"), ("B", "rg0", "5.5"), ("C", "rg1", "2000")],
    "one-version": [("A", "rg0", "2003"), ("B", "rg0", "2003"), ("C", "rg1", "2003")],
}
SETTLE = 36 * HOUR  # long enough for a backfill entry's first retry (24 h remote) to be answered
SEEN = 13 * HOUR  # long enough for an entry's first request (12 h remote, 6 h local) to be answered
JOINED = HOUR  # long enough for new replicas to be created and answered (hierarchy mail, status)


def call(op: str, /, **args: Any) -> Call:
    """One protocol call of a step (`op` positional only: a call may have an argument `name`)."""
    return {"call": op, "args": args}


def other_than(store: str, wanted: str) -> str:
    """`wanted`, or the next store after `store` when they are the same."""
    return wanted if wanted != store else STORES[(STORES.index(store) + 1) % len(STORES)]


def everywhere(ref: dict[str, int], via: str) -> list[Call]:
    """A replica of the folder on every store (requests for stores already holding one are refused: harmless),
    then an hour for the new replicas to be created and to hear the others' CNSets (their backfill of older
    content may come later: the scenarios work on changes made after it)."""
    return [*(call("add_replica", fid=ref, server=x, via=via) for x in STORES if x != via), call("advance", ms=JOINED)]


def gap(ref: dict[str, int], source: str, loss: float) -> list[Call]:
    """A change on `source` whose mail is lost, then one that arrives: its CNSet reveals the gap to every other
    replica, which files a backfill entry (BF-005)."""
    return [
        call("set_loss", loss=1.0),
        call("post", store=source, fid=ref, size_kb=1),
        call("advance", ms=20 * MINUTE),
        call("set_loss", loss=loss),
        call("post", store=source, fid=ref, size_kb=1),
        call("advance", ms=20 * MINUTE),
    ]


def schedule_watch(ref: dict[str, int], via: str, store: str, loss: float) -> list[Call]:
    calls = everywhere(ref, via)
    for i in range(12):
        calls.append(call("post", store=store, fid=ref, size_kb=1))
        if i % 2 == 0:
            calls.append(call("modify_folder", via=store, fid=ref))
        calls.append(call("advance", ms=4 * MINUTE))
    return calls


def source_tie(ref: dict[str, int], via: str, store: str, loss: float) -> list[Call]:
    """A and C, one after the other (`store` C: C first), are down while two posts on B replicate to the other
    one, then back: each backfills from two holders. From A, B is cheaper than C (cost decides, in both
    layouts); from C, A and B cost the same and A is newer ("cost-vs-version": version decides) or they tie on
    both ("one-version": the order decides)."""
    calls = everywhere(ref, via)
    for behind in ("C", "A") if store == "C" else ("A", "C"):
        calls += [
            call("crash", store=behind),
            call("post", store="B", fid=ref, size_kb=1),
            call("post", store="B", fid=ref, size_kb=1),
            call("advance", ms=30 * MINUTE),
            call("restart", store=behind),
            call("advance", ms=SEEN),
        ]
    return calls


def retry_after_timeout(ref: dict[str, int], via: str, store: str, loss: float) -> list[Call]:
    source = other_than(store, "C" if store != "C" else "A")
    return [
        *everywhere(ref, via),
        *gap(ref, source, 0.0),
        call("set_loss", loss=1.0),
        call("advance", ms=13 * HOUR),
        call("set_loss", loss=loss),
        call("advance", ms=SETTLE),
    ]


def pending_with_entries(ref: dict[str, int], via: str, store: str, loss: float) -> list[Call]:
    source = other_than(store, "B" if store != "B" else "A")
    return [
        *everywhere(ref, via),
        *gap(ref, source, loss),
        call("remove_replica", fid=ref, server=store, via=store),
        call("client_access", store=store, fid=ref),  # a delete-pending replica redirects its clients (BF-028)
        call("advance", ms=2 * HOUR),
    ]


def restore_with_entries(ref: dict[str, int], via: str, store: str, loss: float) -> list[Call]:
    source = other_than(store, "B" if store != "B" else "C")
    return [
        *everywhere(ref, via),
        *gap(ref, source, loss),
        call("backup", store=store),
        call("advance", ms=10 * MINUTE),
        call("restore", store=store),
        call("advance", ms=SEEN),
    ]


def remove_two_at_once(ref: dict[str, int], first: str, server: str) -> list[Call]:
    """`PfDriver`'s step of that name (BF-I14): a replica added on `server`, posts, then the replicas on `first`
    (a holder) and `server` removed in one instant, each on its own store; an hour later one on the third."""
    second = other_than(first, server)
    third = next((x for x in STORES if x not in (first, second)), second)
    wait = call("advance", ms=20 * MINUTE)
    return [
        call("add_replica", fid=ref, server=second, via=first),
        wait,
        *[call("post", store=first, fid=ref, size_kb=5)] * 3,
        wait,
        call("remove_replica", fid=ref, server=first, via=first),
        call("remove_replica", fid=ref, server=second, via=second),
        call("advance", ms=HOUR),
        call("add_replica", fid=ref, server=third, via=first),
    ]


def lost_post(ref: dict[str, int], store: str, loss: float) -> list[Call]:
    """A post whose replication mail is lost (only backfill can repair it), then the loss as it was."""
    return [
        call("set_loss", loss=1.0),
        call("post", store=store, fid=ref, size_kb=1),
        call("advance", ms=20 * MINUTE),
        call("set_loss", loss=loss),
    ]


def backfill_twice(ref: dict[str, int], store: str, other: str, loss: float) -> list[Call]:
    """A replica added on `other`, then twice a lost post on `store` and 36 hours (BF-036)."""
    other = other_than(store, other)
    lost = [*lost_post(ref, store, loss), call("advance", ms=SETTLE)]
    return [call("add_replica", fid=ref, server=other, via=store), call("advance", ms=HOUR), *lost, *lost]


# the steps' docs, and whether each needs the setup's faults (a crash, lost mail, a restore)
SCENARIO_DOCS: dict[str, tuple[bool, str]] = {
    "schedule_watch": (
        False,
        "a replica on every store, then a post on `store` every 4 minutes for 48 minutes and a folder "
        "modification every 8: its broadcasts observed over several periods (PF-023, PF-038)",
    ),
    "source_tie": (
        True,
        "a replica on every store; A and C in turn (`store` C: C first) down while two posts on B replicate to the "
        "other, then back: each backfills from two holders, cost (from A), version or the order (from C, by the "
        "layout) deciding (BF-011)",
    ),
    "retry_after_timeout": (
        True,
        "a replica on every store; a lost post, then one that arrives (a backfill entry filed), then every "
        "message lost for 13 hours: the first backfill request is lost and retried after its time-out (BF-006)",
    ),
    "pending_with_entries": (
        True,
        "a replica on every store; a backfill entry filed on `store`, then its replica removed and a client of "
        "it redirected: delete pending with a filed entry (BF-029, BF-028)",
    ),
    "restore_with_entries": (
        True,
        "a replica on every store; a backfill entry filed on `store`, a backup, then a restore: the backfill "
        "array comes back with the backup (BF-024)",
    ),
}

SCENARIOS: dict[str, Callable[[dict[str, int], str, str, float], list[Call]]] = {
    "schedule_watch": schedule_watch,
    "source_tie": source_tie,
    "retry_after_timeout": retry_after_timeout,
    "pending_with_entries": pending_with_entries,
    "restore_with_entries": restore_with_entries,
}
