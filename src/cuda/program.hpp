// Compiled expression -> device interpreter program (host side; see program.cpp).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "expr/expr.hpp"
#include "launch.hpp"

namespace numfuse::cuda::vm {

// An expression the GPU interpreter cannot run (reductions, complex numbers, an
// operation it lacks, too many registers). The module raises NotImplementedError.
class Unsupported : public std::runtime_error {
public:
    explicit Unsupported(const std::string& what)
        : std::runtime_error("numfuse.cuda.evaluate: " + what) {}
};

// Throws Unsupported unless the whole plan runs on the device interpreter.
void check_plan(const expr::Plan& plan);

// arrays[k]: device pointer of input k, or 0 for a Python scalar whose value
// (in the input's type, as bits) is scalar_bits[k].
Program build_program(const expr::Plan& plan, const std::vector<std::uintptr_t>& arrays,
                      const std::vector<std::uint64_t>& scalar_bits);

// The device interpreter run on the CPU, element by element, over host memory: the
// same per-element code as the GPU kernel (vm_exec.hpp), for tests.
void run_program_host(const Program& program, void* out, std::int64_t n);

}  // namespace numfuse::cuda::vm
