"""The vocabulary states what the checker demands of any system's trace, no more and no less (issue 30): an
attribute a monitor needs (its input-fault table: `model/sr/inputs.py`, `model/am/faults.py`,
`model/pf/faults.py`) is `required` in the tables, never `optional`; every other attribute the simulators always
write is `recorded`; the hand-built traces the checker judges valid (`tests/handbuilt`, `tests/handbuilt/files`) keep
the contract as the checker applies it (`check_trace(strict=False)`: needed attributes, strict formats and values,
the recorders the checker reads, the orderings among the events present). Twins: a needed attribute dropped or
documented optional, a recorder the checker reads changed, are named.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from conformance.harness.protocol_doc import VOCABULARIES, render
from tests.handbuilt.am.cases import CASES as AM_CASES
from tests.handbuilt.files.build import cases as file_cases
from tests.handbuilt.files.build import path_of
from tests.handbuilt.pf.test_handbuilt_pf import CASES as PF_CASES
from tests.handbuilt.sr.cases import CASES as SR_CASES
from traces.contract import check_trace
from traces.io import read_events
from traces.schema import Event
from traces.vocabulary import Vocabulary

pytestmark = pytest.mark.unit


def valid_hand_built() -> Iterator[tuple[str, list[Event]]]:
    """Every hand-built trace the checker must judge valid, by name."""
    for name, build, expected in SR_CASES:
        if not expected:
            yield f"handbuilt sr {name}", list(build())
    for name, (_family, build, expected) in AM_CASES.items():
        if expected == frozenset():
            yield f"handbuilt am {name}", list(build().events)
    for name, events, expected in PF_CASES:
        if not expected:
            yield f"handbuilt pf {name}", list(events)
    for mech, name, _build, expected in file_cases():
        if expected == set():
            yield f"handbuilt-files {mech} {name}", read_events(path_of(mech, name)).events


def misdocumented(vocabs: tuple[Vocabulary, ...]) -> list[str]:
    """Needed attributes the tables do not hold, or hold as optional."""
    out = []
    for v in vocabs:
        for kind, name in sorted(v.needed()):
            doc = v.get(kind)
            a = doc.attr(name) if doc is not None else None
            if a is None:
                out.append(f"{v.mechanism} {kind}.{name}: needed, not in the table")
            elif a.optional:
                out.append(f"{v.mechanism} {kind}.{name}: needed, documented optional")
    return out


def test_every_needed_attribute_is_documented_required() -> None:
    assert misdocumented(VOCABULARIES) == []
    assert all(v.needed() for v in VOCABULARIES if v.mechanism != "core")
    text = render()
    assert "| `RECEIVE` | `forks` | required |" in text and "| `RECEIVE` | `site` | recorded |" in text


def test_twin_a_needed_attribute_documented_optional_is_named() -> None:
    pf = next(v for v in VOCABULARIES if v.mechanism == "pf")
    send = pf.get("REPL_SEND")
    assert send is not None
    attrs = tuple(dataclasses.replace(a, optional=True) if a.name == "recipients" else a for a in send.attrs)
    cut = dataclasses.replace(
        pf, kinds=tuple(dataclasses.replace(k, attrs=attrs) if k is send else k for k in pf.kinds)
    )
    assert misdocumented(tuple(cut if v is pf else v for v in VOCABULARIES)) == [
        "pf REPL_SEND.recipients: needed, documented optional"
    ]


def test_the_valid_hand_built_traces_keep_the_contract_the_checker_applies() -> None:
    traces = list(valid_hand_built())
    assert len(traces) >= 30 and {n.split()[1] for n, _ in traces} == {"sr", "am", "pf"}
    bad = [f"{name}: {f}" for name, events in traces for f in check_trace(events, VOCABULARIES, strict=False)]
    assert bad == []


def _first(events: list[Event], kind: str) -> int:
    return next(i for i, e in enumerate(events) if e.kind == kind)


def test_twin_a_valid_hand_built_trace_with_a_needed_attribute_dropped_or_a_recorder_changed() -> None:
    events = dict(valid_hand_built())["handbuilt sr f1-valid-story"]
    i = _first(events, "RECEIVE")
    dropped = [*events[:i], dataclasses.replace(events[i], attrs={**events[i].attrs, "forks": "mbx"}), *events[i + 1 :]]
    assert ("sr", "RECEIVE", "forks") in {
        (f.mechanism, f.kind, f.attr) for f in check_trace(dropped, VOCABULARIES, strict=False)
    }
    j = _first(events, "HARECEIVE")
    moved = [*events[:j], dataclasses.replace(events[j], node=events[j].attrs["primary"]), *events[j + 1 :]]
    found = {(f.mechanism, f.kind, f.attr) for f in check_trace(moved, VOCABULARIES, strict=False)}
    assert ("sr", "HARECEIVE", "node") in found


def test_lenient_is_what_the_checker_demands_strict_what_the_simulators_keep() -> None:
    events = dict(valid_hand_built())["handbuilt sr f1-valid-story"]
    i = _first(events, "RECEIVE")
    no_site = [
        *events[:i],
        dataclasses.replace(events[i], attrs={k: v for k, v in events[i].attrs.items() if k != "site"}),
        *events[i + 1 :],
    ]
    assert check_trace(no_site, VOCABULARIES, strict=False) == []  # `site` is recorded, compared when present
    assert ("sr", "RECEIVE", "site") in {(f.mechanism, f.kind, f.attr) for f in check_trace(no_site, VOCABULARIES)}
