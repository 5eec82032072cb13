#!/usr/bin/env python3
"""A reference shadow redundancy transport speaking the haconform stdio protocol (standard library only).

It does not import haconform: it is what an implementer in any language would write. The transport is
deliberately simple and conformant: a message is taken only while its primary is up and reachable; the
primary makes the shadow following the attempt plan of ShadowMessagePreference and the retry counts,
acknowledges the sender only after the shadow's acknowledgement (or rejects/accepts without one, as
RejectMessageOnShadowFailure says), then processes every fork at once (mailbox delivery or hand-off to
the next hop), keeps the message in Safety Net, and tells the shadow; the shadow releases its copy after
every fork's discard notification. Safety Net resubmits only mailbox forks (duplicate detection drops
them). State is written to `--state-dir` after every request, so a `kill -9` loses nothing acknowledged.

    python examples/sut/sr_node.py --state-dir DIR [--bug ack-before-shadow]

`--bug ack-before-shadow` plants one bug: the sender is acknowledged before the shadow is made (SR-031).
Protocol: conformance/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REJECTION = "451 4.4.0 Message failed to be made redundant"
ACK = "250 2.6.0 Queued mail for delivery"
MAILBOX = ("mbx", "journal")


class Transport:
    def __init__(self, state: dict[str, Any], bug: str) -> None:
        self.s = state
        self.bug = bug
        self.out: list[dict[str, Any]] = []
        self.now = 0

    # --- set-up -------------------------------------------------------------------------------------
    @staticmethod
    def fresh(setup: dict[str, Any]) -> dict[str, Any]:
        """The servers are the ones the harness gives in `topology` (it records them as configuration)."""
        servers = {
            name: {"site": srv["site"], "dag": srv["dag"], "up": True, "epoch": 1, "safetynet": {}}
            for name, srv in setup["topology"].items()
            if srv["version"] == "2013"
        }
        hubs = [name for name, srv in setup["topology"].items() if srv["version"] == "2010"]
        return {"setup": setup, "servers": servers, "isolated": [], "messages": {}, "hubs": hubs}

    def emit(self, node: str, entity: str, kind: str, **attrs: Any) -> None:
        self.out.append({"ts_ms": self.now, "node": node, "entity": entity, "kind": kind, "attrs": attrs})

    def boundary(self, name: str) -> str:
        srv = self.s["servers"][name]
        return f"dag:{srv['dag']}" if srv["dag"] else f"site:{srv['site']}"

    def usable(self, name: str) -> bool:
        return self.s["servers"][name]["up"] and name not in self.s["isolated"]

    def db(self, name: str) -> str:
        return f"{name}-db{self.s['servers'][name]['epoch']}"

    def plan(self, primary: str) -> list[str]:
        cfg, srv = self.s["setup"], self.s["servers"][primary]
        extra = 1 if cfg["retry_meaning"] == "retries" else 0
        remote, local = ["remote"] * (cfg["max_remote"] + extra), ["local"] * (cfg["max_local"] + extra)
        dag = srv["dag"]
        multi = bool(dag) and len({s["site"] for s in self.s["servers"].values() if s["dag"] == dag}) > 1
        if not multi:
            return local
        return {"PreferRemote": remote + local, "RemoteOnly": remote, "LocalOnly": local}[cfg["preference"]]

    # --- operations ---------------------------------------------------------------------------------
    def op_servers(self) -> list[str]:
        return sorted(self.s["servers"])

    def op_submit(self, msg: str, primary: str, forks: list[str], origin: str) -> None:
        if primary not in self.s["servers"] or not self.usable(primary):
            return  # the sender cannot connect; it will try again later (not modelled here)
        cfg, srv = self.s["setup"], self.s["servers"][primary]
        hubs = [h for h in self.s["hubs"] if self.s["setup"]["topology"][h]["site"] == srv["site"]]
        kept = [f for f in forks if not f.startswith("hub:") or f[4:] in hubs]
        forks = kept or ["mbx"]
        plan = self.plan(primary)
        self.emit(
            primary,
            msg,
            "RECEIVE",
            inst=1,
            sender=f"{origin}-sender",
            origin=origin,
            boundary=self.boundary(primary),
            site=srv["site"],
            db=self.db(primary),
            forks=forks,
            sender_xshadow=origin == "hub2010",
            xshadow_advertised=False,
        )
        self.s["messages"][msg] = {"primary": primary, "forks": forks}  # every received message ends in a SNAPSHOT
        shadow = None
        if self.bug == "ack-before-shadow":
            self.emit(primary, msg, "ACCEPT", inst=1, redundant=True, acked=True, response=ACK)
        if cfg["enabled"]:
            shadow = self.make_shadow(msg, primary, forks, plan)
            if shadow is None and cfg["reject_on_failure"]:
                self.emit(primary, msg, "REJECT", inst=1, response=REJECTION)
                return
        if self.bug != "ack-before-shadow":
            self.emit(primary, msg, "ACCEPT", inst=1, redundant=shadow is not None, acked=True, response=ACK)
        for fork in forks:  # processed at once: delivered or handed to the next hop
            if fork.split(":", 1)[0] in MAILBOX:
                self.emit(primary, msg, "DELIVER", inst=1, fork=fork, via="primary")
            else:
                hop = fork.split(":", 1)[1] if ":" in fork else "sender"
                self.emit(primary, msg, "SEND", inst=1, fork=fork, next_hop=hop, via="primary")
        self.emit(primary, msg, "SAFETYNET", inst=1, role="primary")
        srv["safetynet"][msg] = {"forks": forks, "until": self.now + cfg["safety_net_hold_ms"]}
        if shadow is not None:  # the shadow's next XQUERYDISCARD (over the session just used) finds the discards
            self.emit(
                shadow,
                f"hb:{shadow}>{primary}",
                "XQUERYDISCARD",
                primary=primary,
                ok=True,
                reason="session",
                db=self.db(primary),
                held=1,
            )
            for fork in forks:
                self.emit(shadow, msg, "DISCARD_NOTIFY", inst=1, fork=fork, primary=primary)
            self.emit(shadow, msg, "HADISCARD", inst=1, primary=primary)

    def make_shadow(self, msg: str, primary: str, forks: list[str], plan: list[str]) -> str | None:
        site = self.s["servers"][primary]["site"]
        if not plan:
            self.emit(
                primary,
                msg,
                "HAREDIRECTFAIL",
                inst=1,
                shadow="",
                reason="no shadow attempts allowed",
                final=True,
                **{"try": 0},
            )
            return None
        for n, where in enumerate(plan, 1):
            cands = [
                name
                for name, srv in sorted(self.s["servers"].items())
                if name != primary
                and self.boundary(name) == self.boundary(primary)
                and (srv["site"] != site) == (where == "remote")
            ]
            if not cands:  # nobody in the boundary may hold it: the attempt is given up without a session
                self.emit(
                    primary,
                    msg,
                    "HAREDIRECTFAIL",
                    inst=1,
                    shadow="",
                    reason="No suitable shadow servers",
                    final=n == len(plan),
                    **{"try": n},
                )
                continue
            usable = [name for name in cands if self.usable(name)]
            target = (usable or cands)[0]
            if not usable:  # a down or cut-off server is only found out by trying it
                self.emit(
                    primary,
                    msg,
                    "HAREDIRECT",
                    inst=1,
                    shadow=target,
                    site=where,
                    shadow_site=self.s["servers"][target]["site"],
                    site_of_primary=site,
                    **{"try": n},
                )
                self.emit(
                    primary,
                    msg,
                    "HAREDIRECTFAIL",
                    inst=1,
                    shadow=target,
                    reason="unreachable",
                    final=n == len(plan),
                    **{"try": n},
                )
                continue
            self.emit(
                primary,
                msg,
                "HAREDIRECT",
                inst=1,
                shadow=target,
                site=where,
                shadow_site=self.s["servers"][target]["site"],
                site_of_primary=site,
                **{"try": n},
            )
            self.emit(
                target,
                msg,
                "HARECEIVE",
                inst=1,
                primary=primary,
                boundary=self.boundary(target),
                primary_db=self.db(primary),
                forks=forks,
            )
            self.emit(primary, msg, "SHADOW_ACK", inst=1, shadow=target)
            return target
        return None

    def op_advance(self, ms: int) -> None:
        end = self.now + ms
        due = sorted(  # every server's expiries in time order: each leaves Safety Net at its own hold time
            (item["until"], name, msg)
            for name, srv in self.s["servers"].items()
            if srv["up"]
            for msg, item in srv["safetynet"].items()
            if item["until"] <= end
        )
        for until, name, msg in due:
            self.now = max(self.now, until)
            self.emit(name, msg, "SAFETYNET_EXPIRE", inst=1)
            del self.s["servers"][name]["safetynet"][msg]
        self.now = end

    def op_crash(self, server: str) -> None:
        self.s["servers"][server]["up"] = False

    def op_restart(self, server: str, new_database: bool) -> None:
        srv = self.s["servers"][server]
        if srv["up"]:
            return  # restarting a running server changes nothing
        srv["up"] = True
        if new_database:
            srv["epoch"] += 1
            srv["safetynet"] = {}

    def op_isolate(self, server: str) -> None:
        if server not in self.s["isolated"]:
            self.s["isolated"].append(server)

    def op_heal(self) -> None:
        self.s["isolated"] = []

    def op_safetynet_resubmit(self, server: str) -> None:
        srv = self.s["servers"][server]
        if not self.usable(server):
            return
        for msg, item in sorted(srv["safetynet"].items()):
            for fork in item["forks"]:
                if fork.split(":", 1)[0] in MAILBOX:  # never across the boundary, never to a 2010 Hub
                    self.emit(server, msg, "RESUBMIT", inst=1, fork=fork, source="SAFETYNET")
                    self.emit(server, msg, "DUPLICATEDELIVER", inst=1, fork=fork, via="safetynet")

    def op_finish(self, quiet_ms: int) -> None:
        for srv in self.s["servers"].values():
            srv["up"] = True
        self.s["isolated"] = []
        self.op_advance(quiet_ms)
        for msg in sorted(self.s["messages"]):
            self.emit("sim", msg, "SNAPSHOT", quiesced=True)


def save(state_dir: Path, state: dict[str, Any]) -> None:
    tmp = state_dir / "state.json.tmp"
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, state_dir / "state.json")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--bug", choices=["ack-before-shadow"], default="")
    args = ap.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    path = args.state_dir / "state.json"
    state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    for line in sys.stdin:
        req = json.loads(line)
        t = Transport(state or {}, args.bug)
        t.now = req["now_ms"]
        result: Any = None
        try:
            if req["op"] == "setup":
                resumed = state is not None
                if not resumed:
                    state = Transport.fresh(req["args"])
                result = {"resumed": resumed}
            else:
                t.s = state
                result = getattr(t, "op_" + req["op"])(**req["args"])
            reply: dict[str, Any] = {"id": req["id"], "events": t.out, "result": result}
        except (KeyError, TypeError, AttributeError) as exc:
            reply = {"id": req["id"], "events": [], "error": f"{type(exc).__name__}: {exc}"}
        if state is not None:
            save(args.state_dir, state)
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
