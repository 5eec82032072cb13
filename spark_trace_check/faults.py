"""A test-only hook: one Python worker of a Spark check kills itself, once, part way through its task.

Set `HACONFORM_TEST_KILL_WORKER` to the path of a file that exists (a marker) before the check starts. The
driver reads the variable when it builds a task's function and hands the path to the tasks (so the variable
reaches the workers whatever environment their daemon was started with); the first task to come to a kill
point after doing some work removes the marker (`os.unlink`: one task wins, however many run at once) and
sends its own process SIGKILL, as the kernel's OOM killer would. Every later task, and every retry, finds no
marker and runs normally. So a test loses exactly one worker at a known point, without timers (issue 35).

Kill points: in the units plan, after a task has judged its first unit and handed its result on
(`spark_trace_check.units`); in the trace pass (the shuffle plan, the held traces' pass and `--state`), after a
task has judged its first batch and sent its rows so far (`spark_trace_check.trace_pass`). Not a setting for
users: unset, it costs one dictionary lookup per task function built on the driver.
"""

from __future__ import annotations

import os
import signal

KILL_ENV = "HACONFORM_TEST_KILL_WORKER"


def kill_marker() -> str | None:
    """On the driver: the marker path the tasks are to watch for, or None (the hook is off)."""
    return os.environ.get(KILL_ENV) or None


def die_once(marker: str | None) -> None:
    """In a task: if the marker is still there, remove it and kill this Python worker (SIGKILL)."""
    if marker is None:
        return
    try:
        os.unlink(marker)
    except FileNotFoundError:
        return
    os.kill(os.getpid(), signal.SIGKILL)
