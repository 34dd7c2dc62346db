#!/usr/bin/env python3
"""Replaces the generated tables in src/core/kernels/erf.hpp with the output of
tools/erf_coeffs.py (everything from the f64 table marker up to the comment that follows the tables)."""

import subprocess
import sys

p = "src/core/kernels/erf.hpp"
s = open(p).read()
a = s.index("// ---- f64 table")
b = s.index("// Every function here is a template on Arch")
tables = subprocess.run(
    [sys.executable, "tools/erf_coeffs.py"], capture_output=True, text=True, check=True
).stdout
open(p, "w").write(s[:a] + tables + s[b:])
