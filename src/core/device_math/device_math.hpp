// The scalar per-element kernels shared by the CPU tests and the CUDA path:
// exp_scalar, log_scalar, erf_scalar for float and double (see each header's contract).
#pragma once

#include "device_math/common.hpp"
#include "device_math/erf.hpp"
#include "device_math/exp.hpp"
#include "device_math/log.hpp"
