#!/usr/bin/env python3
"""A reference shadow redundancy transport speaking the haconform stdio protocol (standard library only).

It does not import haconform: it is what an implementer in any language would write. The servers' behaviour
is `sr_transport.py` and `sr_maintain.py` beside this file (seed 000: creation, processing, heartbeats, discard
notifications, promotion, expiry, Safety Net); this file reads requests, answers them and writes the state to
`--state-dir` after every request, so a `kill -9` loses nothing acknowledged. It records every kind of
`model/sr/vocabulary.py` a transport records (SR_CONFIG and SNAPSHOT's context are the harness's).

    python examples/sut/sr_node.py --state-dir DIR [--bug BUG]

`--bug` plants one bug, one per family of rules (issue 34), each caught by its own rule:

- `ack-before-shadow`: the sender is acknowledged before the shadow is made (shadow-before-ack, SR-031)
- `advertise-xshadow`: the 2013 server advertises XSHADOW to the sender (no-xshadow-advertised, SR-036)
- `early-shadow-timeout`: a stalled shadow session times out after half the inactivity time-out
  (session-timeout, SR-039)
- `slow-heartbeat`: heartbeats every two ShadowHeartbeatFrequency (heartbeat-frequency, SR-055)
- `promote-unseen-db`: a failed query promotes as if the primary's database had changed
  (promotion-db-change, SR-059)
- `release-before-all-forks`: the shadow is released at its first fork's notification
  (all-forks-before-release, SR-063)
- `short-safetynet-hold`: Safety Net keeps messages half of SafetyNetHoldTime (safetynet-hold, SR-065)
- `resubmit-external`: Safety Net also resubmits forks to next hops outside the boundary
  (no-safetynet-resubmit-across-boundary, SR-033)

Protocol: conformance/PROTOCOL.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sr_transport import Transport

BUGS = (
    "ack-before-shadow",
    "advertise-xshadow",
    "early-shadow-timeout",
    "slow-heartbeat",
    "promote-unseen-db",
    "release-before-all-forks",
    "short-safetynet-hold",
    "resubmit-external",
)


class Node(Transport):
    """The protocol's operations on the transport servers."""

    def op_servers(self) -> list[str]:
        return sorted(self.s["servers"])

    def op_submit(self, msg: str, primary: str, forks: list[str], origin: str) -> None:
        self.submit(msg, primary, forks, origin)

    def op_advance(self, ms: int) -> None:
        self.advance(ms)

    def op_crash(self, server: str) -> None:
        self.crash(server)

    def op_restart(self, server: str, new_database: bool) -> None:
        self.restart(server, new_database)

    def op_isolate(self, server: str) -> None:
        if server not in self.s["isolated"]:
            self.s["isolated"].append(server)

    def op_heal(self) -> None:
        self.s["isolated"] = []

    def op_safetynet_resubmit(self, server: str) -> None:
        self.safetynet_resubmit(server)

    def op_finish(self, quiet_ms: int) -> None:
        """Fairness: every server back with its database, the network healed, the quiet tail, SNAPSHOTs."""
        for name in sorted(self.s["servers"]):
            self.restart(name, False)
        self.s["isolated"] = []
        self.advance(quiet_ms)
        for msg in sorted(self.s["messages"]):
            self.emit("sim", msg, "SNAPSHOT", quiesced=True)


def save(state_dir: Path, state: dict[str, Any]) -> None:
    tmp = state_dir / "state.json.tmp"
    tmp.write_text(json.dumps(state), encoding="utf-8")
    os.replace(tmp, state_dir / "state.json")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--state-dir", required=True, type=Path)
    ap.add_argument("--bug", choices=BUGS, default="")
    args = ap.parse_args()
    args.state_dir.mkdir(parents=True, exist_ok=True)
    path = args.state_dir / "state.json"
    state = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    for line in sys.stdin:
        req = json.loads(line)
        t = Node(state or {}, args.bug)
        t.now = req["now_ms"]
        result: Any = None
        try:
            if req["op"] == "setup":
                resumed = state is not None
                if not resumed:
                    state = Transport.fresh(req["args"], req["now_ms"])
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
