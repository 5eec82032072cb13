"""Progress of a long Spark `haconform check`: a tqdm bar on stderr driven by Spark's status tracker.

A daemon thread polls `SparkContext.statusTracker()` for the jobs of the check's job group and shows the events done,
estimated as the input's events (known before the check: Parquet footers, JSONL size) times the share of tasks
done of tasks known so far (the total grows as the check submits its few jobs), so tqdm gives events/s and an
ETA, as the single-process engine's bar (`conformance.progress`) does. Shown when `--quiet` is not given and
stderr is a terminal, or with `--progress`. The final line (unless `--quiet`) gives the events checked, the
wall time and the rate, as the Python engine's (`conformance.progress`). The rendering takes any tracker-like
object and any file, so it is tested without a terminal and without Spark.

Retries (issue 35): a task that fails (a lost Python worker) is tried again, up to the session's task attempts
(`spark_trace_check.session`). The bar's postfix and the final line say how many task attempts failed and were
tried again, counted by the tracker (`numFailedTasks` of the stages of the jobs this check submitted, in
`JOB_GROUP` and `PLAN_GROUP`) once Spark's listener bus has delivered every event (`settle_listeners`); the
count is kept in `StatusBar.retried` and written to summary.json's `run` (`tasks_retried`).
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

JOB_GROUP = "haconform-check"
PLAN_GROUP = JOB_GROUP + "-plan"  # the units plan's index and TR-002 jobs: not counted by the bar's tasks


def settle_listeners(sc: Any) -> None:
    """Wait until Spark's listener bus has delivered every event so far to the status store the tracker reads
    (a task failure is then counted before the final line). An internal API of the driver: where it is
    missing, the count may lag by the last events."""
    with contextlib.suppress(Exception):  # py4j raises its own types; nothing to report
        sc._jsc.sc().listenerBus().waitUntilEmpty()


@contextmanager
def job_group(sc: Any, name: str = JOB_GROUP) -> Iterator[None]:
    """The Spark jobs submitted inside belong to job group `name` (the bar and the tests find them by it);
    the caller's group is restored after."""
    before = sc.getLocalProperty("spark.jobGroup.id")
    sc.setLocalProperty("spark.jobGroup.id", name)
    try:
        yield
    finally:
        sc.setLocalProperty("spark.jobGroup.id", before)


class StatusBar:
    """Poll a status tracker for the jobs of `group` and render them on a tqdm bar (tasks done/known)."""

    def __init__(
        self,
        tracker: Any,
        *,
        group: str = JOB_GROUP,
        events: int = 0,
        bar: bool = True,
        final_line: bool = True,
        file: TextIO | None = None,
        interval: float = 0.5,
        settle: Callable[[], None] | None = None,
    ) -> None:
        """`settle`: called before the final count of retries (`settle_listeners`)."""
        self.tracker, self.group, self.events, self.interval = tracker, group, events, interval
        self.settle = settle
        self.groups = (group, group + "-plan")  # where this check's jobs are (PLAN_GROUP for the default)
        self.before: set[int] = set()  # jobs of those groups submitted before this check (a shared session)
        self.retried = 0
        self.bar_enabled, self.final_line = bar, final_line
        self.file = file if file is not None else sys.stderr
        self.bar: Any = None
        self.t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tasks(self) -> tuple[int, int]:
        """(tasks done, tasks known) over the group's jobs; a finished job's stages count as done (stages it
        skipped because their shuffle output already existed never run)."""
        done = total = 0
        for job_id in self.tracker.getJobIdsForGroup(self.group):
            job = self.tracker.getJobInfo(job_id)
            if job is None:
                continue
            finished = str(job.status) in ("SUCCEEDED", "JobExecutionStatus.SUCCEEDED")
            for stage_id in job.stageIds:
                stage = self.tracker.getStageInfo(stage_id)
                if stage is None:
                    continue
                if finished:
                    done += stage.numCompletedTasks
                    total += stage.numCompletedTasks
                else:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
        return done, total

    def _jobs(self) -> set[int]:
        return {job_id for group in self.groups for job_id in self.tracker.getJobIdsForGroup(group)}

    def failed_attempts(self) -> int:
        """Task attempts that failed in this check's jobs (each tried again, or the check failed)."""
        failed = 0
        for job_id in self._jobs() - self.before:
            job = self.tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else ():
                stage = self.tracker.getStageInfo(stage_id)
                failed += stage.numFailedTasks if stage is not None else 0
        return failed

    def render(self) -> None:
        """One poll, drawn on the bar: events done estimated as the input's events times the share of tasks
        done, so tqdm shows events/s and an ETA as the single-process engine's bar does; tasks as a postfix."""
        if self.bar is None:
            return
        done, total = self.tasks()
        if self.events:
            self.bar.total = self.events
            self.bar.n = self.events * done // total if total else 0
        else:  # the input's size is unknown: tasks
            self.bar.total = max(total, 1)
            self.bar.n = min(done, self.bar.total)
        failed = self.failed_attempts()
        again = f", {failed} retried" if failed else ""
        self.bar.set_postfix_str(f"tasks {done}/{total}{again}", refresh=False)
        self.bar.refresh()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.render()

    def __enter__(self) -> StatusBar:
        self.t0 = time.monotonic()
        self.before = self._jobs()
        if self.bar_enabled:
            from tqdm import tqdm

            self.bar = tqdm(
                total=self.events or 1,
                unit="event" if self.events else "task",
                unit_scale=True,
                desc="checking (Spark)",
                file=self.file,
                leave=False,
            )
            self._thread = threading.Thread(target=self._loop, name="haconform-progress", daemon=True)
            self._thread.start()
        return self

    def close(self, events: int | None = None) -> None:
        """Stop polling; print the final line with the rate over `events` (the events checked)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        if self.bar is not None:
            self.render()
            self.bar.close()
            self.bar = None
        if events is not None:
            if self.settle is not None:
                self.settle()
            self.retried = self.failed_attempts()
        if self.final_line and events is not None:
            seconds = time.monotonic() - self.t0
            rate = events / max(seconds, 1e-9)
            again = f"; {self.retried} failed task attempt(s) retried" if self.retried else ""
            print(f"checked {events} events in {seconds:.1f} s: {rate:,.0f} events/s{again}", file=self.file)

    def __exit__(self, *exc: object) -> None:
        self.close()
