"""Choice points in the harness (issue 33): the object a model draws its choices from, and a step, a system's
construction or a fairness end applied under a script of outcome indices (the explorer's branching, and the replay
of what it found). The system's own seeded chooser is put back after each, so a chooser is never part of a state.
Split from `conformance.harness.core` (session 13) to keep each module to one job."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from conformance.harness.failure import Call, StepError
from model.kernel.choice import ChoiceNeeded, ScriptedChooser, constructing


def chooser_host(system: Any) -> Any:
    """The object whose `choices` (`model.kernel.choice.Chooser`) a model draws its random decisions from (issue
    33): `system.sim`, `system.env` or `system` itself, the first that has one; None for a system that has none
    (a system under test, which cannot be scripted: a replay file's `choices` say what the model took)."""
    for host in (getattr(system, "sim", None), getattr(system, "env", None), system):
        if host is not None and hasattr(host, "choices"):
            return host
    return None


class ExtendingChooser(ScriptedChooser):
    """A `ScriptedChooser` that takes the first outcome at a choice its script has not decided (noting it in
    `made`) instead of raising `ChoiceNeeded`: the explorer applies each resolution of a step once."""

    def _take(self, label: str, outcomes: Sequence[Any]) -> Any:
        if len(outcomes) > 1 and self.pos >= len(self.script):
            self.script.append(0)
        return super()._take(label, outcomes)


@contextmanager
def scripted(
    system: Any, script: Sequence[int], ranges: str = "ends", extend: bool = False
) -> Iterator[ScriptedChooser | None]:
    """One step applied under a `ScriptedChooser(script, ranges)` (issue 33: the explorer's choice points, and
    their replay; `extend`: an `ExtendingChooser`); the system's own chooser is put back after it, so the
    chooser is never part of a state. A host whose `branching` names labels branches on those only, the others
    decided by its own chooser (the seed)."""
    host = chooser_host(system)
    if host is None:
        yield None
        return
    before = host.choices
    chooser = (ExtendingChooser if extend else ScriptedChooser)(list(script), ranges)
    only = getattr(host, "branching", None)  # the labels branched on (`Simulator.branching`); the rest: `before`
    if only is not None:
        chooser.only, chooser.fallback = frozenset(only), before
    host.choices = chooser
    try:
        yield chooser
    finally:
        host.choices = before


def built(
    build: Callable[[], Any],
    script: Sequence[int],
    ranges: str = "ends",
    only: Collection[str] | None = None,
    extend: bool = False,
) -> tuple[Any, ScriptedChooser]:
    """`build()` (a system built, and whatever the driver does at its start) with the construction's choices made
    by a `ScriptedChooser(script, ranges)` (issue 33, session 13: the explorer's roots, and their replay; `extend`:
    an `ExtendingChooser`; `only`: the labels branched on, the others drawn by the seed). The host's own seeded
    chooser is put back afterwards, so the chooser is never part of a state; returns the system and the chooser
    (`made`: the choices taken). A system that draws no choice at construction leaves the chooser unused."""
    chooser = (ExtendingChooser if extend else ScriptedChooser)(list(script), ranges)
    if only is not None:
        chooser.only = frozenset(only)
    with constructing(chooser):
        system = build()
    host = chooser_host(system)
    if host is not None and host.choices is chooser and chooser.fallback is not None:
        host.choices = chooser.fallback
    return system, chooser


def construction_of(build: Callable[[], Any], data: Any, only: Collection[str] | None = None) -> Any:
    """A replay's system built under its file's `construction` (`{"choices": [...], "ranges": ...}`, the root's
    choices the explorer took; issue 33), or as the seed builds it when the file has none. A model that makes
    more or fewer choices than recorded is a `StepError` naming the field."""
    if data is None:
        return build()
    if not isinstance(data, dict) or not isinstance(script := data.get("choices"), list):
        raise StepError("field 'construction' must be an object with 'choices' (a list of outcome indices)")
    if not all(isinstance(k, int) and k >= 0 for k in script):
        raise StepError(f"field 'construction.choices' must be a list of non-negative integers, not {script!r}")
    try:
        system, chooser = built(build, script, data.get("ranges", "ends"), only)
    except ChoiceNeeded as exc:
        raise StepError(f"field 'construction.choices': the model made more choices than recorded: {exc}") from exc
    if chooser.fallback is not None and chooser.pos != len(script):
        raise StepError(
            f"field 'construction.choices': {len(script)} recorded, the model made {chooser.pos} "
            "(not this model's construction)"
        )
    return system


def scripted_end(session: Any, calls: list[Call], end: Any) -> None:
    """The fairness end under a replay file's `"end"` resolution (the explorer's, `conformance.explore.ends`),
    followed where it applies: a choice past the recorded ones takes its first outcome, as the explorer's did, and
    recorded ones the model does not come to are left (a file found on a mutant is replayed on the model, whose end
    may send fewer messages: it must be judged, not refused). A malformed field is a `StepError` naming it."""
    script = end.get("choices") if isinstance(end, dict) else None
    if not isinstance(script, list) or not all(isinstance(k, int) and k >= 0 for k in script):
        raise StepError(f"field 'end.choices' must be a list of non-negative integers, not {script!r}")
    with scripted(session.system, script, end.get("ranges", "ends"), extend=True):
        for call in calls:
            session.apply(call)
