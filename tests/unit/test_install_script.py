"""`scripts/install.sh` puts Chromium only on the test path (`.ci/run`), not on every user's machine (issue 21).

The script runs with stub `java`, `apt-get`, `sudo` and Python on a PATH holding no Chromium; the stubs log
their arguments. Twin: with `--with-chromium` (what `.ci/run` gives) the same run asks apt-get for chromium.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]


def _run(tmp_path: Path, *args: str, compiler: bool = False, env: dict[str, str] | None = None) -> tuple[int, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    log = tmp_path / "calls.log"
    log.unlink(missing_ok=True)
    for tool in ("dirname", "head", "id", "cat"):
        found = shutil.which(tool)
        assert found, tool
        if not (bin_dir / tool).exists():
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "cc").unlink(missing_ok=True)
    for stub in ("java", "apt-get", "sudo", "python-stub", *(("cc",) if compiler else ())):
        (bin_dir / stub).write_text(f'#!/bin/bash\necho "{stub} $*" >> {log}\n')
        (bin_dir / stub).chmod(0o755)
    env = {
        "PATH": str(bin_dir),
        "PYTHON": "python-stub",
        "CC": "cc",
        "HACONFORM_JVM_ARCHIVE": "off",
        "HOME": str(tmp_path),
        **(env or {}),
    }
    done = subprocess.run(
        ["/bin/bash", str(ROOT / "scripts" / "install.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        check=False,
    )
    return done.returncode, (log.read_text() if log.exists() else "") + done.stderr


@pytest.mark.skipif(os.name != "posix", reason="a bash script")
def test_user_install_does_not_install_chromium_ci_does(tmp_path):
    status, calls = _run(tmp_path, "--no-run")
    assert status == 0, calls
    assert "python-stub -m pip install" in calls and "chromium" not in calls
    status, calls = _run(tmp_path, "--no-run", "--with-chromium")  # twin: the test path installs it
    assert status == 0 and "apt-get install -y -qq chromium" in calls
    assert "--with-chromium" in (ROOT / ".ci" / "run").read_text()


def test_unknown_option_is_a_usage_error(tmp_path):
    assert _run(tmp_path, "--bogus")[0] == 2


@pytest.mark.skipif(os.name != "posix", reason="a bash script")
def test_compiled_path_built_only_with_a_compiler(tmp_path):
    """Issue 32: with a C compiler the install builds the optional compiled path; without one it says so in
    one line and succeeds (twin of each other)."""
    status, calls = _run(tmp_path, "--no-run")
    assert status == 0 and "build_fast" not in calls.replace("(scripts/build_fast.py", "")
    assert "install: no C compiler: the optional compiled path is not built" in calls
    status, calls = _run(tmp_path, "--no-run", compiler=True)
    assert status == 0 and "python-stub scripts/build_fast.py" in calls and "-e .[fast]" in calls


@pytest.mark.skipif(os.name != "posix", reason="a bash script")
def test_compiled_path_is_profile_guided_unless_turned_off(tmp_path):
    """Session 27: the install builds the compiled path with GCC's profile (`build_fast.py --pgo`, scripts/pgo.py);
    HACONFORM_PGO=off builds it once, without one (twin: the flag must then be absent)."""
    status, calls = _run(tmp_path, "--no-run", compiler=True)
    assert status == 0 and "python-stub scripts/build_fast.py --pgo" in calls
    status, calls = _run(tmp_path, "--no-run", compiler=True, env={"HACONFORM_PGO": "off"})
    assert status == 0 and "python-stub scripts/build_fast.py" in calls and "--pgo" not in calls
