"""pyarrow loaded without pandas, where nothing converts to or from pandas (issue 32, startup).

pyarrow imports pandas (about 0.2-0.3 CPU s and 33-40 MiB) the first time it converts Python values (`pa.array`,
reading a Parquet file), only to ask whether they are pandas objects; neither a check nor a Spark task of the check
converts any. `arrow_without_pandas` answers that first question "no pandas" (pandas hidden for one conversion), and
pyarrow does not ask again; a conversion to or from pandas (`to_pandas`, `from_pandas`) still imports it then,
pyarrow retrying the import there, and a module that imports pandas itself gets it.

Used by `haconform check` in its own process (`conformance.cli.main`, session 15) and, since session 28, by the
Python worker daemon of the check's Spark session (`spark_trace_check.worker_daemon`): the daemon's start is on the
critical path of every Spark check's first job (measured: 0.61-0.68 -> 0.45 CPU s, peak RSS 137 -> 104 MiB), and
its forked workers share what it loaded. The question is asked when pyarrow loads, not at the start: a check of JSON
Lines loads neither pyarrow nor numpy. Tests: tests/unit/test_cli_imports.py, tests/spark/test_worker_daemon_imports.py.
"""

from __future__ import annotations

import importlib.util
import sys
from importlib.abc import MetaPathFinder
from typing import Any


class _NoPandas(MetaPathFinder):
    """Answers an import of pandas with ModuleNotFoundError (`arrow_without_pandas`, for one call)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not needed by haconform check", name=name)


def _first_conversion(pyarrow: Any) -> None:
    """pyarrow's first conversion, with pandas hidden (`arrow_without_pandas`)."""
    hide = _NoPandas()
    sys.meta_path.insert(0, hide)
    try:
        pyarrow.array([0])
    finally:
        sys.meta_path.remove(hide)


class _ArrowLoader:
    """pyarrow's own loader, then its first conversion (`_first_conversion`); given back its loader after."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self.loader.exec_module(module)
        module.__loader__ = module.__spec__.loader = self.loader
        _first_conversion(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class _WhenArrowLoads(MetaPathFinder):
    """Finds pyarrow as the other finders do, with `_ArrowLoader` around its loader; once (it removes itself)."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> Any:
        if name != "pyarrow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ArrowLoader(spec.loader)
        return spec


def arrow_without_pandas() -> MetaPathFinder | None:
    """pyarrow's first question about pandas answered "no" when it loads (see the module). Returns the finder that
    asks (the caller removes it if pyarrow never loaded), or None when pyarrow or pandas is already loaded: too
    late to ask first, nothing to save."""
    if "pandas" in sys.modules or "pyarrow" in sys.modules:
        return None
    hook = _WhenArrowLoads()
    sys.meta_path.insert(0, hook)
    return hook
