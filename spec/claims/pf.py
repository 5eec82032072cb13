"""Ordering and timing claims of public folder replication (seed 001_171cc7041818ad72.txt, and its
translation 004_edc18663c15e61b0.txt).

Sections: "Replication Status" and "Replication Status Thread" (a status message at most 36 hours after
the last change), "Adding a Replica" (steps 1 and 2 in either order) and "Deleting a Replica" (delete now
only after a confirming status message). The status thread runs at `offset + period * k` milliseconds
after midnight GMT (the Unix epoch is a midnight GMT), so the schedule stays linear.
"""

from __future__ import annotations

import z3

from spec.catalogue import param_ms
from spec.claims.engine import HOUR_MS, MINUTE_MS, Claim, Env, Problem
from spec.claims.ids import PF_IDS

CHANGES = 6  # change numbers modelled in a CNSet (bit i = change i present)
ROUNDS = 3  # status request / status message rounds of a delete


def _status_message_broadcast_anchor(*, extra: str | None) -> Problem:
    """PF-P12 = last_broadcast: the expiry starts at the folder's next regular content broadcast (the
    first ReplicationSendAlways event at or after the change), not at the change itself."""
    e = Env()
    timeout, always = e.param("ReplicationSendStatusTimeout"), e.param("ReplicationSendAlways")
    period, offset = e.param("ReplicationStatusThreadPeriod"), e.param("ReplicationStatusThreadOffset")
    change = e.at("last_change")
    b_offset = e.time("content_event.offset")
    e.assume("content event offset within one period", z3.And(b_offset >= 0, b_offset < always))
    broadcast = e.grid("regular_broadcast", b_offset, always)
    e.assume(
        "the broadcast is the first content event at or after the change",
        z3.And(broadcast >= change, broadcast - always < change),
    )
    thread = e.grid("status_thread_run", offset, period)
    e.assume(
        "the thread run is the first at or after the expiry",
        z3.And(thread >= broadcast + timeout, thread - period < broadcast + timeout),
    )
    delay = thread - change
    e.show("delay", delay)
    e.prefer_small(-delay)
    return e.problem(delay <= timeout + period + (always if extra else 0))


def _status_message(*, slack_ms: int = 0) -> Problem:
    """A folder last changed at `last_change`; its status expiry is set to last_change + timeout; the
    status thread generates the message at its first run at or after the expiry."""
    e = Env()
    timeout = e.param("ReplicationSendStatusTimeout")
    period = e.param("ReplicationStatusThreadPeriod")
    offset = e.param("ReplicationStatusThreadOffset")
    change = e.at("last_change")
    thread = e.grid("status_thread_run", offset, period)
    e.assume(
        "the thread run is the first at or after the expiry",
        z3.And(thread >= change + timeout, thread - period < change + timeout),
    )
    delay = thread - change
    e.show("delay", delay)
    return e.problem(z3.And(delay >= timeout, delay <= timeout + period - slack_ms))


def _broadcast(period_param: str, *, slack_ms: int = 0) -> Problem:
    """PF-023: an update is broadcast at the first replication event (a tick of the polling timer) at or
    after it is made."""
    e = Env()
    period = e.param(period_param)
    change = e.at("update_made")
    offset = e.time("replication_event.offset")
    e.assume("timer offset within one period", z3.And(offset >= 0, offset < period))
    event = e.grid("replication_event", offset, period)
    e.assume(
        "the broadcast is the first replication event at or after the update",
        z3.And(event >= change, event - period < change),
    )
    e.show("delay", event - change)
    return e.problem(event - change < period - slack_ms)


def _expiry_reset(*, short_gaps: bool) -> Problem:
    """PF-029: each local change resets the folder's status expiry to ReplicationSendStatusTimeout later.
    Three changes; a status thread run between the first and the last generates a message only if the
    expiry of the latest change before it has passed."""
    e = Env()
    timeout = e.param("ReplicationSendStatusTimeout")
    period, offset = e.param("ReplicationStatusThreadPeriod"), e.param("ReplicationStatusThreadOffset")
    c = [e.at(f"change{i}") for i in range(3)]
    e.assume("changes in order", z3.And(c[0] < c[1], c[1] < c[2]))
    if short_gaps:
        e.assume("changes come less than the timeout apart", z3.And(c[1] - c[0] < timeout, c[2] - c[1] < timeout))
    run = e.grid("status_thread_run", offset, period)
    e.assume("the run falls between the first and last change", z3.And(run > c[0], run < c[2]))
    latest = z3.If(run > c[1], c[1], c[0])
    sent = e.bool("status_message_generated")
    e.assume(
        "a status message is generated iff the expiry of the latest change has passed",
        sent == (run >= latest + timeout),
    )
    return e.problem(z3.Not(sent))


def _replica_add(*, admin_on_content_replica: bool | None) -> Problem:
    """Step 1: the server where the administrator made the change sends the hierarchy message on its next
    hierarchy replication tick. Step 2: the new replica's server sends its status request as soon as it
    knows it holds the replica (on the change if the change was made there, else on the hierarchy
    message's arrival)."""
    e = Env()
    tree = e.param("ReplicationSendFolderTree")
    change = e.at("admin_change")
    on_content = e.bool("admin_on_content_replica_server")
    if admin_on_content_replica is not None:
        e.assume("where the administrator made the change", on_content == admin_on_content_replica)
    offset = e.time("hierarchy_tick.offset")
    e.assume("hierarchy tick offset within one period", z3.And(offset >= 0, offset < tree))
    step1 = e.grid("step1_hierarchy_message", offset, tree)
    e.assume(
        "step 1 is the first hierarchy tick at or after the change",
        z3.And(step1 >= change, step1 - tree < change),
    )
    latency = e.time("mail_latency")
    e.assume("replication mail takes a non-negative time", latency >= 0)
    step2 = e.time("step2_status_request")
    e.assume(
        "step 2 follows the moment the new replica's server learns of the change",
        z3.If(on_content, step2 >= step1 + latency, step2 >= change),
    )
    return e.problem(step1 <= step2)


def _replica_delete(*, confirming_only: bool) -> Problem:
    """Seed 001 "Deleting a Replica", steps 3-5: the delete-pending replica (CNSet `deleted`) sends status
    requests, one round at a time, up to ROUNDS rounds; round `last` is the one after which it moves to
    delete now. The rule: it continues while the answer is not at least as current, and stops on an answer
    that is. The claim (BF-032, BF-033): delete now follows a confirming status message received after the
    removal, so every change of the deleted replica is held by a remaining replica."""
    e = Env()
    bv = lambda n: z3.BitVec(n, CHANGES)  # noqa: E731
    deleted, remaining = bv("cnset.deleted"), bv("cnset.remaining_union")
    e.show("cnset.deleted", deleted)
    e.show("cnset.remaining_union", remaining)
    removed, delete_now, last = e.at("removed_from_replica_list"), e.time("delete_now"), e.int("last_round")
    e.assume("some round is the last", z3.And(last >= 0, last < ROUNDS))
    previous_answer = removed
    confirmed = []
    for j in range(ROUNDS):
        req, ans, answer = e.time(f"round{j}.status_request"), e.time(f"round{j}.status_message"), bv(f"round{j}.cnset")
        e.show(f"round{j}.cnset", answer)
        e.assume(
            f"round {j}: request after the previous answer (or the removal), answer after the request",
            z3.And(req > previous_answer, ans > req),
        )
        e.assume(f"round {j}: the answering replica remains and keeps its changes", answer & remaining == answer)
        ok = answer & deleted == deleted
        if confirming_only:
            e.assume(
                f"round {j}: continue while not confirmed, stop once confirmed",
                z3.If(j < last, z3.Not(ok), z3.Implies(last == j, ok)),
            )
        e.assume(f"round {j}: delete now follows the last round's answer", z3.Implies(last == j, delete_now > ans))
        confirmed.append(z3.And(j <= last, ok, ans < delete_now, ans > removed))
        previous_answer = ans
    no_loss = deleted & remaining == deleted
    return e.problem(z3.And(z3.Or(confirmed), no_loss))


def claims() -> list[Claim]:
    bound = f"{(param_ms('ReplicationSendStatusTimeout') + param_ms('ReplicationStatusThreadPeriod')) // HOUR_MS} h"
    return [
        Claim(
            "pf.status_message_36h",
            PF_IDS["status_36h"],
            "A status message is generated no earlier than ReplicationSendStatusTimeout and at most "
            f"ReplicationSendStatusTimeout + the status thread period ({bound} by default) after the last "
            f"change.",
            lambda: _status_message(),
            "proved",
            "Tight: the upper bound cannot be lowered by one minute (a change just after a thread run).",
            lambda: _status_message(slack_ms=MINUTE_MS),
        ),
        Claim(
            "pf.status_message_36h.broadcast_anchor",
            PF_IDS["status_36h"],
            "Reading the expiry as starting at the last regular broadcast (StatusExpiryAnchor = "
            "last_broadcast), "
            f"a status message still comes at most {bound} after the last change.",
            lambda: _status_message_broadcast_anchor(extra=None),
            "refuted",
            "Repaired for that reading: at most the bound plus ReplicationSendAlways.",
            lambda: _status_message_broadcast_anchor(extra="ReplicationSendAlways"),
            finding="Under the alternative anchor of PF-I02 (Replication Process: '24 hours after the last "
            "regular "
            "replication broadcast') the seed's 36 hours is exceeded by up to one content replication "
            "interval; "
            "the catalogue's default anchor (the last local change) keeps the bound.",
        ),
        Claim(
            "pf.status_expiry_reset",
            PF_IDS["expiry_reset"],
            "While a folder keeps changing at intervals shorter than ReplicationSendStatusTimeout, no status "
            "message is generated for it.",
            lambda: _expiry_reset(short_gaps=True),
            "proved",
            "With a gap longer than the timeout between changes, a status message is generated in between.",
            lambda: _expiry_reset(short_gaps=False),
        ),
        Claim(
            "pf.hierarchy_broadcast_within_period",
            PF_IDS["broadcast"],
            "A hierarchy change is broadcast less than ReplicationSendFolderTree after it is made.",
            lambda: _broadcast("ReplicationSendFolderTree"),
            "proved",
            "Tight: the bound cannot be lowered by 1 ms.",
            lambda: _broadcast("ReplicationSendFolderTree", slack_ms=1),
        ),
        Claim(
            "pf.content_broadcast_within_period",
            PF_IDS["broadcast"],
            "A content change is broadcast less than ReplicationSendAlways after it is made.",
            lambda: _broadcast("ReplicationSendAlways"),
            "proved",
            "Tight: the bound cannot be lowered by 1 ms.",
            lambda: _broadcast("ReplicationSendAlways", slack_ms=1),
        ),
        Claim(
            "pf.replica_add.step1_before_step2",
            PF_IDS["replica_add"],
            "Adding a replica: the hierarchy message (step 1) always precedes the new server's status "
            "request (step 2).",
            lambda: _replica_add(admin_on_content_replica=None),
            "refuted",
            "When the administrator makes the change on a server with a content replica, step 1 precedes step 2.",
            lambda: _replica_add(admin_on_content_replica=True),
            finding="As the seed itself says, the order of steps 1 and 2 depends on where the change is "
            "made: on the "
            "new replica's server the status request can go out before the next hierarchy tick.",
        ),
        Claim(
            "pf.replica_delete.confirm_before_delete_now",
            PF_IDS["replica_delete"],
            "Deleting a replica: delete now comes only after a status message showing a replica at least as "
            "current, "
            "so no change is lost.",
            lambda: _replica_delete(confirming_only=True),
            "proved",
            "Weakened (delete now after any status message): a change held only by the deleted replica is lost.",
            lambda: _replica_delete(confirming_only=False),
        ),
    ]
