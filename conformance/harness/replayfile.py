"""Replay files: the versioned format `haconform conform` writes and `haconform replay` reads, validated on load.

Design card, "conformance suite" (a failure is replayable: a seed plus a short list of steps). The format is
documented in `conformance/PROTOCOL.md` (`FORMAT_DOC`, rendered by `protocol_doc.py`). A file is checked
before anything runs: the format version, the mechanism, the setup (every field the mechanism's generator
writes, and, where the driver says how, their values: `Driver.check_setup`), and every step's calls against
the protocol's operations and argument schemas (`schemas/*.json`), so that a bad file is one message naming
the step index and field (exit 2 in the CLI), never a traceback. Version 1 files (set_copy with its changes
flattened into the arguments) are read and converted to the protocol's shape.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
from jsonschema.exceptions import best_match

from conformance.harness.process import SCHEMA_DIR, schema

REPLAY_FORMAT = "haconform-replay/2"
READABLE = ("haconform-replay/1", REPLAY_FORMAT)
HARNESS_CALLS = frozenset({"kill_and_restart"})  # process faults the harness makes itself, not protocol requests
PLACEHOLDERS = ("$server", "$folder")  # indices the drivers resolve at replay time

FORMAT_DOC = """\
## Replay files (`haconform-replay/2`)

`haconform conform` writes a failure as a JSON file (default `haconform-replay-MECH.json`);
`haconform replay FILE [--sut "COMMAND"] [--mutant NAME]` sends exactly its steps again. Fields:

| field | type | meaning |
| --- | --- | --- |
| `format` | string | `"haconform-replay/2"` (`haconform-replay/1` is still read) |
| `mechanism` | `"sr"` \\| `"am"` \\| `"pf"` | the mechanism whose protocol the steps speak |
| `sut` | string \\| null | the command of the system that failed (null: the model) |
| `seed` | integer | the run's seed (also in `setup.seed`) |
| `setup` | object | the run's full `setup` request, every field written, defaults included (see below) |
| `steps` | array of step | the steps of the run, in order |
| `violations` | array | what the monitors reported (rule, requirement, events, explanation, seed section) |
| `problem` | string | an adapter or end-of-run problem, when the failure is not a monitor violation |
| `construction` | object | optional (`haconform explore`): the model's construction choices, re-imposed |
| `end` | object | optional (`haconform explore`): the fairness end's choices, followed where they apply |

`construction` and `end` are `{"choices": [outcome indices], "ranges": "ends"}`: the resolution of the model's
random choices the explorer took while the system was built and in the fairness end (a construction with a choice
too few or too many is refused, exit 2).

For `am`, `setup.bcss` holds every BCSS option and the dial thresholds in force, and `setup.default_dial`
every server's dial at start. `violations` is informational: the replay judges the steps afresh.

A **step** is `{"op": NAME, "calls": [CALL, ...]}`: the generator's operation and the protocol requests it made.
A **call** is `{"call": OPERATION, "args": {...}}`: `OPERATION` is one of the mechanism's operations below (not
`setup`) or the harness's process fault `kill_and_restart` (`{"new_state": bool}`); `args` are exactly that
operation's arguments as this document lists them (for `am`, `set_copy` takes `changes`, an object). An
argument may be an index the harness resolves when it replays, `{"$server": i}` (sr) or `{"$folder": i}` (pf).

On load every field is checked: a file that breaks the format is rejected with one message naming the field,
for a step its index and the call's (`steps[3].calls[0].args.changes.status: ...`), and `haconform replay`
exits 2.
"""


class ReplayFileError(ValueError):
    pass


def _driver(mechanism: str) -> Any:
    return importlib.import_module(f"conformance.harness.{mechanism}").DRIVER


def mechanisms() -> list[str]:
    return sorted(p.stem for p in SCHEMA_DIR.glob("*.json"))


@cache
def _arg_validators(mechanism: str) -> dict[str, Any]:
    doc = schema(mechanism)
    cls = jsonschema.validators.validator_for(doc)
    return {op: cls({**spec["args"], "$defs": doc["$defs"]}) for op, spec in doc["operations"].items() if op != "setup"}


@cache
def _defaulted(mechanism: str, op: str) -> frozenset[str]:
    """Arguments the mechanism's Python protocol (`model/MECH/protocol.py`) gives a default: a recorded call
    may leave them out (the adapter sends the default, as pf's create_folder does with `tree`)."""
    mod = importlib.import_module(f"model.{mechanism}.protocol")
    for obj in vars(mod).values():
        if isinstance(obj, type) and callable(getattr(obj, op, None)):
            try:
                params = inspect.signature(getattr(obj, op)).parameters
            except (TypeError, ValueError):
                continue
            return frozenset(n for n, p in params.items() if p.default is not inspect.Parameter.empty)
    return frozenset()


def _is_placeholder(v: Any) -> bool:
    return (
        isinstance(v, dict)
        and len(v) == 1
        and next(iter(v)) in PLACEHOLDERS
        and isinstance(next(iter(v.values())), int)
    )


def _where(path: Any) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


@cache
def sample_setups(mechanism: str, n: int = 25) -> tuple[frozenset[str], frozenset[str]]:
    """(required, allowed) setup fields: those every drawn setup has, and those any has."""
    from hypothesis.errors import NonInteractiveExampleWarning

    strategy = _driver(mechanism).setup
    keys: list[frozenset[str]] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NonInteractiveExampleWarning)
        for _ in range(n):
            keys.append(frozenset(strategy.example()))
    return frozenset.intersection(*keys), frozenset.union(*keys)


def check_setup(mechanism: str, setup: dict[str, Any]) -> list[str]:
    """The fields both the protocol's `setup` request requires and the generator always writes are there; no
    field that neither knows; each typed as the protocol types it (`schemas/MECH.json`); then the driver's
    own checks of the values."""
    always, drawn = sample_setups(mechanism)
    doc = schema(mechanism)
    args = doc["operations"]["setup"]["args"]
    props = args.get("properties", {})
    required = always & set(args.get("required", ()))  # the protocol requires it and the harness writes it
    problems = [f"setup.{k}: missing" for k in sorted(required - set(setup))]
    problems += [f"setup.{k}: not a field of the {mechanism} setup" for k in sorted(set(setup) - drawn - set(props))]
    cls = jsonschema.validators.validator_for(doc)
    for key in sorted(set(setup) & set(props)):
        err = best_match(cls({**props[key], "$defs": doc["$defs"]}).iter_errors(setup[key]))
        if err is not None:
            problems.append(f"setup.{key}{_where(err.absolute_path)}: {err.message}")
    own = getattr(_driver(mechanism), "check_setup", None)
    return problems + (own(setup) if own is not None and not problems else [])


def _upgrade_call(mechanism: str, call: dict[str, Any]) -> dict[str, Any]:
    """Version 1: am's set_copy carried its changes as arguments of their own."""
    args = call.get("args")
    if mechanism == "am" and call.get("call") == "set_copy" and isinstance(args, dict) and "changes" not in args:
        changes = {k: v for k, v in args.items() if k not in ("db", "server")}
        return {**call, "args": {**{k: v for k, v in args.items() if k in ("db", "server")}, "changes": changes}}
    return call


def check_call(mechanism: str, call: Any, where: str, setup: dict[str, Any]) -> str:
    """'' or the first problem of one call, naming its place (`steps[i].calls[j]...`)."""
    if not isinstance(call, dict) or not isinstance(call.get("call"), str):
        return f"{where}: a call is an object with 'call' (string) and 'args' (object)"
    if set(call) - {"call", "args"}:
        return f"{where}: unknown field(s) {sorted(set(call) - {'call', 'args'})} (a call has 'call' and 'args')"
    name, args = call["call"], call.get("args", {})
    if not isinstance(args, dict):
        return f"{where}.args: must be an object"
    if name in HARNESS_CALLS:
        ok = set(args) == {"new_state"} and isinstance(args["new_state"], bool)
        return "" if ok else f"{where}.args: kill_and_restart takes exactly new_state (boolean)"
    validators = _arg_validators(mechanism)
    if name not in validators:
        known = ", ".join(sorted(validators | dict.fromkeys(HARNESS_CALLS)))
        return f"{where}.call: {name!r} is not an operation of the {mechanism} protocol ({known})"
    for err in sorted(validators[name].iter_errors(args), key=lambda e: list(e.absolute_path)):
        if _is_placeholder(err.instance):
            continue
        missing = re.match(r"'([^']+)' is a required property", err.message) if err.validator == "required" else None
        if missing and not err.absolute_path and missing.group(1) in _defaulted(mechanism, name):
            continue
        return f"{where}.args{_where(err.absolute_path)}: {err.message}"
    own = getattr(_driver(mechanism), "check_call", None)
    why = own(setup, name, args) if own is not None else ""
    return f"{where}.args{why}" if why else ""


def validate(data: Any, path: Path | str = "replay file") -> dict[str, Any]:
    """The file's content checked (and a version 1 file converted); ReplayFileError names the first problem."""

    def bad(msg: str) -> ReplayFileError:
        return ReplayFileError(f"{path}: {msg}")

    if not isinstance(data, dict):
        raise bad("a replay file is a JSON object")
    if data.get("format") not in READABLE:
        raise bad(f"field 'format' must be {REPLAY_FORMAT!r} (or {READABLE[0]!r}), not {data.get('format')!r}")
    mech = data.get("mechanism")
    if mech not in mechanisms():
        raise bad(f"field 'mechanism' must be one of {', '.join(mechanisms())}, not {mech!r}")
    for key, kind in (("setup", dict), ("steps", list)):
        if not isinstance(data.get(key), kind):
            raise bad(f"field {key!r} is missing or not a{'n' if kind is dict else ''} {kind.__name__}")
    for i, step in enumerate(data["steps"]):
        if not isinstance(step, dict) or not isinstance(step.get("op"), str) or not isinstance(step.get("calls"), list):
            raise bad(f"steps[{i}]: a step is an object with 'op' (string) and 'calls' (list)")
    problems = check_setup(mech, data["setup"])
    if problems:
        raise bad(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    steps = []
    for i, step in enumerate(data["steps"]):
        legacy = data["format"] == READABLE[0]
        calls = [_upgrade_call(mech, c) if legacy else c for c in step["calls"]]
        for j, call in enumerate(calls):
            why = check_call(mech, call, f"steps[{i}].calls[{j}]", data["setup"])
            if why:
                raise bad(why)
        steps.append({**step, "calls": calls})
    return {**data, "steps": steps}


def read_replay(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayFileError(f"{path}: not a readable replay file ({exc})") from exc
    return validate(data, path)


def full_setup(mechanism: str, setup: dict[str, Any]) -> dict[str, Any]:
    """The setup with every default written out (`Driver.full_setup` where the driver has one)."""
    full = getattr(_driver(mechanism), "full_setup", None)
    return full(setup) if full is not None else dict(setup)
