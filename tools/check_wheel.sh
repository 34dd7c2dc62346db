#!/bin/sh
# Installs a numfuse wheel into a fresh venv that holds only NumPy and runs
# tools/check_wheel.py there: from an empty folder outside the source tree, with
# PATH naming an empty folder (no compiler, no cmake), environment cleared.
# Usage: tools/check_wheel.sh dist/numfuse-...whl [--openmp=system]   (`make wheel-check`)
# --openmp=system: the wheel was not repaired by auditwheel and links the system's OpenMP
# runtime (`make wheel-pythons`); by default the runtime must be the one bundled in the wheel.
# PYTHON: the interpreter to make the venv from (default: the one of .venv, else
# python3); NumPy: the version .venv has, else the newest.
set -eu
wheel=$(realpath "$1")
shift
[ -f "$wheel" ] || { echo "no wheel: $1" >&2; exit 1; }
here=$(cd "$(dirname "$0")/.." && pwd)
python=${PYTHON:-}
if [ -z "$python" ]; then
    if [ -x "$here/.venv/bin/python" ]; then python="$here/.venv/bin/python"; else python=python3; fi
fi
numpy_pin=$("$python" -c "import numpy; print('numpy==' + numpy.__version__)" 2>/dev/null || echo numpy)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/numfuse-wheel-check.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$python" -m venv --without-pip "$scratch/venv" 2>/dev/null || "$python" -m venv "$scratch/venv"
# pip from the making interpreter, aimed at the new venv (nothing else lands there).
"$python" -m pip --python "$scratch/venv/bin/python" install --quiet --only-binary=:all: "$numpy_pin"
"$python" -m pip --python "$scratch/venv/bin/python" install --quiet --no-deps "$wheel"
cp "$here/tools/check_wheel.py" "$scratch/check_wheel.py"
mkdir "$scratch/empty-bin" "$scratch/run"
cd "$scratch/run"
env -i HOME="$scratch" PATH="$scratch/empty-bin" "$scratch/venv/bin/python" -I "$scratch/check_wheel.py" "$here" "$@"
