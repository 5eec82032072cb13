"""A value parsed from files, kept between runs: a pickle beside the files, under the sha256 of their bytes.

Every run that imports a model or a rule table validates its cited requirement IDs against the catalogue
(`spec.catalogue.require`), and parsing `spec/requirements/*.toml`, `seeds.toml`, `param_sources.toml` and
`seed_quotes.toml` with `tomllib` was about a sixth of `haconform check`'s startup (issue 32, startup).
`spec.catalogue.catalogue` therefore keeps the `Catalogue` it built here, under a key: the sha256 of every file
it reads and of the source of the modules that build it (a changed field of `Requirement` changes the key, so
an old pickle is never read into a new class). A cache whose key differs from the files' now is stale: it is not
used, the value is built from the files again and the cache rewritten. It is written atomically (a temporary
file in the same directory, then `os.replace`); a directory that cannot be written (an installed copy) leaves
the run without a cache, never without its value. The cache is git-ignored; deleting it is always safe.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
FORMAT = b"haconform-parsed-cache 1\n"


def key(files: Sequence[Path]) -> bytes:
    """sha256 over each file's name and bytes, in the order given (hex, ASCII)."""
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest().encode()


def read(cache: Path, want: bytes, kind: type[T]) -> T | None:
    """The `kind` value `cache` holds under key `want`; None when absent, stale, unreadable or of another kind."""
    try:
        with cache.open("rb") as f:
            if f.readline() != FORMAT or f.readline().rstrip(b"\n") != want:
                return None
            found = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, TypeError, ValueError):
        return None
    return found if isinstance(found, kind) else None


def write(cache: Path, stamp: bytes, value: object) -> bool:
    """Store `value` under key `stamp`, atomically; False when the directory cannot be written."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=cache.name + ".", suffix=".tmp", dir=cache.parent)
    except OSError:
        return False
    try:
        os.chmod(fd, 0o644)  # mkstemp's 0600 would hide the cache from the other users of a shared checkout
        with os.fdopen(fd, "wb") as f:
            f.write(FORMAT + stamp + b"\n")
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, cache)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
    return True


def cached(cache: Path, files: Sequence[Path], build: Callable[[], T], kind: type[T]) -> T:
    """`build()`'s value, from `cache` when it was stored under the key of `files` as they are now; else built
    (then stored). The same value either way (test: tests/unit/test_catalogue_cache.py)."""
    stamp = key(files)
    value = read(cache, stamp, kind)
    if value is None:
        value = build()
        write(cache, stamp, value)
    return value
