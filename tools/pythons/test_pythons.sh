#!/usr/bin/env bash
# `make test-pythons` (docs/testing.md#newer-pythons): numfuse built and tested under each
# Python of PYTHON_VERSIONS (default 3.13 3.14) with the newest NumPy/SciPy wheels for it.
#
# The interpreters and their headers are Debian sid's python3.X-dev packages in a
# debootstrap'd tree (PYTHONS_ROOT, default build/pythons/sid), entered with chroot, so the
# build uses sid's own toolchain (its g++ and libxsimd-dev) and nothing of this machine's
# Python. The tree, its packages and one venv per version are made once (stamps) and kept;
# the source is copied in with its timestamps, so a rebuild compiles what changed.
# Prints one summary line per version ("python 3.14.x numpy 2.5.y: N passed, ...") and
# exits non-zero when a build or a test fails. Needs root (debootstrap, chroot, /proc
# bind mount) and the network (Debian's mirror, PyPI).
#
#   tools/pythons/test_pythons.sh [pytest arguments...]   (default: PYTHONS_TESTS)
#   PYTHONS_WHEELS=1 also builds a wheel per version into dist/ and checks it: pip wheel
#   without build isolation in the test build's folder (the venv's scikit-build-core,
#   pybind11 and NumPy; CMake rebuilds only what the wheel's settings change), then
#   tools/check_wheel.sh installs it into a fresh venv of that Python holding only NumPy and
#   runs tools/check_wheel.py there (no compiler on PATH, outside the source tree).
set -euo pipefail
cd "$(dirname "$0")/../.."

ROOT=${PYTHONS_ROOT:-build/pythons/sid}
VERSIONS=${PYTHON_VERSIONS:-3.13 3.14}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
PACKAGES="ca-certificates g++ make cmake ninja-build libxsimd-dev git"
for v in $VERSIONS; do PACKAGES+=" python$v-dev python$v-venv"; done
# The Python packages the tests import (the peers and tools that are missing are skipped
# by the tests themselves: torch, Dask, the notebook).
PIP_PACKAGES="numpy scipy numexpr mpmath pytest hypothesis pybind11 threadpoolctl scikit-build-core"
# sid's Release files carry a Valid-Until; a snapshot mirror serves them past it.
APT=(apt-get -o Acquire::Check-Valid-Until=false -o Dpkg::Use-Pty=0)
TESTS=("$@")
if [ ${#TESTS[@]} -eq 0 ]; then
    read -r -a TESTS <<< "${PYTHONS_TESTS:?PYTHONS_TESTS (from the Makefile) or pytest arguments}"
fi

if [ ! -f "$ROOT/.numfuse-base" ]; then
    command -v debootstrap > /dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
    rm -rf "$ROOT"
    mkdir -p "$(dirname "$ROOT")"
    debootstrap --variant=minbase --include=ca-certificates sid "$ROOT" "$MIRROR" > "$ROOT.debootstrap.log" 2>&1 \
        || { tail -20 "$ROOT.debootstrap.log"; exit 1; }
    touch "$ROOT/.numfuse-base"
fi
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# This machine's CA bundle (PyPI may be reached through a proxy with its own CA).
CA=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
if [ -f "$CA" ]; then mkdir -p "$ROOT/etc/ssl" && cp "$CA" "$ROOT/etc/ssl/host-ca.crt"; fi

if ! mountpoint -q "$ROOT/proc"; then
    mount --bind /proc "$ROOT/proc"
    trap 'umount "$ROOT/proc" 2> /dev/null || true' EXIT
fi
# A clean environment inside: only what the commands below set.
in_root() {
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
        PIP_CERT=/etc/ssl/host-ca.crt SSL_CERT_FILE=/etc/ssl/host-ca.crt \
        PIP_DISABLE_PIP_VERSION_CHECK=1 "$@"
}

if [ "$(cat "$ROOT/.numfuse-packages" 2> /dev/null)" != "$PACKAGES" ]; then
    in_root "${APT[@]}" update -qq
    in_root env DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -qq --no-install-recommends \
        $PACKAGES > "$ROOT.apt.log" 2>&1 || { tail -20 "$ROOT.apt.log"; exit 1; }
    echo "$PACKAGES" > "$ROOT/.numfuse-packages"
fi

# The working tree (tracked and untracked files that git does not ignore), timestamps kept.
rm -rf "$ROOT/src/numfuse"
mkdir -p "$ROOT/src/numfuse"
git ls-files -z --cached --others --exclude-standard \
    | xargs -0 tar cf - --ignore-failed-read 2> /dev/null | tar xf - -C "$ROOT/src/numfuse"

status=0
summary=()
for v in $VERSIONS; do
    venv=/opt/venv$v
    if [ "$(cat "$ROOT$venv/.numfuse-pip" 2> /dev/null)" != "$PIP_PACKAGES" ]; then
        in_root "python$v" -m venv "$venv"
        in_root "$venv/bin/pip" install -q --upgrade pip
        in_root "$venv/bin/pip" install -q --upgrade $PIP_PACKAGES
        echo "$PIP_PACKAGES" > "$ROOT$venv/.numfuse-pip"
    fi
    build=/src/build-$v
    pkg=/src/pkg-$v
    log="$ROOT/src/build-$v.log"
    if ! in_root bash -c "cmake -S /src/numfuse -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
            -DNUMFUSE_CUDA=OFF -DPython_EXECUTABLE=$venv/bin/python \
            -Dpybind11_DIR=\$($venv/bin/python -m pybind11 --cmakedir) \
            && cmake --build $build --target _core -j\$(nproc)" > "$log" 2>&1; then
        tail -30 "$log"
        summary+=("python $v: build FAILED (log: $log)")
        status=1
        continue
    fi
    in_root bash -c "rm -rf $pkg && mkdir -p $pkg/numfuse && cp -r /src/numfuse/python/numfuse/. $pkg/numfuse/ \
        && rm -f $pkg/numfuse/*.so && cp $build/_core*.so $pkg/numfuse/"
    versions=$(in_root "$venv/bin/python" -c \
        "import sys, numpy, scipy; print(f'python {sys.version.split()[0]} numpy {numpy.__version__} scipy {scipy.__version__}')")
    result_log="$ROOT/src/pytest-$v.log"
    if in_root bash -c "cd /src/numfuse && PYTHONPATH=$pkg $venv/bin/python -m pytest -q \
            -p no:cacheprovider ${TESTS[*]}" > "$result_log" 2>&1; then
        result=$(tail -1 "$result_log")
    else
        tail -40 "$result_log"
        result="FAILED: $(tail -1 "$result_log")"
        status=1
    fi
    summary+=("$versions: ${result//=/}")
    if [ "${PYTHONS_WHEELS:-0}" = 1 ]; then
        wheel_log="$ROOT/src/wheel-$v.log"
        # Not repaired by auditwheel (sid's glibc is newer than any manylinux policy): the
        # wheel links the system's libgomp, which check_wheel.py is told to accept.
        if in_root bash -c "rm -rf /src/dist-$v && cd /src && $venv/bin/pip wheel -q --no-deps \
                --no-build-isolation -w /src/dist-$v --config-settings=build-dir=$build \
                --config-settings=cmake.define.NUMFUSE_CUDA=OFF /src/numfuse \
                && PYTHON=$venv/bin/python sh /src/numfuse/tools/check_wheel.sh \
                    /src/dist-$v/numfuse-*.whl --openmp=system" > "$wheel_log" 2>&1; then
            mkdir -p dist && cp "$ROOT"/src/dist-$v/numfuse-*.whl dist/
            summary+=("  wheel: $(basename "$ROOT"/src/dist-$v/numfuse-*.whl), installed and checked")
        else
            tail -30 "$wheel_log"
            summary+=("  wheel: FAILED (log: $wheel_log)")
            status=1
        fi
    fi
done
printf '%s\n' "${summary[@]}"
exit $status
