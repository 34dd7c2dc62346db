// exp's argument reduction constants and clamps, one struct per float type, shared by the
// SIMD kernel (kernels/exp.hpp, logaddexp.hpp) and the scalar CPU/GPU code
// (device_math/exp.hpp, the CUDA reductions). No xsimd here: device code includes it.
//
// The values are generated once from tools/data (generated/explog_coefficients.hpp,
// exp_constants); this header only names them.
#pragma once

#include <cstdint>

#include "kernels/generated/explog_coefficients.hpp"

namespace numfuse::kernels::detail {

template <class T>
struct exp_consts;

template <>
struct exp_consts<double> {
    using I = std::int64_t;  // the integer of the same width (exponent arithmetic)
    static constexpr double inv_ln2 = NUMFUSE_EXP64_INV_LN2;
    static constexpr double ln2_hi = NUMFUSE_EXP64_LN2_HI;
    static constexpr double ln2_lo = NUMFUSE_EXP64_LN2_LO;
    static constexpr double shifter = NUMFUSE_EXP64_SHIFTER;
    static constexpr double lo_clamp = NUMFUSE_EXP64_LO_CLAMP;
    static constexpr double hi_clamp = NUMFUSE_EXP64_HI_CLAMP;
    static constexpr double fast_lim = 708.0;  // |x| < 708: 2^k normal
    static constexpr int mant_bits = 52;
    static constexpr std::int64_t bias = 1023;
};

template <>
struct exp_consts<float> {
    using I = std::int32_t;
    static constexpr float inv_ln2 = NUMFUSE_EXP32_INV_LN2;
    static constexpr float ln2_hi = NUMFUSE_EXP32_LN2_HI;
    static constexpr float ln2_lo = NUMFUSE_EXP32_LN2_LO;
    static constexpr float shifter = NUMFUSE_EXP32_SHIFTER;
    static constexpr float lo_clamp = NUMFUSE_EXP32_LO_CLAMP;
    static constexpr float hi_clamp = NUMFUSE_EXP32_HI_CLAMP;
    static constexpr float fast_lim = 87.0f;  // |x| < 87: 2^k normal
    static constexpr int mant_bits = 23;
    static constexpr std::int32_t bias = 127;
};

}  // namespace numfuse::kernels::detail
