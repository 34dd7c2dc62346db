#!/usr/bin/env bash
# An arm64 Python 3.11 that runs under qemu-aarch64 on an x86-64 Debian 12 machine:
#   SYSROOT = build/aarch64/sysroot  Debian's arm64 packages unpacked with dpkg -x (no
#                                    maintainer scripts run; nothing is installed system-wide)
#   SITE    = build/aarch64/site     PyPI's manylinux aarch64 wheels (tools/aarch64/requirements.txt)
#   build/aarch64/python-include     the arm64 Python.h and pyconfig.h for the cross build
# Run it: tools/aarch64/python3.11, i.e. qemu-aarch64 -L SYSROOT SYSROOT/usr/bin/python3.11
# with SITE on PYTHONPATH.
#
# Installs what is missing first (as root, via apt-get): the cross compiler, qemu-user and the
# arm64 architecture in dpkg. Idempotent: each step leaves a stamp in build/aarch64/stamps and is
# skipped when its stamp is newer than its inputs (this script, the package list, requirements).
#
# Usage: tools/aarch64/make_sysroot.sh [PYTHON]   PYTHON: a host python with pip (default python3)
set -euo pipefail
cd "$(dirname "$0")/../.."
HOST_PYTHON=${1:-python3}
OUT=build/aarch64
SYSROOT=$OUT/sysroot
SITE=$OUT/site
STAMPS=$OUT/stamps
DEBS=$OUT/debs
mkdir -p "$STAMPS"

# Debian's arm64 runtime for python3.11 (its Depends, resolved by hand for Debian 12), the C++
# runtime the wheels and numfuse._core link against, and the headers the cross build needs:
# libpython3.11-dev (Python.h, the arm64 pyconfig.h) and libgtest-dev (the arm64 libgtest.a).
PACKAGES=(
  libc6 libgcc-s1 libstdc++6 libgomp1 zlib1g libexpat1 libssl3 libffi8 libbz2-1.0 liblzma5
  libcrypt1 libdb5.3 libncursesw6 libtinfo6 libnsl2 libtirpc3 libreadline8 libsqlite3-0 libuuid1
  libgssapi-krb5-2 libkrb5-3 libk5crypto3 libkrb5support0 libcom-err2 libkeyutils1
  python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11 libpython3.11-dev
  libgtest-dev
)
HOST_TOOLS=(g++-aarch64-linux-gnu qemu-user)

fresh() {  # fresh STAMP INPUT...: the stamp exists and is newer than every input
  local stamp=$STAMPS/$1
  shift
  [ -f "$stamp" ] || return 1
  local input
  for input in "$@"; do [ "$stamp" -nt "$input" ] || return 1; done
}

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else
    echo "make_sysroot.sh: needs root for: $*" >&2
    exit 1
  fi
}

# 1. Host tools and the arm64 architecture in dpkg (apt lists updated once, when it was added).
missing=()
command -v aarch64-linux-gnu-g++ >/dev/null || missing+=(g++-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  as_root dpkg --add-architecture arm64
  as_root apt-get update -qq
elif ! apt-cache show libc6:arm64 >/dev/null 2>&1; then
  as_root apt-get update -qq
fi
if [ ${#missing[@]} -gt 0 ]; then
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# 2. The sysroot: download the .debs (apt-get download needs no root) and unpack each.
if ! fresh sysroot "$0"; then
  rm -rf "$SYSROOT" "$DEBS"
  mkdir -p "$SYSROOT" "$DEBS"
  (cd "$DEBS" && apt-get download -q "${PACKAGES[@]/%/:arm64}")
  for deb in "$DEBS"/*.deb; do dpkg -x "$deb" "$SYSROOT"; done
  # dpkg -x does not run the alternatives/maintainer scripts: name the interpreter plainly.
  test -x "$SYSROOT/usr/bin/python3.11"
  # Python's headers as one include folder: Debian's python3.11/pyconfig.h only forwards to
  # the multiarch <aarch64-linux-gnu/python3.11/pyconfig.h>, which is put in its place.
  rm -rf "$OUT/python-include"
  mkdir -p "$OUT/python-include"
  cp -r "$SYSROOT/usr/include/python3.11" "$OUT/python-include/"
  cp "$SYSROOT/usr/include/aarch64-linux-gnu/python3.11/pyconfig.h" "$OUT/python-include/python3.11/"
  touch "$STAMPS/sysroot"
fi

# 3. The aarch64 wheels: pure-Python ones are platform independent, the rest are
#    manylinux_2_28 (glibc 2.28 or newer; Debian 12 has 2.36).
if ! fresh site tools/aarch64/requirements.txt; then
  rm -rf "$SITE.new"
  "$HOST_PYTHON" -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --no-compile \
    --target "$SITE.new" --platform manylinux_2_28_aarch64 --platform manylinux2014_aarch64 \
    --python-version 3.11 --implementation cp --abi cp311 --only-binary=:all: \
    -r tools/aarch64/requirements.txt
  rm -rf "$SITE"
  mv "$SITE.new" "$SITE"
  touch "$STAMPS/site"
fi

# 4. Smoke check: the emulated interpreter imports NumPy and computes.
if ! fresh smoke "$STAMPS/sysroot" "$STAMPS/site"; then
  tools/aarch64/python3.11 -c \
    'import platform, numpy; assert platform.machine() == "aarch64", platform.machine(); print("aarch64 python", platform.python_version(), "numpy", numpy.__version__, numpy.exp(numpy.float64(1.0)))'
  touch "$STAMPS/smoke"
fi
