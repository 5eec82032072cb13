"""Profile-guided optimisation of the compiled path (issue 32, session 27; `scripts/build_fast.py --pgo`).

The same Cython C sources, compiled twice by GCC: first instrumented (`-fprofile-generate`), then, after a
training run of haconform's own commands on that build, with the counts it recorded (`-fprofile-use`): the
compiler lays out and inlines the per-event paths as they ran. The C code, and so every verdict, is the same;
only the machine code's arrangement differs (benchmarks/README.md, "Session 27").

- GCC only (the profile's format is the compiler's); with another compiler, or a GCC that refuses the flags,
  `missing` says why and the build is made once, without a profile.
- `-fprofile-partial-training`: a function the training did not run is optimised as in a build without a
  profile, not as cold code, so a path the training misses (Spark's worker, an audit's report) is never slowed.
- The training (`TRAINING`): a corpus of every mechanism simulated from seeds no benchmark corpus holds (the
  simulators run), the check of it (the reader and every fold), the check of the shipped mutants' traces (the
  violation paths) and the exploration of every default bound (the explorer's copies and fingerprints). Its
  outputs go to a scratch directory and are discarded; a command that fails makes the build fall back to one
  without a profile (`build_fast.py`).
- The two stages compile at the same paths (GCC names a profile after its object file): `build_fast.py` builds
  both in one fixed staging directory beside the final one, each in a child process of its own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# the training corpus's first seed: the benchmarks' corpora simulate seeds 1 to a few hundred (`benchmarks.corpus`),
# so a figure measured on them is not measured on the traces the build was trained on
TRAINING_SEED = 100_001

# (what it trains, the command's arguments after the interpreter, the exit statuses that mean it ran as meant)
TRAINING: tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...] = (
    (
        "the simulators: a corpus of every mechanism, simulated from seeds no benchmark corpus holds",
        ("-c", "import sys; from pathlib import Path; from benchmarks.corpus import simulated_pool; "
         f"simulated_pool(Path(sys.argv[1]) / 'corpus', 200_000, first_seed={TRAINING_SEED})", "{work}"),
        (0,),
    ),
    (
        "the reader and every fold: the check of that corpus",
        ("-m", "conformance", "check", "{work}/corpus", "--engine", "python", "--out", "{work}/check", "--quiet"),
        (0,),
    ),
    (
        "the violation paths: the check of the shipped mutants' traces",
        ("-m", "conformance", "check", "traces/samples/mutants", "--engine", "python", "--out", "{work}/mutants",
         "--quiet"),
        (1,),
    ),
    *(
        (
            f"the explorer: {mech}'s default bounds",
            ("-m", "conformance", "explore", mech, "--all"),
            (0,),
        )
        for mech in ("sr", "am", "pf")
    ),
)  # fmt: skip


def generate_flags(profile: Path) -> list[str]:
    """The first stage's flags: counts written under `profile` when a process that loaded the build exits."""
    return [f"-fprofile-generate={profile}", "-fprofile-update=single"]


def use_flags(profile: Path) -> list[str]:
    """The second stage's flags: the counts read from `profile`; a module without counts (none ran) compiled as
    without a profile, silently (`-Wno-missing-profile`)."""
    return [f"-fprofile-use={profile}", "-fprofile-partial-training", "-fprofile-correction", "-Wno-missing-profile"]


def missing() -> str:
    """Why a profile-guided build cannot be made here ('' when it can): the compiler is not GCC, or refuses a
    trial compile with either stage's flags."""
    cc = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()
    try:
        version = subprocess.run([*cc, "--version"], capture_output=True, text=True, check=False).stdout
    except OSError as exc:
        return f"the C compiler {cc[0]} does not run ({exc})"
    if "Free Software Foundation" not in version and "gcc" not in version.lower():
        return f"the C compiler {cc[0]} is not GCC"
    with tempfile.TemporaryDirectory(prefix="haconform-pgo-check-") as tmp:
        source = Path(tmp) / "t.c"
        source.write_text("int f(int x) { return x + 1; }\n", encoding="utf-8")
        for flags in (generate_flags(Path(tmp) / "p"), use_flags(Path(tmp) / "p")):
            done = subprocess.run(
                [*cc, *flags, "-c", str(source), "-o", str(Path(tmp) / "t.o")], capture_output=True, text=True
            )
            if done.returncode != 0:
                return f"{cc[0]} refuses {' '.join(flags)}: {done.stderr.strip()[:200]}"
    return ""


def train(build: Path, work: Path) -> list[str]:
    """Run `TRAINING` on the instrumented build in `build` (outputs under `work`); what each trained, for the
    manifest. Raises RuntimeError naming the command whose exit status was not the expected one."""
    env = {
        **os.environ,
        "HACONFORM_FAST_DIR": str(build),
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
    }
    env.pop("HACONFORM_PURE", None)
    ran = []
    for what, args, ok in TRAINING:
        argv = [sys.executable, *(a.replace("{work}", str(work)) for a in args)]
        began = time.monotonic()  # (the build's own progress line; nothing judged depends on it)
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        print(f"build_fast: trained on {what} ({time.monotonic() - began:.1f} s)", file=sys.stderr)
        if done.returncode not in ok:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise RuntimeError(
                f"training command {' '.join(args)} exited {done.returncode} (expected {ok}): {' | '.join(tail)}"
            )
        ran.append(what)
    return ran
