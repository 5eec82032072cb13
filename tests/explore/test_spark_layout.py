"""The layout of a settled partition on Spark (issue 33, "On Spark"; session 15, `spark_trace_check.explore`): its
`Settled` with no node in it, then its new states' rows pickled in pieces of bounded size (a JVM array holds at most
2 GB), each node as its one pickle (`levels.packed`). Run in this process, without a session: the partition's
summary reads the `Settled` alone, the next level's frontier gets every row back in order, and the next settle
reads the visited set from it. Twin: a frontier read that takes the `Settled` for rows loses every state."""

from __future__ import annotations

import pickle

import pytest

from conformance.explore.levels import Job, Settled, expand_all, start, unpacked
from conformance.explore.manifest import find


def _records(job: Job) -> list:
    ex = job.expander()
    _, roots = start(job, ex)
    return list(expand_all(ex, roots, job.ends, False))


@pytest.mark.model
@pytest.mark.parametrize("piece", [1, 10**9])
def test_a_settled_partition_is_its_settled_then_its_frontier_in_pieces(piece: int) -> None:
    from spark_trace_check.explore import _frontier, _heads, _settle_partition

    job = Job(find("am-3s-1db-crash-partition").bound)
    out = list(_settle_partition(job, False, piece)([{"old"}, *_records(job)]))
    (head,) = list(_heads(out))
    assert out[0] is head and all(isinstance(p, bytes) for p in out[1:])
    assert all(n.node is None for n in head.new) and "old" in head.visited  # the level before's visited set kept
    rows = list(_frontier(out))
    assert [(fp, key) for fp, key, _ in rows] == [(n.fingerprint, n.key) for n in head.new]
    assert len(out) - 1 == (len(rows) if piece == 1 else 1)
    assert all(unpacked(node).key for _, _, node in rows)  # each node loads back (`levels.packed`)
    again = list(_settle_partition(job, False, piece)([*out, *_records(job)]))  # the next level reads it as is
    (second,) = list(_heads(again))
    assert second.new == [] and second.visited >= head.visited  # every child already visited


@pytest.mark.model
def test_twin_a_frontier_read_that_takes_the_settled_for_rows_loses_every_state() -> None:
    from spark_trace_check.explore import _settle_partition

    job = Job(find("am-3s-1db-crash-partition").bound)
    out = list(_settle_partition(job, False)([set(), *_records(job)]))
    wrong = [row for part in out if isinstance(part, Settled) for row in part.new if row.node is not None]
    assert wrong == [] and len(pickle.loads(out[1])) > 0
