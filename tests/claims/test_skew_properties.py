"""Properties of the skew check against a naive encoding (one z3 constraint per instance, no aggregation).

- soundness: a trace recorded with clock offsets within the bound has no violation and no inconsistency,
  and the smallest skew reported is at most the largest offset used;
- the four verdicts agree with the naive system: some instance is inconsistent iff the naive joint system
  of the non-violating instances is unsatisfiable; without the inconsistent ones it is satisfiable;
- the smallest skew is the smallest bound under which every cross-node instance is explainable.
Failures print the generated trace (a list of messages) and the skew bound: paste them into a unit test.
"""

from __future__ import annotations

import pytest
import z3
from hypothesis import given
from hypothesis import strategies as st

from spec.claims.skew import Instance, check_skew

NODES = ("a", "b", "c", "d")


def _trace(messages: list[tuple[str, str, int, int]]) -> list[tuple]:
    events = []
    for n, (src, dst, sent, received) in enumerate(messages):
        attrs = {"wire": n}
        events.append((f"{n}.s", src, sent, "NET_SEND", f"{src}->{dst}", attrs))
        events.append((f"{n}.r", dst, received, "NET_RECV", f"{src}->{dst}", attrs))
    return events


def _naive_sat(instances: list[Instance], bound: int) -> bool:
    off = {n: z3.Int(n) for n in NODES}
    s = z3.Solver()
    s.add(*(z3.And(o >= -bound, o <= bound) for o in off.values()))
    for i in instances:
        if i.pair is not None:
            s.add(off[i.after_node] - off[i.before_node] <= i.weight_ms)
    return s.check() == z3.sat


message = st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.integers(0, 60), st.integers(0, 60))
messages = st.lists(message, min_size=1, max_size=8)


@pytest.mark.model
@given(messages, st.integers(0, 15))
def test_verdicts_agree_with_the_naive_system(msgs: list, bound: int) -> None:
    report = check_skew(_trace(msgs), bound)
    cross = [i for i in report.instances if i.pair is not None]
    allowed = [i for i in cross if i.verdict != "violation"]
    has_inconsistent = report.counts["inconsistent"] > 0
    assert has_inconsistent == (not _naive_sat(allowed, bound)), (msgs, bound)
    assert _naive_sat([i for i in allowed if i.verdict != "inconsistent"], bound), (msgs, bound)
    for i in report.instances:
        if i.verdict == "consistent" and i.pair is not None:
            assert i.weight_ms >= 2 * bound
        if i.verdict == "violation" and i.pair is not None:
            assert i.weight_ms < -2 * bound


@pytest.mark.model
@given(messages)
def test_min_skew_is_the_smallest_explaining_bound(msgs: list) -> None:
    report = check_skew(_trace(msgs), 0)
    cross = [i for i in report.instances if i.pair is not None]
    e = report.min_skew_ms
    if e is None:
        assert not _naive_sat(cross, 10**9), msgs
    else:
        assert _naive_sat(cross, e), msgs
        assert e == 0 or not _naive_sat(cross, e - 1), msgs


@pytest.mark.model
@given(
    st.lists(
        st.tuples(st.sampled_from(NODES), st.sampled_from(NODES), st.integers(0, 1000), st.integers(0, 50)),
        min_size=1,
        max_size=10,
    ),
    st.dictionaries(st.sampled_from(NODES), st.integers(-20, 20)),
    st.integers(20, 30),
)
def test_traces_recorded_within_the_bound_are_explained(msgs: list, offsets: dict, bound: int) -> None:
    """True times: send at t, receive at t + latency; each node records with its offset (|offset| <= 20)."""
    recorded = [(src, dst, t + offsets.get(src, 0), t + lat + offsets.get(dst, 0)) for src, dst, t, lat in msgs]
    report = check_skew(_trace(recorded), bound)
    assert report.counts["violation"] == report.counts["inconsistent"] == 0, (recorded, bound)
    assert report.min_skew_ms is not None and report.min_skew_ms <= max(map(abs, offsets.values()), default=0)
