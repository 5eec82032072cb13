"""TR-002 in both Spark units plans without hashing IDs that name their own event (session 30, issue 32: the
one-job plan's components, `conformance.engine.units.index_files` and `spark_trace_check.probed_units`; the
two-job plan's index, `spark_trace_check.units`).

Files whose every row's event ID is its own (`<trace_id>:<seq>`), every trace in seq order, hand on no hash; a
corpus of them shuffles none. Checked in each plan against the single-process engine and against the same plan
with every ID hashed (`SKIP_OWN_IDS` False): a clean corpus of own IDs (one trace split over two files), an own ID
written twice, and an ID of another form spelling another file's own ID (then every file's IDs are hashed again,
`hash_shuffle.hashes_again`). A corpus whose last file holds other IDs is hashed in its tasks as before: the driver
looks at the first rows of three files first (`hash_shuffle.own_sampled`, a prediction that is never an error: a
file without an `event_id` column, one that is not Parquet or cannot be read, is a no). Twins: without the job of
hashes again, the spelled ID is not found; a component that ignores seq order hands on no hash for its repeated own
ID (`tests/engine/test_own_ids.py`).
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spark_trace_check.job as job
import spark_trace_check.probed_units as probed_units
import spark_trace_check.units as spark_units
from conformance.pycheck import check_paths
from tests.engine.test_own_ids import _rows, _write
from traces.corpus import SAMPLES_DIR

pytestmark = pytest.mark.spark

ANNOUNCED = {"auto": "told by their trace_id dictionaries", "units": "unit(s) of whole traces"}
PLANS = ("auto", "units")  # the one-job plan (every file Parquet, the components small); the two-job plan (forced)


def _corpus(directory: Path, variant: str) -> list[str]:
    """sr-s1 over two files (one component), am-s1 and pf-s1 a file each: every ID its own, in order; `variant`
    "twice": sr-s1's seq 7 written again in its second file; "spelled": a file (the second by rank) of another
    trace whose ID is sr-s1's seq 3's; "last": that file last by rank."""
    directory.mkdir(parents=True)
    sr = _rows("clean/sr-s1.jsonl")
    assert all(r["event_id"] == f"{r['trace_id']}:{r['seq']}" for r in sr)  # the simulators' IDs are their own
    half = len(sr) // 2
    _write(directory / "a.parquet", sr[:half])
    _write(directory / "b.parquet", sr[half:] + ([sr[7]] if variant == "twice" else []))
    _write(directory / "c.parquet", _rows("clean/am-s1.jsonl"))
    _write(directory / "d.parquet", _rows("clean/pf-s1.jsonl"))
    if variant in ("spelled", "last"):
        other = _rows("clean/am-s1.jsonl")[0]
        name = "a2.parquet" if variant == "spelled" else "e.parquet"  # rank 1 (not looked at first), or the last
        _write(directory / name, [dict(other, trace_id="x-trace", seq=0, event_id=sr[3]["event_id"])])
    return [str(directory)]


def _tr002(outcome) -> list[dict]:
    return [v for v in outcome.violations if v["requirement"] == "TR-002"]


def _same(a, b) -> None:
    assert a.summary() | {"engine": ""} == b.summary() | {"engine": ""}
    assert a.violations == b.violations and a.quarantine == b.quarantine and a.unknown == b.unknown


def _check(spark, paths, monkeypatch, capsys, plan: str, skip: bool = True):
    """A plan's outcome, whether each file's index entry came back own, and the jobs of hashes again."""
    module = probed_units if plan == "auto" else spark_units
    if plan == "units":
        monkeypatch.setattr(probed_units, "ONCE_BUDGET", 0)  # every component over the one job's budget
    monkeypatch.setattr(module, "SKIP_OWN_IDS", skip)
    seen: dict = {"again": 0}
    finish, again = spark_units.finish_job, module.hashes_again

    def spy_finish(found, index, *args, **kwargs):
        seen["own"] = [entry.own for entry in index]
        return finish(found, index, *args, **kwargs)

    def spy_again(*args):
        seen["again"] += 1
        return again(*args)

    monkeypatch.setattr(module, "finish_job", spy_finish)
    monkeypatch.setattr(module, "hashes_again", spy_again)
    outcome = job.check(spark, paths, plan=plan, announce=True)
    assert ANNOUNCED[plan] in capsys.readouterr().err
    monkeypatch.undo()
    return outcome, seen["own"], seen["again"]


@pytest.mark.parametrize("plan", PLANS)
def test_own_ids_in_order_are_judged_without_hashes_and_as_before(spark, tmp_path, monkeypatch, capsys, plan):
    paths = _corpus(tmp_path / "in", "clean")
    fast, own, again = _check(spark, paths, monkeypatch, capsys, plan)
    reference, reference_own, _ = _check(spark, paths, monkeypatch, capsys, plan, skip=False)
    assert own == [True] * 4 and again == 0  # the shortcut taken: no file hashed, no job of hashes
    assert reference_own == [False] * 4  # the reference hashes every ID
    _same(fast, reference)
    _same(fast, check_paths(paths))
    assert fast.rows_checked > 0 and not _tr002(fast)


@pytest.mark.parametrize("plan", PLANS)
def test_an_own_id_written_twice_is_found(spark, tmp_path, monkeypatch, capsys, plan):
    paths = _corpus(tmp_path / "in", "twice")
    fast, own, again = _check(spark, paths, monkeypatch, capsys, plan)
    # the one job: sr-s1's component hashed in its task (its trace not in order), the others not: hashed again;
    # the two jobs: every file own, the trace not in order: hashed again
    assert own == ([False, False, True, True] if plan == "auto" else [False] * 4) and again == 1
    assert _tr002(fast)
    _same(fast, check_paths(paths))
    _same(fast, _check(spark, paths, monkeypatch, capsys, plan, skip=False)[0])


@pytest.mark.parametrize("plan", PLANS)
def test_an_id_spelling_another_files_own_id_is_found_and_needs_the_hashes_again(
    spark, tmp_path, monkeypatch, capsys, plan
):
    paths = _corpus(tmp_path / "in", "spelled")
    fast, own, again = _check(spark, paths, monkeypatch, capsys, plan)
    assert own == ([True, False, True, True, True] if plan == "auto" else [False] * 5) and again == 1
    assert _tr002(fast)
    _same(fast, check_paths(paths))
    _same(fast, _check(spark, paths, monkeypatch, capsys, plan, skip=False)[0])
    # twin: without the job of hashes again, only the first job's hashes meet (none of the own files'): missed
    module = probed_units if plan == "auto" else spark_units
    monkeypatch.setattr(probed_units, "ONCE_BUDGET", 0 if plan == "units" else probed_units.ONCE_BUDGET)
    monkeypatch.setattr(module, "hashes_again", lambda *args: (set(), set()))
    assert not _tr002(job.check(spark, paths, plan=plan))


@pytest.mark.parametrize("plan", PLANS)
def test_a_corpus_whose_last_file_holds_other_ids_is_hashed_as_before(spark, tmp_path, monkeypatch, capsys, plan):
    paths = _corpus(tmp_path / "in", "last")
    fast, own, again = _check(spark, paths, monkeypatch, capsys, plan)
    assert own == [False] * 5 and again == 0  # the driver's look found other IDs: every ID hashed in the tasks
    assert _tr002(fast)
    _same(fast, check_paths(paths))


def test_the_drivers_look_says_own_only_for_parquet_files_whose_first_rows_name_their_own_events(tmp_path):
    from spark_trace_check.hash_shuffle import own_sampled
    from traces.io import discover

    paths = _corpus(tmp_path / "in", "clean")
    assert own_sampled(discover(paths).files)
    assert not own_sampled([])
    assert not own_sampled(discover(_corpus(tmp_path / "last", "last")).files)  # the last file's IDs are others'
    # a prediction: the spelled file, second by rank, is not looked at (the job finds it and hashes again)
    assert own_sampled(discover(_corpus(tmp_path / "spelled", "spelled")).files)
    odd = tmp_path / "odd"
    odd.mkdir()
    pq.write_table(pa.table({"trace_id": ["t"], "seq": [0]}), odd / "a-no-id.parquet")  # no event_id column
    (odd / "b-garbage.parquet").write_bytes(b"PAR1 and then no Parquet at all")  # its first bytes pass discovery
    (odd / "c.jsonl").write_text((SAMPLES_DIR / "clean" / "sr-s1.jsonl").read_text())
    for name in ("a-no-id.parquet", "b-garbage.parquet", "c.jsonl"):
        (tf,) = [f for f in discover([str(odd)]).files if f.name.endswith(name)]
        assert not own_sampled([tf]), name  # a prediction: never an error (the task says what is wrong)
