"""Peak memory and CPU seconds of a process tree, by polling `/proc` (issue 33: "wall time, peak memory of the
process tree and states/s"; psutil is not a dependency).

A Spark exploration is many processes: the driver (this Python process), its JVM (local mode: the driver and
the executor; a standalone cluster started by `spark_trace_check.cluster.Standalone`: master, workers and their
executor JVMs, all descendants of this process), and the Python workers those JVMs fork. `TreeWatch` polls every
`every_s` seconds, summing the resident set (`VmRSS`) of the root and every descendant, and keeps the largest
sum; it also keeps each process's last seen CPU time (utime + stime), so `cpu_s` is the tree's CPU seconds,
which on a machine shared with other work says what the run cost where its wall time cannot (a process that
lived less than one poll is missed: its CPU is at most `every_s`).

    with TreeWatch() as w:
        ...  # the run
    print(w.peak_bytes, w.cpu_s)
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: str) -> tuple[int, float] | None:
    """(parent pid, CPU seconds) of a process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after the command name, which may hold spaces
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _kind(pid: int) -> str:
    """`jvm` or `python` by the process's executable name (read while it lives: `poll` notes it)."""
    try:
        name = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "python"
    return "jvm" if name == "java" else "python"


def tree(root: int) -> tuple[list[int], dict[int, float]]:
    """The pids of `root` and its descendants, and the CPU seconds of each."""
    children: dict[int, list[int]] = defaultdict(list)
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (st := _stat(entry)) is not None:
            children[st[0]].append(int(entry))
            cpu[int(entry)] = st[1]
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out, {p: cpu[p] for p in out if p in cpu}


class TreeWatch:
    """Polls the tree of `root` (default: this process) in a thread: `peak_bytes`, `cpu_s`, `processes`."""

    def __init__(self, root: int | None = None, every_s: float = 0.5) -> None:
        self.root = root or os.getpid()
        self.every_s = every_s
        self.peak_bytes = 0
        self._cpu: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._base = 0.0
        self._start: dict[int, float] = {}
        self._kind: dict[int, str] = {}

    def poll(self) -> None:
        pids, cpu = tree(self.root)
        for pid in pids:
            if pid not in self._kind:
                self._kind[pid] = _kind(pid)
        self.peak_bytes = max(self.peak_bytes, sum(_rss(p) for p in pids))
        self._cpu.update(cpu)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.poll()
            self._stop.wait(self.every_s)

    @property
    def cpu_s(self) -> float:
        """CPU seconds of the tree since the watch started (the root's own before it excluded)."""
        return sum(list(self._cpu.values())) - self._base

    @property
    def processes(self) -> int:
        return len(self._cpu)

    def split(self) -> dict[str, float]:
        """CPU seconds since the watch started per kind of process (session 13): `jvm` (the driver's JVM, a
        cluster's master, workers and executors), `python` (the Python workers and their daemons) and `driver`
        (the root); what the poll saw of each, as `cpu_s`."""
        out = {"driver": 0.0, "jvm": 0.0, "python": 0.0}
        for pid, used in list(self._cpu.items()):  # the poll thread may add to it meanwhile
            kind = "driver" if pid == self.root else self._kind.get(pid) or _kind(pid)
            self._kind[pid] = kind
            out[kind] += used - self._start.get(pid, 0.0)
        return {k: round(v, 1) for k, v in out.items()}

    def __enter__(self) -> TreeWatch:
        self._start = tree(self.root)[1]
        self._base = sum(self._start.values())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.poll()
