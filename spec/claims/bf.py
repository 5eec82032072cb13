"""Ordering and timing claims of backfill (seed 003_e3b4488f2fd47eb9.txt; also 001 "Backfill Array" and
"Default Replication Event Schedule").

The time-out ladder (initial, first retry, later retries; local and remote routing group), the check
granularity of the backfill array (entries are examined every ReplicationTimeout), the seed's worked
examples ("within five minutes", "waits 24 hours"), and the backfill source sort order (status,
preferred server, transport cost, version, number of available changes).
"""

from __future__ import annotations

import itertools

import z3

from spec.claims.engine import HOUR_MS, Claim, Env, Problem
from spec.claims.ids import BF_IDS

RUNGS = ("Initial", "FirstRetry", "LaterRetry")
# Seed 003, "Example Replication Cycles", add-replica step 10: "ExServ01 waits 24 hours" (a statement of
# the seed under test, not a parameter default).
EXAMPLE_WAIT_MS = 24 * HOUR_MS


def _ladder(*, defaults: bool) -> Problem:
    e = Env()
    local = [e.param(f"Backfill{r}Local", default=defaults) for r in RUNGS]
    remote = [e.param(f"Backfill{r}Remote", default=defaults) for r in RUNGS]
    goal = z3.And(
        *(a < b for side in (local, remote) for a, b in itertools.pairwise(side)),
        *(lo < hi for lo, hi in zip(local, remote, strict=True)),
    )
    return e.problem(goal)


def _request_time(e: Env, filed: z3.ArithRef, timeout: z3.ArithRef) -> z3.ArithRef:
    """The request goes out at the first backfill-array check at or after the entry's time-out."""
    period = e.param("ReplicationTimeout")
    offset = e.time("array_check.offset")
    e.assume("check offset within one period", z3.And(offset >= 0, offset < period))
    sent = e.grid("backfill_request_sent", offset, period)
    e.assume(
        "the request goes at the first check at or after the time-out",
        z3.And(sent >= filed + timeout, sent - period < filed + timeout),
    )
    return sent


def _initial_request(goal: str, *, aligned: bool = False, timeout: str = "BackfillInitialLocal") -> Problem:
    e = Env()
    initial, period = e.param(timeout), e.param("ReplicationTimeout")
    filed = e.at("entry_filed")
    sent = _request_time(e, filed, initial)
    if aligned:
        e.assume("(strengthened) the time-out falls on a check", z3.Int("array_check.offset") == 0)
        e.assume("(strengthened) entries are filed on a check", filed == e.grid("filed_check", 0, period))
    delay = sent - filed
    e.show("delay", delay)
    bound = {
        "stated": delay == initial,
        "repaired": z3.And(delay >= initial, delay < initial + period),
        "tight": delay < initial + period - 1,
    }[goal]
    return e.problem(bound)


def _within_five_minutes(*, ladder: bool) -> Problem:
    """Remove-replica step 6 (seed 003): ExServ02 files entries on the status message and 'within five
    minutes' (one ReplicationTimeout check period) sends the backfill request. The catalogue's reading
    (BF-I02) files changes held by a delete-pending replica with BackfillDeletePendingDelay; the twin
    applies the ordinary ladder instead."""
    e = Env()
    period = e.param("ReplicationTimeout")
    delay = e.param("BackfillInitialLocal" if ladder else "BackfillDeletePendingDelay")
    filed = e.at("status_message_received")
    sent = _request_time(e, filed, delay)
    e.show("delay", sent - filed)
    return e.problem(sent - filed < period)


SERVERS = 3  # backfill sources each holding part of the missing changes


def _parallel_requests(*, sequential: bool) -> Problem:
    """BF-017: once the initial time-out expires, requests go to every needed server together; earlier
    versions asked one server at a time and waited a retry time-out in between."""
    e = Env()
    initial, period = e.param("BackfillInitialLocal"), e.param("ReplicationTimeout")
    retry = e.param("BackfillLaterRetryLocal")
    filed = e.at("entry_filed")
    first = _request_time(e, filed, initial)
    sent = [first] + [e.time(f"request{i}_sent") for i in range(1, SERVERS)]
    for i in range(1, SERVERS):
        if sequential:
            e.assume(f"(earlier versions) request {i} waits a retry time-out", sent[i] >= sent[i - 1] + retry)
        else:
            e.assume(f"request {i} goes with the first", sent[i] == first)
    return e.problem(z3.And(*(z3.And(t >= filed + initial, t < filed + initial + period) for t in sent)))


def _retry_wait(*, remote_only: bool) -> Problem:
    e = Env()
    first_local, first_remote = e.param("BackfillFirstRetryLocal"), e.param("BackfillFirstRetryRemote")
    remote = e.bool("source_in_remote_routing_group")
    if remote_only:
        e.assume("the two servers are in different routing groups", remote)
    first, second = e.at("first_request"), e.time("second_request")
    e.assume(
        "the second request follows the first after the first-retry time-out",
        second == first + z3.If(remote, first_remote, first_local),
    )
    return e.problem(second - first == EXAMPLE_WAIT_MS)


# --- backfill source sort order ----------------------------------------------------------------------

FIELDS = ("down", "preferred", "cost", "version", "changes")


def _server(e: Env, name: str) -> dict[str, z3.ExprRef]:
    s = {
        "down": e.bool(f"{name}.down"),
        "preferred": e.bool(f"{name}.preferred"),
        "cost": e.int(f"{name}.transport_cost"),
        "version": e.int(f"{name}.version"),
        "changes": e.int(f"{name}.available_changes"),
    }
    e.assume(
        f"{name}: cost non-negative and some needed changes available (others are dropped)",
        z3.And(s["cost"] >= 0, s["changes"] >= 1),
    )
    return s


def _key(s: dict[str, z3.ExprRef], order: tuple[str, ...]) -> list[z3.ArithRef]:
    value = {
        "down": z3.If(s["down"], 1, 0),
        "preferred": z3.If(s["preferred"], 0, 1),
        "cost": s["cost"],
        "version": -s["version"],
        "changes": -s["changes"],
    }
    return [value[f] for f in order]


def lex_less(a: list[z3.ArithRef], b: list[z3.ArithRef]) -> z3.BoolRef:
    """Strict lexicographic order on integer keys (smaller sorts first)."""
    if not a:
        return z3.BoolVal(False)
    return z3.Or(a[0] < b[0], z3.And(a[0] == b[0], lex_less(a[1:], b[1:])))


def _sort_claim(claim: str, order: tuple[str, ...]) -> Problem:
    e = Env()
    a, b = _server(e, "a"), _server(e, "b")
    if claim == "down_last":
        e.assume("a is up, b is down", z3.And(z3.Not(a["down"]), b["down"]))
        return e.problem(lex_less(_key(a, order), _key(b, order)))
    if claim == "preferred_first":
        e.assume("b is the preferred backfill server, a is not", z3.And(b["preferred"], z3.Not(a["preferred"])))
        return e.problem(lex_less(_key(b, order), _key(a, order)))
    other = {"cost_over_version": "version", "cost_over_count": "changes"}[claim]
    e.assume("both up, same preferred status", z3.And(a["down"] == b["down"], a["preferred"] == b["preferred"]))
    e.assume("a has the lower transport cost", a["cost"] < b["cost"])
    e.assume(f"b is better on {other}", b[other] > a[other])
    return e.problem(lex_less(_key(a, order), _key(b, order)))


SEED_ORDER = FIELDS  # seed 003: status, preferred, transport cost, version (newest first), changes (most first)
VERSION_FIRST = ("down", "preferred", "version", "cost", "changes")
COUNT_FIRST = ("down", "preferred", "changes", "cost", "version")


def claims() -> list[Claim]:
    ids = BF_IDS
    return [
        Claim(
            "bf.timeout_ladder",
            ids["ladder"],
            "Backfill time-outs grow along the ladder (initial < first retry < later retries) on each side, "
            "and the "
            "remote routing group's are longer than the local ones.",
            lambda: _ladder(defaults=True),
            "proved",
            "Weakened (only the catalogue ranges): the ladder can be configured out of order.",
            lambda: _ladder(defaults=False),
        ),
        Claim(
            "bf.initial_request.as_stated",
            ids["request_tick"],
            "The backfill request is issued exactly when the entry times out (BackfillInitialLocal after filing).",
            lambda: _initial_request("stated"),
            "refuted",
            "When entries are filed on a check and the time-out falls on a check, it holds.",
            lambda: _initial_request("stated", aligned=True),
            finding="The backfill array is only examined every ReplicationTimeout, so the request can go "
            "out up to "
            "one check period late. Repaired: bf.initial_request.repaired.",
        ),
        Claim(
            "bf.initial_request.repaired",
            ids["request_tick"],
            "The backfill request is issued at least BackfillInitialLocal and less than "
            "BackfillInitialLocal + "
            "ReplicationTimeout after the entry is filed.",
            lambda: _initial_request("repaired"),
            "proved",
            "Tight: the upper bound cannot be lowered by 1 ms.",
            lambda: _initial_request("tight"),
            repairs="bf.initial_request.as_stated",
        ),
        Claim(
            "bf.new_replica_request",
            ids["new_replica"],
            "A new replica whose data is on the same site sends its backfill request at least "
            "BackfillNewReplicaDelay and less than BackfillNewReplicaDelay + ReplicationTimeout after the "
            "entry.",
            lambda: _initial_request("repaired", timeout="BackfillNewReplicaDelay"),
            "proved",
            "Tight: the upper bound cannot be lowered by 1 ms.",
            lambda: _initial_request("tight", timeout="BackfillNewReplicaDelay"),
        ),
        Claim(
            "bf.remove_replica.within_five_minutes",
            ids["within_five_minutes"],
            "Removing a replica (003, step 6): after the status message the backfill request follows within "
            "five minutes (one ReplicationTimeout period), reading BF-I02 (BackfillDeletePendingDelay).",
            lambda: _within_five_minutes(ladder=False),
            "proved",
            "Under the ordinary time-out ladder (initial local time-out) the request waits hours, not minutes.",
            lambda: _within_five_minutes(ladder=True),
            finding="As written, seed 003's 'within five minutes' contradicts the ladder of the same seed "
            "(an entry "
            "waits its initial time-out, 6 h locally); it holds only with the catalogue's reading BF-I02, "
            "which files changes held by a delete-pending replica with a zero delay.",
        ),
        Claim(
            "bf.parallel_requests",
            ids["parallel"],
            f"Once the initial time-out expires, the requests to all {SERVERS} servers holding parts of the "
            f"missing "
            "changes go out together, within one ReplicationTimeout check.",
            lambda: _parallel_requests(sequential=False),
            "proved",
            "Under earlier versions' one-server-at-a-time behaviour (a retry time-out between requests) it fails.",
            lambda: _parallel_requests(sequential=True),
        ),
        Claim(
            "bf.add_replica.retry_after_24h",
            ids["example_24h"],
            "Adding a replica (003, step 10): if changes are still missing the server waits 24 hours and "
            "sends an "
            "updated backfill request.",
            lambda: _retry_wait(remote_only=False),
            "refuted",
            "Between servers in different routing groups the first retry does come 24 hours later.",
            lambda: _retry_wait(remote_only=True),
            finding="Holds only for the remote routing group: locally the first retry comes after "
            "BackfillFirstRetryLocal (12 h by default); 24 h is the local later-retry value.",
        ),
        Claim(
            "bf.sort.cost_over_version",
            ids["cost_over_version"],
            "Backfill source selection: a server with a lower transport cost comes first even if the other "
            "runs a "
            "newer version.",
            lambda: _sort_claim("cost_over_version", SEED_ORDER),
            "proved",
            "Under the previous versions' order (version before cost) it fails.",
            lambda: _sort_claim("cost_over_version", VERSION_FIRST),
        ),
        Claim(
            "bf.sort.cost_over_count",
            ids["cost_over_count"],
            "Backfill source selection: a server with a lower transport cost comes first even if the other "
            "holds "
            "more of the missing changes.",
            lambda: _sort_claim("cost_over_count", SEED_ORDER),
            "proved",
            "Under the previous versions' order (servers with more updates first) it fails.",
            lambda: _sort_claim("cost_over_count", COUNT_FIRST),
        ),
        Claim(
            "bf.sort.down_last",
            ids["down_last"],
            "Backfill source selection: servers that are down drop behind every server that is up.",
            lambda: _sort_claim("down_last", SEED_ORDER),
            "proved",
            "Too strong: 'the preferred backfill server always comes first' fails when it is down.",
            lambda: _sort_claim("preferred_first", SEED_ORDER),
        ),
    ]
