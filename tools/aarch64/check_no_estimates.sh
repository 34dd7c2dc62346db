#!/usr/bin/env bash
# Fails if an aarch64 binary holds a reciprocal or reciprocal-square-root estimate
# instruction (FRECPE, FRECPS, FRSQRTE, FRSQRTS).
#
# xsimd 8.1's neon64 float32 division and square root are the ARMv7 estimates refined by
# Newton steps (not correctly rounded; sqrt(inf) = NaN, sqrt(-0) = +0), and so are its
# reciprocal/rsqrt. numfuse divides and takes square roots through
# kernels::detail::divide / square_root (FDIV, FSQRT); a float32 batch `/` or
# xsimd::sqrt that slips in anywhere shows up here as one of these instructions, whether
# or not a test reaches it.
#
# Usage: tools/aarch64/check_no_estimates.sh BINARY...   (objdump: aarch64-linux-gnu-objdump,
# or OBJDUMP=...)
set -euo pipefail
objdump=${OBJDUMP:-aarch64-linux-gnu-objdump}
status=0
for binary in "$@"; do
  hits=$("$objdump" -d --no-show-raw-insn "$binary" | grep -E $'\t(frecpe|frecps|frsqrte|frsqrts)\t' || true)
  if [ -n "$hits" ]; then
    echo "$binary: estimate instructions (a float32 division or sqrt through xsimd?):" >&2
    echo "$hits" | head -20 >&2
    status=1
  else
    echo "$binary: no reciprocal / rsqrt estimates"
  fi
done
exit $status
