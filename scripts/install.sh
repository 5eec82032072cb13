#!/usr/bin/env bash
# Install haconform and everything it needs, then run the main job on the shipped sample corpus.
#   bash scripts/install.sh                  install, then `haconform check traces/samples/clean` (auto, then Spark)
#   bash scripts/install.sh --no-run         install only
#   bash scripts/install.sh --with-chromium  also install Chromium, which only the HTML report's browser test
#                                            needs (the test path: .ci/run gives --no-run --with-chromium)
# Spark needs a Java runtime (17 or newer): when `java` is missing this script installs Debian's
# openjdk-17-jre-headless with apt-get (as root, or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

run=1
chromium=0
for arg in "$@"; do
  case "$arg" in
    --no-run) run=0 ;;
    --with-chromium) chromium=1 ;;
    *) echo "install: unknown option $arg (known: --no-run, --with-chromium)" >&2; exit 2 ;;
  esac
done

if ! command -v java >/dev/null 2>&1; then
  echo "install: no Java runtime found; installing openjdk-17-jre-headless (Spark needs Java 17+)" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq openjdk-17-jre-headless >/dev/null
fi
java -version 2>&1 | head -1 >&2

# The HTML report's test renders the page in a real headless browser: on the test path (--with-chromium) install
# Debian's chromium when missing. A user's install does not get it; without it that one test is skipped with
# the reason.
if [ "$chromium" = 1 ] && ! command -v chromium >/dev/null 2>&1; then
  echo "install: chromium not found; installing Debian's chromium (the HTML report test renders in it)" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  if $sudo_cmd apt-get update -qq && $sudo_cmd apt-get install -y -qq chromium >/dev/null; then
    echo "install: $(chromium --version 2>/dev/null || echo chromium installed)" >&2
  else
    echo "install: could not install chromium; the browser test will be skipped" >&2
  fi
fi

PYTHON="${PYTHON:-python3}"
echo "install: pip install -e '.[dev]' with $($PYTHON --version)" >&2
$PYTHON -m pip install --quiet --disable-pip-version-check -e ".[dev]"
command -v pyenv >/dev/null 2>&1 && pyenv rehash || true

# The optional compiled path (issue 32, scripts/build_fast.py): the hot modules compiled by Cython into .fast/,
# loaded only while their sources are unchanged; built when a C compiler is here (HACONFORM_FAST=off skips it).
# Without it, or when the build fails, the pure Python path runs: the same verdicts, slower. Built profile-guided
# (`--pgo`, scripts/pgo.py, session 27: GCC compiles twice around a training run, about 7 minutes in all, and the
# checks then take about 7% less CPU); HACONFORM_PGO=off builds once, without a profile (about 3 minutes).
if [ "${HACONFORM_FAST:-}" = "off" ]; then
  echo "install: HACONFORM_FAST=off: the compiled path is not built; the pure Python path runs" >&2
elif command -v "${CC:-cc}" >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; then
  pgo="--pgo"
  if [ "${HACONFORM_PGO:-}" = "off" ]; then pgo=""; fi
  echo "install: building the optional compiled path (scripts/build_fast.py ${pgo}: once; about 7 minutes" \
    "profile-guided, 3 with HACONFORM_PGO=off)" >&2
  { $PYTHON -m pip install --quiet --disable-pip-version-check -e ".[fast]" && $PYTHON scripts/build_fast.py $pgo; } \
    || echo "install: the compiled path was not built; the pure Python path runs" >&2
else
  echo "install: no C compiler: the optional compiled path is not built; the pure Python path runs" >&2
fi

# The packages' bytecode, written once: an editable install compiles nothing, and where PYTHONDONTWRITEBYTECODE
# is set (some CI images, this project's own work machines) every process would compile every module it loads
# from source again (0.1-0.2 CPU s per command; benchmarks/README.md, session 12). Python reads the files whatever
# that setting; a source edited later is compiled again as usual.
$PYTHON -m compileall -q traces spec model conformance spark_trace_check >/dev/null \
  || echo "install: bytecode not written; each command compiles its modules as it loads them" >&2

# A class-data archive of the Spark driver JVM (spark_trace_check/jvm_archive.py): every later check and
# Spark test starts faster. Skipped with HACONFORM_JVM_ARCHIVE=off; a failure here only costs speed.
if [ "${HACONFORM_JVM_ARCHIVE:-}" != "off" ]; then
  echo "install: writing the Spark JVM's class-data archive (about a minute, once)" >&2
  $PYTHON -m spark_trace_check.jvm_archive || echo "install: no JVM archive; Spark starts without it" >&2
fi

if [ "$run" = 1 ]; then
  # the main job twice: the engine `--engine auto` (the default) picks for this small corpus (one line says
  # which and why), then the same check with Spark, so that both engines are exercised
  echo "install: running the main job: haconform check traces/samples/clean --out out/check" >&2
  $PYTHON -m conformance check traces/samples/clean --out out/check
  echo "install: and with Spark: haconform check traces/samples/clean --engine spark --out out/check-spark" >&2
  $PYTHON -m conformance check traces/samples/clean --engine spark --out out/check-spark
fi
