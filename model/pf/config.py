"""The recorded configuration of a public folder run, read from the trace's context (seeds 001, 003).

`Cluster` records one `PF_CONFIG` event (servers, transport costs, Exchange versions, preferred backfill
servers, the parameters that differ from the catalogue, the mail latency bound); the kernel records
`NET_CONFIG` when the network changes. Monitors take every duration, every sort key of backfill source
selection (BF-011) and the convergence bound (PF-035) from here, never from the event they judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from model.pf.state import Ctx, Params, default_params
from traces.schema import Event

PF_CONFIG = "PF_CONFIG"


def _table(items: Sequence[str]) -> dict[str, str]:
    return {k: v for k, _, v in (str(i).partition("=") for i in items)}


@dataclass(frozen=True, slots=True)
class RunConfig:
    """What the run's context says: per-store contexts, the parameters and the latency bound."""

    servers: tuple[str, ...] = ()
    costs: dict[str, dict[str, int]] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    preferred: tuple[str, ...] = ()
    params: Params = field(default_factory=default_params)
    latency_max_ms: int | None = None

    def ctx(self, store: str) -> Ctx:
        return Ctx(store, dict(self.costs.get(store, {})), dict(self.versions), self.preferred, self.params)

    @staticmethod
    def of(ev: Event, before: RunConfig | None = None) -> RunConfig:
        """Apply one context event (PF_CONFIG or NET_CONFIG) to the configuration known so far."""
        base = before or RunConfig()
        a = ev.attrs
        if ev.kind == "NET_CONFIG":
            lat = a.get("latency_ms")
            latency = int(lat[1]) if isinstance(lat, list) and len(lat) == 2 else base.latency_max_ms
            return RunConfig(base.servers, base.costs, base.versions, base.preferred, base.params, latency)
        costs: dict[str, dict[str, int]] = {}
        for key, value in _table(a.get("costs", [])).items():
            src, _, dst = key.partition(">")
            costs.setdefault(src, {})[dst] = int(value)
        lat = a.get("latency_ms")
        return RunConfig(
            tuple(a.get("servers", [])),
            costs,
            {k: int(v) for k, v in _table(a.get("versions", [])).items()},
            tuple(a.get("preferred", [])),
            Params.from_json(a.get("params") or None),
            int(lat[1]) if isinstance(lat, list) and len(lat) == 2 else base.latency_max_ms,
        )


RESTATED_CONTEXT = ("costs", "versions", "preferred", "params")  # what a REPLICA_CREATE may restate


def restated_config(cfg: RunConfig, store: str, attrs: dict) -> str | None:
    """A REPLICA_CREATE may restate the store's context; it must agree with PF_CONFIG (else a violation)."""
    ctx = cfg.ctx(store)
    diffs = []
    if "costs" in attrs and sorted(attrs["costs"]) != ctx.encode_costs():
        diffs.append(f"costs {sorted(attrs['costs'])} vs {ctx.encode_costs()}")
    if "versions" in attrs and sorted(attrs["versions"]) != ctx.encode_versions():
        diffs.append(f"versions {sorted(attrs['versions'])} vs {ctx.encode_versions()}")
    if "preferred" in attrs and tuple(attrs["preferred"]) != ctx.preferred:
        diffs.append(f"preferred {attrs['preferred']} vs {list(ctx.preferred)}")
    if "params" in attrs and Params.from_json(attrs["params"] or None) != ctx.params:
        diffs.append(f"params {attrs['params']} vs {ctx.params.to_json()}")
    return None if not diffs else "recorded a context that differs from PF_CONFIG: " + "; ".join(diffs)


def restated_data(cfg: RunConfig, store: str, attrs: dict) -> dict:
    """What a REPLICA_CREATE restated of its store's context, and what PF_CONFIG gives (for a violation)."""
    ctx = cfg.ctx(store)
    expected = {
        "costs": ctx.encode_costs(),
        "versions": ctx.encode_versions(),
        "preferred": list(ctx.preferred),
        "params": ctx.params.to_json(),
    }
    restated = [k for k in RESTATED_CONTEXT if k in attrs]
    return {"observed": {k: attrs[k] for k in restated}, "expected": {k: expected[k] for k in restated}}
