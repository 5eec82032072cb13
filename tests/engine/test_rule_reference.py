"""A pickled rule is a reference to its table's row (`traces.verdict.Rule.__reduce__`), resolved by
`_rule_by_name`, which remembers each (table, name) while the table's module is the one in `sys.modules` (issue 33,
session 17: every copy of an explored am state looked the table up again).

- A rule round-trips to the very object, the first time and from what was remembered.
- A table's module replaced in `sys.modules` (a reload) is looked up again: the reference resolves to the new
  table's row.

Twin: the lookup remembered without the module check gives the old table's row after the reload, and is caught.
"""

from __future__ import annotations

import pickle
import types

from traces import verdict
from traces.verdict import Rule

TABLE = "model.am.rules"


def _a_rule() -> Rule:
    import importlib

    return verdict.rules_in(importlib.import_module(TABLE))[-1]


def test_a_rule_round_trips_to_its_row() -> None:
    rule = _a_rule()
    verdict._BY_NAME.clear()
    assert pickle.loads(pickle.dumps(rule)) is rule  # looked up
    assert pickle.loads(pickle.dumps(rule)) is rule  # remembered


def _reloaded(monkeypatch) -> Rule:
    """`TABLE` replaced in `sys.modules` by a module whose table holds a new row of the same name."""
    rule = _a_rule()
    pickle.loads(pickle.dumps(rule))  # remembered
    new = Rule(rule.name, rule.requirement, rule.kind, rule.statement, rule.params, rule.mechanism, TABLE)
    module = types.ModuleType(TABLE)
    module.RULES = (new,)  # type: ignore[attr-defined]
    monkeypatch.setitem(verdict.sys.modules, TABLE, module)
    return new


def test_a_replaced_table_is_looked_up_again(monkeypatch) -> None:
    new = _reloaded(monkeypatch)
    assert verdict._rule_by_name(TABLE, new.name) is new


def test_twin_remembered_without_the_module_check_gives_the_old_row(monkeypatch) -> None:
    new = _reloaded(monkeypatch)
    old_module = verdict._BY_NAME[(TABLE, new.name)][0]
    fake_sys = types.SimpleNamespace(modules={TABLE: old_module})  # the check always passes
    monkeypatch.setattr(verdict, "sys", fake_sys)
    assert verdict._rule_by_name(TABLE, new.name) is not new
