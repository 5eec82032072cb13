"""The language-neutral adapter: a system under test as a child process speaking JSON lines on stdin/stdout.

One request per line, one reply per line (`conformance/PROTOCOL.md`, generated from `schemas/*.json`).
Every reply is validated against the mechanism's schema; a reply that breaks it is a `SutFailure` naming
the field, never a crash of the harness. Process faults: `kill_and_restart(new_state)` sends SIGKILL and
starts the program again with the same `--state-dir` (it must resume from what it persisted) or a new,
empty one (a fresh deployment: a new trace begins). A reply that does not come within the time-out is
treated as a crash: the process is killed and restarted on the same state directory, and the request is
taken to have had no recorded effect. Virtual time travels in every request (`now_ms`); the system under
test never reads a clock.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from functools import cache
from pathlib import Path
from typing import IO, Any

import jsonschema
from jsonschema.exceptions import best_match

from conformance.harness.core import SutFailure
from traces.schema import SCHEMA_VERSION, Event

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
EPOCH_MS = 1_700_000_000_000  # virtual time of the first request (2023-11-14T22:13:20Z)


@cache
def schema(mechanism: str) -> dict[str, Any]:
    return json.loads((SCHEMA_DIR / f"{mechanism}.json").read_text(encoding="utf-8"))


@cache
def _validators(mechanism: str) -> tuple[Any, dict[str, Any]]:
    doc = schema(mechanism)
    cls = jsonschema.validators.validator_for(doc)
    envelope = cls({**doc["$defs"]["reply"], "$defs": doc["$defs"]})
    results = {op: cls({**spec["result"], "$defs": doc["$defs"]}) for op, spec in doc["operations"].items()}
    return envelope, results


def _field(path: Any) -> str:
    return "/".join(str(p) for p in path) or "(the reply itself)"


def validate_reply(mechanism: str, op: str, reply: Any) -> None:
    """Raise SutFailure naming the first field of `reply` that breaks the mechanism's schema."""
    envelope, results = _validators(mechanism)
    err = best_match(envelope.iter_errors(reply))
    if err is not None:
        where = _field(err.absolute_path)
        raise SutFailure(
            f"reply to {op!r} breaks the {mechanism} protocol schema at field {where}: {err.message}", where
        )
    if "error" in reply:
        return
    err = best_match(results[op].iter_errors(reply.get("result")))
    if err is not None:
        where = _field(["result", *err.absolute_path])
        raise SutFailure(
            f"reply to {op!r} breaks the {mechanism} protocol schema at field {where}: {err.message}", where
        )


def check_event_times(op: str, request_id: int, now_ms: int, events: list[dict[str, Any]]) -> None:
    """PROTOCOL.md: every event of a reply happens at or after the request's `now_ms` (the system never
    records in the past); an event before it is a protocol error naming the request and the event."""
    for i, ev in enumerate(events):
        if ev["ts_ms"] < now_ms:
            raise SutFailure(
                f"reply to {op!r} (request {request_id}) records event {i} ({ev['kind']} of {ev['entity']!r}) at "
                f"ts_ms {ev['ts_ms']}, before the request's now_ms {now_ms}: events must be at or after now_ms",
                f"events/{i}/ts_ms",
            )


class ReplyTimeout(Exception):
    pass


class ProcessClient:
    """The child process and its pipes. `call` sends one request and returns the validated reply."""

    def __init__(self, command: str, mechanism: str, timeout_s: float = 10.0, state_root: Path | None = None) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--sut needs a command")
        self.mechanism = mechanism
        self.timeout_s = timeout_s
        self.root = Path(tempfile.mkdtemp(prefix="haconform-sut-", dir=state_root))
        self.generation = 0
        self.state_dir = self._new_state_dir()
        self.next_id = 0
        self.crashes = 0  # time-outs treated as crashes
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: IO[str] | None = None

    def _new_state_dir(self) -> Path:
        self.generation += 1
        path = self.root / f"state-{self.generation}"
        path.mkdir()
        return path

    # --- the process -------------------------------------------------------------------------------
    def start(self) -> None:
        self.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115 (lives as long as the child)
        try:
            self.proc = subprocess.Popen(
                [*self.argv, "--state-dir", str(self.state_dir)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.stderr,
                text=True,
                encoding="utf-8",
                bufsize=1,
            )
        except OSError as exc:
            raise SutFailure(f"cannot start the system under test {self.argv[0]!r}: {exc}") from exc
        self.lines = queue.Queue()
        threading.Thread(target=self._read, args=(self.proc, self.lines), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    def stderr_tail(self, n: int = 800) -> str:
        if self.stderr is None:
            return ""
        self.stderr.seek(0)
        text = self.stderr.read()
        return text[-n:].strip()

    def kill(self) -> None:
        """SIGKILL, as `kill -9` would: no chance to flush or clean up."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()
            for pipe in (self.proc.stdin, self.proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):
                        pipe.close()
        if self.stderr is not None:
            self.stderr.close()
            self.stderr = None
        self.proc = None

    def restart(self, new_state: bool) -> None:
        self.kill()
        if new_state:
            self.state_dir = self._new_state_dir()
        self.start()

    def close(self) -> None:
        self.kill()
        shutil.rmtree(self.root, ignore_errors=True)

    # --- one request, one reply ------------------------------------------------------------------------
    def call(self, op: str, args: dict[str, Any], now_ms: int) -> dict[str, Any]:
        if self.proc is None:
            self.start()
        assert self.proc is not None and self.proc.stdin is not None
        self.next_id += 1
        request = {"id": self.next_id, "op": op, "now_ms": now_ms, "args": args}
        try:
            self.proc.stdin.write(json.dumps(request, separators=(",", ":")) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise SutFailure(
                f"the system under test is gone (request {op!r}): {exc}; stderr: {self.stderr_tail()!r}"
            ) from exc
        try:
            line = self.lines.get(timeout=self.timeout_s)
        except queue.Empty:
            raise ReplyTimeout(f"no reply to {op!r} within {self.timeout_s} s") from None
        if line is None:
            code = self.proc.wait()
            raise SutFailure(
                f"the system under test exited (status {code}) instead of answering {op!r}; "
                f"stderr: {self.stderr_tail()!r}"
            )
        try:
            reply = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SutFailure(
                f"reply to {op!r} is not one JSON object on one line: {exc} in {line[:200]!r}", "(the reply itself)"
            ) from exc
        validate_reply(self.mechanism, op, reply)
        if reply["id"] != request["id"]:
            raise SutFailure(f"reply to {op!r} answers request {reply['id']}, not {request['id']}", "id")
        if "error" in reply:
            raise SutFailure(f"the system under test reports an error for {op!r}: {reply['error']}", "error")
        check_event_times(op, request["id"], now_ms, reply["events"])
        return reply


class ProcessSystem:
    """The common half of every mechanism's protocol over a `ProcessClient`: setup, time, events, faults."""

    mechanism = ""

    def __init__(self, client: ProcessClient, setup: dict[str, Any]) -> None:
        self.client = client
        self.setup = setup
        self.now_ms = EPOCH_MS
        self._events: list[Event] = []
        self.segment = 0
        self.notes: list[str] = []
        self.initial: list[Any] = []
        self._begin(first=True)

    # --- traces ------------------------------------------------------------------------------------
    def _begin(self, first: bool) -> None:
        """A new trace: the harness's TRACE_START (carrying the setup), then the system's set-up events."""
        self.segment += 1
        self.trace_id = f"{self.mechanism}-sut-s{self.setup.get('seed')}-{self.segment}"
        self.seq = 0
        cfg = json.dumps(self.config(), sort_keys=True, separators=(",", ":"))
        self._add(
            {
                "ts_ms": self.now_ms,
                "node": "harness",
                "entity": self.trace_id,
                "kind": "TRACE_START",
                "attrs": {"seed": self.setup.get("seed"), "model": self.mechanism, "config": cfg},
            },
            "core",
        )
        for raw in self.context():
            self._add({"ts_ms": self.now_ms, "node": "harness", **raw})
        self.initial = self._outs(self._setup_call())

    def config(self) -> dict[str, Any]:
        """The recorded configuration (TRACE_START `config`): what the harness configured the system with."""
        return dict(self.setup)

    def context(self) -> list[dict[str, Any]]:
        """Context events (`*_CONFIG`) the harness records after TRACE_START: configuration it gave the system,
        in the shape the mechanism's monitor reads (entity, kind, attrs)."""
        return []

    def setup_args(self) -> dict[str, Any]:
        """The `setup` request's arguments."""
        return dict(self.setup)

    def _setup_call(self) -> list[dict[str, Any]]:
        try:
            reply = self.client.call("setup", self.setup_args(), self.now_ms)
        except ReplyTimeout as exc:
            raise SutFailure(f"the system under test did not answer its set-up: {exc}") from exc
        return list(reply["events"])

    def _add(self, raw: dict[str, Any], mechanism: str | None = None) -> Event:
        e = Event(
            schema_version=SCHEMA_VERSION,
            trace_id=self.trace_id,
            seq=self.seq,
            event_id=f"{self.trace_id}-{self.seq}",
            ts_ms=int(raw["ts_ms"]),
            node=raw["node"],
            mechanism=mechanism or self.mechanism,
            entity=raw["entity"],
            kind=raw["kind"],
            attrs=dict(raw.get("attrs", {})),
        )
        self.seq += 1
        self._events.append(e)
        return e

    def _outs(self, raws: list[dict[str, Any]]) -> list[Any]:
        return [self._add(r) for r in raws]

    def request(self, op: str, default: Any = None, **args: Any) -> tuple[list[Event], Any]:
        """Send one request; a time-out is a crash (kill -9, restart on the same state directory)."""
        try:
            reply = self.client.call(op, args, self.now_ms)
        except ReplyTimeout as exc:
            self.client.crashes += 1
            self.notes.append(f"{exc}: treated as a crash (kill -9, restart on the same state directory)")
            self.client.restart(new_state=False)
            self._process_restarted()
            return self._outs(self._setup_call()), default
        return self._outs(list(reply["events"])), reply.get("result")

    # --- process faults ----------------------------------------------------------------------------
    def _process_restarted(self) -> None:
        """Hook: the process was killed and started again on the same state (a mechanism may record it)."""

    def kill_and_restart(self, new_state: bool = False) -> bool:
        """kill -9 the process and start it again; with a new state directory a new trace begins."""
        self.client.restart(new_state)
        if new_state:
            self._begin(first=False)
        else:
            self._outs(self._setup_call())
        return new_state

    def events(self) -> list[Event]:
        return self._events

    def close(self) -> None:
        self.client.close()
