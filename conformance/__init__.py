"""haconform: conformance. Importing it installs the optional compiled path's finder (`traces.fastpath`)."""

import traces  # noqa: F401

# The project's version, pyproject.toml's `[project] version` (tests/unit/test_cli_imports.py compares them): what a
# check's summary records, without `importlib.metadata`'s lookup of the installed distribution (issue 32, session
# 15: 16 ms of every check's start).
__version__ = "0.1.0"
