"""The Active Manager setup of the harness: its defaults, the BCSS reading in force, and the checks a replay
file's setup and calls go through (`replayfile.py`, issue 24).

Seed 002 gives no dial thresholds (AM-I09): the reading in force, thresholds included, is what TRACE_START
records and what a replay file's `setup.bcss` holds. A replay file is checked against the setup it names:
every database and server a call names exists, every BCSS option is one `Options` knows, with its type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from model.am.bcss import Options
from model.am.sim import options_json
from model.am.state import DIALS
from spec.catalogue import param_default


def _dials() -> list[str]:
    return list(DIALS)


def _default_dial() -> str:
    return str(param_default("AutoDatabaseMountDial"))


def bcss_in_force(setup: Mapping[str, Any]) -> dict[str, Any]:
    """Every BCSS option of the run, the dial thresholds included (recorded in TRACE_START `config.bcss`: the
    seed gives no thresholds, AM-I09, so the monitor judges the dial only against recorded ones)."""
    return options_json(Options().with_(**_options(setup["bcss"])))


def _options(bcss: Mapping[str, Any]) -> dict[str, Any]:
    """A setup's BCSS options as `Options` takes them (a full setup writes the thresholds as JSON lists)."""
    out = dict(bcss)
    if "thresholds" in out:
        out["thresholds"] = tuple((str(k), int(v)) for k, v in out["thresholds"])
    return out


def full_setup(setup: dict[str, Any]) -> dict[str, Any]:
    """Every default written out: the BCSS options and thresholds in force, the starting dial."""
    return {**setup, "bcss": bcss_in_force(setup), "default_dial": setup.get("default_dial") or _default_dial()}


def check_setup(setup: dict[str, Any]) -> list[str]:
    """The values of a replay file's setup (field names and types are checked by `replayfile`)."""
    out: list[str] = []
    names = [*setup.get("members", []), *setup.get("standalone", [])]
    if not isinstance(setup.get("seed"), int) or isinstance(setup.get("seed"), bool):
        out.append(f"setup.seed: an integer, not {setup.get('seed')!r}")
    if not (isinstance(setup.get("members"), list) and all(isinstance(m, str) for m in names)):
        out.append("setup.members/standalone: lists of server names")
    copies = setup.get("copies")
    if not isinstance(copies, dict) or not all(isinstance(v, list) and v for v in copies.values()):
        out.append("setup.copies: an object mapping each database to its list of servers")
    else:
        out += [
            f"setup.copies.{db}: {s!r} is not a server of the setup"
            for db, servers in sorted(copies.items())
            for s in servers
            if s not in names
        ]
    if setup.get("default_dial") not in _dials():
        out.append(f"setup.default_dial: one of {', '.join(_dials())}, not {setup.get('default_dial')!r}")
    mf = setup.get("mount_fail", 0.0)
    if not isinstance(mf, (int, float)) or isinstance(mf, bool) or not 0 <= mf <= 1:
        out.append(f"setup.mount_fail: a probability from 0 to 1, not {mf!r}")
    bcss = setup.get("bcss")
    if not isinstance(bcss, dict):
        return [*out, "setup.bcss: an object of BCSS options"]
    known = set(Options.__dataclass_fields__)
    out += [f"setup.bcss.{k}: not a BCSS option ({', '.join(sorted(known))})" for k in sorted(set(bcss) - known)]
    defaults = Options()
    for k in sorted(set(bcss) & known):
        want = type(getattr(defaults, k))
        if k != "thresholds" and (type(bcss[k]) is not want):
            out.append(f"setup.bcss.{k}: a {want.__name__}, not {bcss[k]!r}")
    if not out:
        try:
            bcss_in_force(setup)
        except (TypeError, ValueError, KeyError) as exc:
            out.append(f"setup.bcss: unusable options ({exc})")
    return out


def check_call(setup: dict[str, Any], call: str, args: dict[str, Any]) -> str:
    """'' or the argument of a call naming what the setup does not have (`.db: ...`)."""
    servers = {*setup.get("members", []), *setup.get("standalone", [])}
    if "db" in args and args["db"] not in setup.get("copies", {}):
        return f".db: {args['db']!r} is not a database of the setup"
    for key in ("server", "to", "also"):
        if key in args and args[key] not in servers:
            return f".{key}: {args[key]!r} is not a server of the setup"
    if call == "partition":
        bad = [x for g in args.get("groups", []) for x in g if x not in servers]
        return f".groups: {bad[0]!r} is not a server of the setup" if bad else ""
    return ""
