"""Hand-built public folder traces with known verdicts, one or more per rule family.

Each entry of `CASES` is (name, events, expected rules): an empty set means the trace is conformant
(including traces that make an allowed choice the model would not make). Written from the seeds
(001 "Adding a Replica", "Deleting a Replica"; 003 "Backfill Requests and Backfill Messages"), not
derived from the model's mutants.
"""

from __future__ import annotations

from tests.handbuilt.pf.builder import Step, build, change, mount, recv, send, without
from traces.schema import Event

F = "1-100"
HIER, CONTENT, BREQ, STATUS, SREQ, BRESP = 0x2, 0x4, 0x8, 0x10, 0x20, 0x80000004


def add_replica_steps() -> list[Step]:
    """Seed 001 "Adding a Replica": F on A; B added; B's status request; A's status; B files an entry,
    which A's regular broadcast then fills (BF-004); a client served on B, one redirected from C."""
    return [
        *mount(0, "A", "B", "C"),
        (0, "A", F, "FOLDER_CREATE", {"name": "Sales", "tree": "IPM", "replicating": True}),
        change(0, "A", "1-1", "A#0:1", "create", F, "Sales"),
        change(0, "A", "1-1", "A#0:2", "replica", F, "A:active"),
        (0, "A", F, "REPLICA_CREATE", {"origin": "A#0", "new": True}),
        (0, "A", F, "REPLICA_VIEW", {"replicas": ["A=active"]}),
        send(1, "A", "1-1", "h1", HIER, ["B", "C"], ["A#0:1-2"], ["A#0:1", "A#0:2"]),
        recv(2, "B", "1-1", "h1"),
        recv(2, "C", "1-1", "h1"),
        change(2, "A", "1-1", "A#0:3", "replica", F, "B:active"),
        change(3, "A", F, "A#0:4", "post"),
        send(6, "A", "1-1", "h2", HIER, ["B", "C"], ["A#0:1-3"], ["A#0:3"]),
        recv(7, "B", "1-1", "h2"),
        (7, "B", F, "REPLICA_CREATE", {"origin": "B#0", "new": True}),
        send(7, "B", F, "s1", SREQ, ["A"], [], reason="status_request"),
        recv(7, "C", "1-1", "h2"),
        recv(8, "A", F, "s1"),
        send(8, "A", F, "st1", STATUS, ["B"], ["A#0:4"], reply_to="s1", reason="status_reply"),
        recv(9, "B", F, "st1"),
        (
            9,
            "B",
            F,
            "BACKFILL_FILE",
            {"cns": ["A#0:4"], "due_ms": build("x", [])[0].ts_ms + 24 * 60_000, "local": True},
        ),
        send(10, "A", F, "c1", CONTENT, ["B"], ["A#0:4"], ["A#0:4"]),
        recv(11, "B", F, "c1"),
        (12, "B", F, "CLIENT_ACCESS", {"outcome": "served", "target": "B"}),
        (12, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


def delete_replica_steps() -> list[Step]:
    """Seed 001 "Deleting a Replica" after the add: B removed; the hierarchy tells B; B asks for status
    (requires a response); A answers; B goes to delete now, is removed and announces it."""
    return [
        *add_replica_steps(),
        change(13, "A", "1-1", "A#0:5", "replica", F, "B:delete_pending"),
        send(15, "A", "1-1", "h3", HIER, ["B", "C"], ["A#0:1-3,5"], ["A#0:5"]),
        recv(16, "B", "1-1", "h3"),
        (16, "B", F, "DELETE_PENDING", {}),
        send(17, "B", F, "s2", SREQ, ["A"], ["A#0:4"], requires_response=True, reason="status_request"),
        recv(18, "A", F, "s2"),
        send(18, "A", F, "st2", STATUS, ["B"], ["A#0:4"], reply_to="s2", reason="status_reply"),
        recv(19, "B", F, "st2"),
        (19, "B", F, "DELETE_NOW", {"by": "A", "cnset": ["A#0:4"]}),
        (22, "B", F, "REPLICA_REMOVED", {}),
        change(22, "B", "1-1", "B#0:1", "replica", F, "B:removed"),
        send(24, "B", "1-1", "h4", HIER, ["A", "C"], ["A#0:1-3,5", "B#0:1"], ["B#0:1"]),
        recv(25, "A", "1-1", "h4"),
    ]


def backfill_steps() -> list[Step]:
    """Seed 003: F on A and C, both holding A#0:4; B added; both answer its status request; at the
    time-out B asks C (tied with A on all five keys: an allowed choice the model's name order would not
    make); C answers."""
    return [
        *mount(0, "A", "B", "C"),
        (0, "A", F, "FOLDER_CREATE", {"name": "Sales", "tree": "IPM", "replicating": True}),
        change(0, "A", "1-1", "A#0:1", "create", F, "Sales"),
        change(0, "A", "1-1", "A#0:2", "replica", F, "A:active"),
        (0, "A", F, "REPLICA_CREATE", {"origin": "A#0", "new": True}),
        change(0, "A", "1-1", "A#0:3", "replica", F, "C:active"),
        send(1, "A", "1-1", "h1", HIER, ["B", "C"], ["A#0:1-3"], ["A#0:1", "A#0:2", "A#0:3"]),
        recv(2, "B", "1-1", "h1"),
        recv(2, "C", "1-1", "h1"),
        (2, "C", F, "REPLICA_CREATE", {"origin": "C#0", "new": True}),
        send(2, "C", F, "s1", SREQ, ["A"], [], reason="status_request"),
        recv(3, "A", F, "s1"),
        change(4, "A", F, "A#0:4", "post"),
        send(5, "A", F, "c1", CONTENT, ["C"], ["A#0:4"], ["A#0:4"]),
        recv(6, "C", F, "c1"),
        change(7, "A", "1-1", "A#0:5", "replica", F, "B:active"),
        send(10, "A", "1-1", "h2", HIER, ["B", "C"], ["A#0:1-3,5"], ["A#0:5"]),
        recv(11, "B", "1-1", "h2"),
        (11, "B", F, "REPLICA_CREATE", {"origin": "B#0", "new": True}),
        send(11, "B", F, "s2", SREQ, ["A", "C"], [], reason="status_request"),
        recv(11, "C", "1-1", "h2"),
        recv(12, "A", F, "s2"),
        send(12, "A", F, "st1", STATUS, ["B"], ["A#0:4"], reply_to="s2", reason="status_reply"),
        recv(12, "C", F, "s2"),
        send(12, "C", F, "st2", STATUS, ["B"], ["A#0:4"], reply_to="s2", reason="status_reply"),
        recv(13, "B", F, "st1"),
        (
            13,
            "B",
            F,
            "BACKFILL_FILE",
            {"cns": ["A#0:4"], "due_ms": build("x", [])[0].ts_ms + 28 * 60_000, "local": True},
        ),
        recv(14, "B", F, "st2"),
        (28, "B", F, "BACKFILL", {"requests": ["C=A#0:4"]}),
        send(28, "B", F, "b1", BREQ, ["C"], [], request=["A#0:4"], reason="backfill"),
        recv(29, "C", F, "b1"),
        send(29, "C", F, "r1", BRESP, ["B"], ["A#0:4"], ["A#0:4"], reply_to="b1", reason="backfill_response"),
        recv(30, "B", F, "r1"),
    ]


def delete_limit_steps(split: bool) -> list[Step]:
    """PF-011: three folders created and deleted; with a limit of two deletes a message, one hierarchy
    message may carry only two of the deletes."""
    steps: list[Step] = [*mount(0, "A", "B")]
    for i in (1, 2, 3):
        steps.append(change(0, "A", "1-1", f"A#0:{i}", "create", f"1-20{i}", f"g{i}"))
    for i in (1, 2, 3):
        steps.append(change(0, "A", "1-1", f"A#0:{3 + i}", "delete", f"1-20{i}", "delete"))
    if split:
        steps.append(send(1, "A", "1-1", "h1", HIER, ["B"], ["A#0:1-6"], [f"A#0:{i}" for i in range(1, 6)]))
        steps.append(send(1, "A", "1-1", "h2", HIER, ["B"], ["A#0:1-6"], ["A#0:6"]))
    else:
        steps.append(send(1, "A", "1-1", "h1", HIER, ["B"], ["A#0:1-6"], [f"A#0:{i}" for i in range(1, 7)]))
    return steps


DAY = 24 * 60
THREAD = DAY + 15  # the first status thread run after the expiries (00:15 GMT on day two)
DAY2_1300 = DAY + 13 * 60


def expiry_steps(hier_expiry_min: int, content_expiry_min: int) -> list[Step]:
    """PF-029/PF-030: A's hierarchy and folder expiries (24 h after their last local changes) reached; the
    status thread at 00:15 GMT on day two broadcasts a status message for each."""
    ms = build("x", [])[0].ts_ms
    return [
        (THREAD, "A", "1-1", "STATUS_EXPIRED", {"expiry_ms": ms + hier_expiry_min * 60_000}),
        send(THREAD, "A", "1-1", "e1", STATUS, ["B", "C"], ["A#0:1-3"], reason="expiry"),
        (THREAD, "A", F, "STATUS_EXPIRED", {"expiry_ms": ms + content_expiry_min * 60_000}),
        send(THREAD, "A", F, "e2", STATUS, ["B"], ["A#0:4"], reason="expiry"),
        (DAY2_1300, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
    ]


def _with(steps: list[Step], at: int, *extra: Step) -> list[Step]:
    return [*steps[:at], *extra, *steps[at:]]


def _edit(steps: list[Step], node: str, kind: str, key: str, **attrs: object) -> list[Step]:
    out = []
    for s in steps:
        if s[1] == node and s[3] == kind and s[4].get("msg", s[2]) == key:
            s = (s[0], s[1], s[2], s[3], {**s[4], **attrs})
        out.append(s)
    return out


def _index(steps: list[Step], node: str, kind: str, key: str) -> int:
    return next(i for i, s in enumerate(steps) if s[1] == node and s[3] == kind and s[4].get("msg", s[2]) == key)


def cases() -> list[tuple[str, list[Event], set[str]]]:
    add, dele, bf = add_replica_steps(), delete_replica_steps(), backfill_steps()
    late = (20, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"})
    out: list[tuple[str, list[Event], set[str]]] = [
        # valid, including unusual but allowed choices
        ("add-replica", build("add-replica", add), set()),
        ("delete-replica", build("delete-replica", dele), set()),
        ("backfill-tied-source-not-the-models", build("bf-tie", bf), set()),
        (
            "delete-limit-respected",
            build("dl-ok", delete_limit_steps(True), params={"deleted_folder_limit": 2}),
            set(),
        ),
        # family 1: nothing taken on trust
        (
            "requires-response-claimed-by-active",
            build("f1a", _edit(add, "B", "REPL_SEND", "s1", requires_response=True)),
            {"requires-response-derived"},
        ),
        (
            "backfill-entry-due-misstated",
            build("f1b", _edit(add, "B", "BACKFILL_FILE", F, due_ms=build("x", [])[0].ts_ms + 9 * 60_000, local=True)),
            {"backfill-entry-derived"},
        ),
        (
            "version-restated-wrongly",
            build("f1c", _edit(add, "B", "REPLICA_CREATE", F, versions=["A=55", "B=2003", "C=2003"])),
            {"recorded-config"},
        ),
        # family 2: the intervals
        (
            "content-never-broadcast",
            build("f2a", [*without(add, ("A", "REPL_SEND", "c1"), ("B", "REPL_RECV", "c1")), late]),
            {"broadcast-interval"},
        ),
        (
            "backfill-entry-never-checked",
            build(
                "f2b",
                [
                    *without(add, ("B", "REPL_RECV", "c1")),
                    (30, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
                ],
            ),
            {"backfill-check-late"},
        ),
        (
            "delete-now-never-removed",
            build(
                "f2c",
                [
                    *dele[: _index(dele, "B", "REPLICA_REMOVED", F)],
                    (30, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
                ],
            ),
            {"maintenance-removal"},
        ),
        (
            "delete-pending-stops-asking",
            build(
                "f2d",
                [
                    *dele[: _index(dele, "B", "REPL_SEND", "s2")],
                    (40, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"}),
                ],
            ),
            {"delete-pending-requests"},
        ),
        (
            "status-thread-skipped",
            build("f2e", [*add, (DAY2_1300, "C", F, "CLIENT_ACCESS", {"outcome": "redirect", "target": "A"})]),
            {"status-thread-late"},
        ),
        ("status-at-the-thread-run", build("f2f", [*add, *expiry_steps(2 + DAY, 3 + DAY)]), set()),
        (
            "status-expiry-misstated",
            build("f1d", [*add, *expiry_steps(2 + DAY, 3 + DAY + 60)]),
            {"restated-state"},
        ),
        (
            "status-answering-nothing",
            build("f1e", [*add, send(12, "A", F, "x1", STATUS, ["B"], ["A#0:4"], reason="expiry")]),
            {"message-route"},
        ),
        # family 3: state changes outside the protocol
        (
            "removal-announced-by-another",
            build("f3f", [*add, change(13, "A", "1-1", "A#0:5", "replica", F, "B:removed")]),
            {"removal-announced-after-delete-now"},
        ),
        (
            "active-replica-vanishes",
            build("f3a", [*add, (13, "B", F, "REPLICA_REMOVED", {})]),
            {"replica-state-transition"},
        ),
        (
            "replica-created-without-hierarchy",
            build("f3b", [*add, (13, "C", F, "REPLICA_CREATE", {"origin": "C#0", "new": True})]),
            {"replica-created-by-hierarchy"},
        ),
        (
            "client-served-by-pending-replica",
            build(
                "f3c",
                _with(
                    dele,
                    _index(dele, "B", "REPL_SEND", "s2"),
                    (16, "B", F, "CLIENT_ACCESS", {"outcome": "served", "target": "B"}),
                ),
            ),
            {"served-by-active-replica"},
        ),
        (
            "replica-list-misreported",
            build(
                "f3d",
                _with(
                    add,
                    _index(add, "C", "REPL_RECV", "h2") + 1,
                    (7, "C", F, "REPLICA_VIEW", {"replicas": ["A=active"]}),
                ),
            ),
            {"replica-list-derived"},
        ),
        (
            "delete-pending-without-hierarchy",
            build("f3e", [*add, (13, "B", F, "DELETE_PENDING", {})]),
            {"replica-state-transition"},
        ),
        # family 4: open choices
        (
            "backfill-asks-the-costlier-source",
            build("f4", bf, costs={("B", "C"): 5}),
            {"backfill-source-order"},
        ),
        # fidelity: the deleted-folder packing limit
        (
            "delete-limit-exceeded",
            build("dl-bad", delete_limit_steps(False), params={"deleted_folder_limit": 2}),
            {"packing-limits"},
        ),
    ]
    return out
