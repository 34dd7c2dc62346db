// CPU emulation of the GPU reductions' exact order of operations (reduce_host.cpp).
#pragma once

#include <cstdint>

#include "launch.hpp"

namespace numfuse::cuda {

// Same contract as launch_logsumexp, on host memory, synchronously.
void logsumexp_host(Normalize norm, Real dt, const void* x, void* out, std::int64_t outer,
                    std::int64_t n, std::int64_t inner);

}  // namespace numfuse::cuda
