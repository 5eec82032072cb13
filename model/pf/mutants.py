"""Planted bugs: one per invariant, each a twin that the monitor (and the stateful search) must catch.

A mutant replaces exactly one decision point: a field of `decisions.Decisions`, or one method of `node.Store`.
An overridden timer method calls `Store.tick_...(self)`, not `super()`: a method using `super()` holds a
`__class__` cell, which `model.kernel.sim.closure_in` counts as a closure (timers are records, issue 33).
`MUTANTS` maps the mutant's name to a simulate-like function; `EXPECTED_RULE` is the rule that must find it
(`EXPECTED` its name), `ALSO_RULES` (`ALSO`) the rules that legitimately find it too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any

from model.pf import rules as R
from model.pf.cnset import CNSet
from model.pf.events import CONTENT_REPL, response_code, send_attrs
from model.pf.node import Store
from model.pf.sim import simulate
from model.pf.state import ACTIVE, HIERARCHY, Entry, Msg, default_params
from traces.verdict import Rule


def _version_first(missing: CNSet, cands: Any) -> list[tuple[str, CNSet]]:
    """BF-011 twin: version sorts before transport cost (the pre-2003 emphasis)."""
    out, left = [], missing
    for c in sorted(
        (c for c in cands if c.count > 0),
        key=lambda c: (c.down, not c.preferred, -c.version, c.cost, -c.count, c.server),
    ):
        take = c.cnset & left
        if take:
            out.append((c.server, take))
            left = left - take
    return out


def _file_held(rep: Any, missing: CNSet, sender: str, now: int, ctx: Any) -> Entry:
    """BF-002 twin: the entry also lists change numbers the store already holds."""
    e = R.file_entry(rep, missing, sender, now, ctx)
    return e.but(cns=e.cns | rep.cnset)


def _never_backfill(rep: Any, missing: CNSet, sender: str, now: int, ctx: Any) -> Entry:
    """PF-035 twin: missing changes are filed but never requested (backfill switched off)."""
    return Entry(missing, now + 10**13, 0, True)


class _PackTwoFolders(Store):
    """PF-010 twin: the content of two folders goes out in one content replication message."""

    def tick_content(self) -> None:
        ready = [
            f
            for f, r in sorted(self.replicas.items())
            if f != HIERARCHY and r.state == ACTIVE and r.unsent and R.others(r)
        ]
        if len(ready) >= 2:
            first, second = ready[:2]
            changes: list[Any] = []
            for fid in (first, second):
                rep, cns = R.take_unsent(self.replicas[fid], self.sim.now_ms, self.p)
                self.replicas[fid] = rep
                changes.extend(self.data[fid][cn] for cn in cns)
            self._send(
                first,
                CONTENT_REPL,
                R.others(self.replicas[first]),
                changes=tuple(changes),
                reason="broadcast",
            )
        Store.tick_content(self)


class _ContentToAll(Store):
    """PF-016 twin: content replication addressed to every store of the hierarchy."""

    def _broadcast(self, fid: str) -> None:
        rep = self.replicas[fid]
        if fid == HIERARCHY or not rep.unsent:
            return super()._broadcast(fid)
        rep, cns = R.take_unsent(rep, self.sim.now_ms, self.p)
        self.replicas[fid] = rep
        everyone = tuple(s for s in sorted(self.c.stores) if s != self.name)
        for batch in R.pack([self.data[fid][cn] for cn in cns], False, self.p):
            self._send(fid, CONTENT_REPL, everyone, changes=batch, reason="broadcast")


class _ReplicateLocal(Store):
    """PF-004 twin: a Restrictions/Views folder is replicated like an ordinary one."""

    def tick_content(self) -> None:
        for fid in sorted(self.local_only):
            changes = tuple(self.data.get(fid, {}).values())
            others = tuple(s for s in sorted(self.c.stores) if s != self.name)
            if changes and others:
                self.msgs += 1
                msg = Msg(
                    f"{self.origin}/{self.msgs}",
                    CONTENT_REPL,
                    fid,
                    self.name,
                    others,
                    CNSet.of(c.cn for c in changes),
                    changes,
                    reason="broadcast",
                )
                self.emit(fid, "REPL_SEND", **send_attrs(msg))
                self.data[fid] = {}
        Store.tick_content(self)


class _RedirectToPending(Store):
    """BF-035 twin: clients are referred to a replica in delete pending state."""

    def client_access(self, fid: str) -> str:
        view = self.views.get(fid, {})
        pending = sorted(s for s, st in view.items() if st != ACTIVE and s != self.name)
        pending += sorted(s for s in self.c.stores if s not in view and s != self.name)
        if pending:
            self.emit(fid, "CLIENT_ACCESS", outcome="redirect", target=pending[0])
            return pending[0]
        return super().client_access(fid)


class _EarlyStatus(Store):
    """PF-029 twin: the status thread broadcasts for every folder changed since the last run."""

    def tick_status(self) -> None:
        for fid, rep in list(self.replicas.items()):
            if rep.expiry_ms is not None and rep.state == ACTIVE:
                self.replicas[fid] = rep.but(expiry_ms=self.sim.now_ms)
        Store.tick_status(self)


class _BroadcastWhenIdle(Store):
    """PF-024 twin: every content replication event sends a message, even with nothing to replicate."""

    def tick_content(self) -> None:
        for fid, rep in sorted(self.replicas.items()):
            recipients = R.others(rep)
            if fid != HIERARCHY and rep.state == ACTIVE and not rep.unsent and recipients:
                self._send(fid, CONTENT_REPL, recipients, reason="broadcast")
        Store.tick_content(self)


class _ResponseToAll(Store):
    """BF-018 twin: backfill responses are addressed to every replica, not only the requester."""

    def _send(self, fid: str, code: int, recipients: tuple[str, ...], **kw: Any) -> Msg:
        if code == response_code(fid):
            recipients = tuple(sorted({*recipients, *R.others(self.replicas[fid])}))
        return super()._send(fid, code, recipients, **kw)


def _pack_ignoring_deletes(changes: Any, hierarchy: bool, p: Any) -> list[tuple[Any, ...]]:
    """PF-011 twin: hierarchy packing counts folders but not folder deletes (the 500-delete limit ignored)."""
    return R.pack(changes, hierarchy, replace(p, deleted_folder_limit=10**9))


def _rules(**kw: Any) -> R.Rules:
    return replace(R.DECISIONS, **kw)


_RULE_MUTANTS: dict[str, tuple[Rule, R.Rules]] = {
    "delete-without-status": (R.DELETE_NOW_AFTER_STATUS, _rules(delete_ready=lambda rep, p: True)),
    "status-claims-requester-set": (
        R.NO_CONTENT_LOSS,
        _rules(extras={"status_cnset": lambda own, req: own | req}),
    ),
    "answer-non-subset": (R.STATUS_STRICT_SUBSET, _rules(should_answer=lambda req, own, rr: True)),
    "pending-confirms-pending": (R.NO_CONTENT_LOSS, _rules(may_answer=lambda state, rr: state != "delete_now")),
    "ignore-backfill-timeout": (R.BACKFILL_BEFORE_TIMEOUT, _rules(entry_due=lambda e, now: True)),
    "request-held-changes": (R.BACKFILL_WITHOUT_GAP, _rules(file_entry=_file_held)),
    "version-before-cost": (R.BACKFILL_SOURCE_ORDER, _rules(select_sources=_version_first)),
    "ignore-size-limit": (
        R.PACKING_LIMITS,
        _rules(pack=lambda changes, h, p: [tuple(changes)] if changes else []),
    ),
    "stale-cnset": (
        R.CNSET_CARRIED,
        _rules(
            extras={
                "message_cnset": lambda r: (
                    r.cnset - r.unsent - CNSet.of(c for c in r.cnset if c.origin.startswith(r.store + "#"))
                )
            }
        ),
    ),
    "never-backfill": (R.CONVERGENCE, _rules(file_entry=_never_backfill)),
    "ignore-delete-limit": (R.PACKING_LIMITS, _rules(pack=_pack_ignoring_deletes)),
}
_STORE_MUTANTS: dict[str, tuple[Rule, type[Store]]] = {
    "pack-two-folders": (R.PACKING_SEPARATION, _PackTwoFolders),
    "content-to-all-stores": (R.CONTENT_TO_REPLICAS_ONLY, _ContentToAll),
    "replicate-local-folder": (R.NON_REPLICATING_FOLDER, _ReplicateLocal),
    "redirect-to-pending": (R.REDIRECT_TO_ACTIVE_REPLICA, _RedirectToPending),
    "status-before-expiry": (R.STATUS_EXPIRY, _EarlyStatus),
    "response-to-all": (R.BACKFILL_RESPONSE_ADDRESSING, _ResponseToAll),
    "broadcast-when-idle": (R.NO_EMPTY_BROADCAST, _BroadcastWhenIdle),
}

_SCENARIO: dict[str, dict[str, Any]] = {
    "pending-confirms-pending": {"concurrent_removal": True},  # needs a rare interleaving
    # the default limit (500 deletes) is never reached by a workload; a run with a limit of one shows it
    "ignore-delete-limit": {"params": replace(default_params(), deleted_folder_limit=1)},
}

MUTANTS: dict[str, Callable[..., list]] = {
    **{name: partial(simulate, rules=rules, **_SCENARIO.get(name, {})) for name, (_, rules) in _RULE_MUTANTS.items()},
    **{name: partial(simulate, store_class=cls) for name, (_, cls) in _STORE_MUTANTS.items()},
}
EXPECTED_RULE: dict[str, Rule] = {
    **{name: rule for name, (rule, _) in _RULE_MUTANTS.items()},
    **{name: rule for name, (rule, _) in _STORE_MUTANTS.items()},
}
# Rules that also (and legitimately) catch a mutant, often first: a planted bug in how entries are filed
# shows in the recorded BACKFILL_FILE before its consequences do (issue 9, family 1).
ALSO_RULES: dict[str, tuple[Rule, ...]] = {
    "never-backfill": (R.BACKFILL_ENTRY_DERIVED,),
    "request-held-changes": (R.BACKFILL_ENTRY_DERIVED,),
    # a status message carrying its own CNSet joined with the requester's is, first, a message that does not
    # carry the sender's current CNSet (PF-013): the loss it leads to (BF-033) comes later, if at all
    "status-claims-requester-set": (R.CNSET_CARRIED,),
}
# the same by rule name, as violations name them (the harness and the reports compare `Violation.rule`)
EXPECTED: dict[str, str] = {name: rule.name for name, rule in EXPECTED_RULE.items()}
ALSO: dict[str, tuple[str, ...]] = {name: tuple(r.name for r in rules) for name, rules in ALSO_RULES.items()}
RULE_MUTANTS = {name: rules for name, (_, rules) in _RULE_MUTANTS.items()}
STORE_MUTANTS = {name: cls for name, (_, cls) in _STORE_MUTANTS.items()}
