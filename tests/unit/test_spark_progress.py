"""The Spark engine's progress bar (`spark_trace_check.progress`) rendered without a terminal and without
Spark: a fake status tracker stands in for `SparkContext.statusTracker()`, the bar writes into a string."""

from __future__ import annotations

import io
from collections import namedtuple

import pytest

from spark_trace_check.progress import JOB_GROUP, StatusBar

pytestmark = pytest.mark.unit

Job = namedtuple("Job", "jobId stageIds status")
Stage = namedtuple("Stage", "stageId currentAttemptId name numTasks numActiveTasks numCompletedTasks numFailedTasks")


class FakeTracker:
    """Two jobs of the check's group (one finished with a skipped stage, one running) and one job of another."""

    def __init__(self) -> None:
        self.jobs = {
            0: Job(0, [0, 1], "SUCCEEDED"),  # stage 1 was skipped: it never ran
            1: Job(1, [2, 3], "RUNNING"),
            7: Job(7, [9], "RUNNING"),
        }
        self.stages = {
            0: Stage(0, 0, "scan", 4, 0, 4, 0),
            1: Stage(1, 0, "skipped", 4, 0, 0, 0),
            2: Stage(2, 0, "shuffle", 4, 1, 3, 0),
            3: Stage(3, 0, "pass", 2, 0, 0, 0),
            9: Stage(9, 0, "someone else's", 100, 0, 50, 0),
        }

    def getJobIdsForGroup(self, group):
        return [0, 1] if group == JOB_GROUP else [7]

    def getJobInfo(self, job_id):
        return self.jobs.get(job_id)

    def getStageInfo(self, stage_id):
        return self.stages.get(stage_id)


def test_tasks_count_only_the_group_and_finished_jobs_count_whole():
    assert StatusBar(FakeTracker()).tasks() == (4 + 3, 4 + 4 + 2)
    assert StatusBar(FakeTracker(), group="other").tasks() == (50, 100)


def test_the_bar_shows_events_with_a_rate_and_an_eta_and_the_final_line_the_rate():
    out = io.StringIO()
    with StatusBar(FakeTracker(), events=1000, file=out, interval=3600) as status:
        status.render()
        drawn = out.getvalue()
        status.close(events=1000)
    # 7 of 10 tasks done: 700 of the 1000 events, with a rate in events/s and tqdm's ETA (`<`)
    assert "checking (Spark)" in drawn and "700/1.00k" in drawn and "tasks 7/10" in drawn, drawn
    assert "event/s" in drawn and "<" in drawn, drawn
    last = out.getvalue().strip().splitlines()[-1]
    assert last.startswith("checked 1000 events in ") and last.endswith(" events/s")


def test_no_bar_when_not_asked_and_no_final_line_when_quiet():
    out = io.StringIO()
    with StatusBar(FakeTracker(), bar=False, file=out) as status:
        status.render()
        status.close(events=10)
    assert "checking" not in out.getvalue() and out.getvalue().startswith("checked 10 events")
    quiet = io.StringIO()
    with StatusBar(FakeTracker(), bar=False, final_line=False, file=quiet) as status:
        status.close(events=10)
    assert quiet.getvalue() == ""


def test_an_error_prints_no_rate():
    out = io.StringIO()
    with pytest.raises(RuntimeError), StatusBar(FakeTracker(), file=out, interval=3600):
        raise RuntimeError("boom")
    assert "events/s" not in out.getvalue().split("\r")[-1] and "checked" not in out.getvalue()
