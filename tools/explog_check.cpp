// Standalone accuracy / special-value / timing harness for the exp and log
// kernels (src/core/kernels/{exp,log}.hpp), one instruction-set level per
// build. Scratch tool: not part of the build.
//
//   g++ -O2 -std=c++17 -DNF_LEVEL=2 -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx512vl -mfma \
//       -I src/core tools/explog_check.cpp -o /tmp/explog_check_avx512
//   NF_LEVEL: 0 = sse2 (-msse2), 1 = fma3<avx2> (-mavx2 -mfma), 2 = avx512bw
//
//   explog_check f32 exp|log [stride [start]]   float sweep over bit patterns (stride 1:
//   exhaustive) explog_check f64 exp|log [n]                n random doubles per region vs
//   expl/logl explog_check special                        special values, bit for bit explog_check
//   bench                          ns/element, 1e5 elements
#include <xsimd/xsimd.hpp>

#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/exp.hpp"
#include "kernels/log.hpp"

#if NF_LEVEL == 0
using Arch = xsimd::sse2;
static const char* level = "sse2";
#elif NF_LEVEL == 1
using Arch = xsimd::fma3<xsimd::avx2>;
static const char* level = "avx2_fma";
#else
using Arch = xsimd::avx512bw;
static const char* level = "avx512";
#endif

template <class T>
using B = xsimd::batch<T, Arch>;

template <class T>
static void apply(bool is_exp, const T* in, T* out, size_t n) {
    constexpr size_t W = B<T>::size;
    size_t i = 0;
    for (; i + W <= n; i += W) {
        B<T> x = B<T>::load_unaligned(in + i);
        B<T> y = is_exp ? numfuse::kernels::exp_kernel(x) : numfuse::kernels::log_kernel(x);
        y.store_unaligned(out + i);
    }
    if (i < n) {
        alignas(64) T buf[W] = {};
        std::memcpy(buf, in + i, (n - i) * sizeof(T));
        B<T> x = B<T>::load_aligned(buf);
        B<T> y = is_exp ? numfuse::kernels::exp_kernel(x) : numfuse::kernels::log_kernel(x);
        y.store_aligned(buf);
        std::memcpy(out + i, buf, (n - i) * sizeof(T));
    }
}

// Fractional ULP error of y against the reference value ref (long double).
// Infinite or NaN references must match exactly (returns 0 or 1e9).
template <class T>
static double ulp_err(T y, long double ref) {
    const T cr = static_cast<T>(ref);
    if (std::isnan(ref)) return std::isnan(y) ? 0 : 1e9;
    if (std::isinf(cr) || std::isinf(y)) {
        if (y == cr) return 0;
        // y finite max vs overflowed reference: count as distance in ulps of max
        return 1e9;
    }
    const int mant = std::numeric_limits<T>::digits;  // 24 / 53
    const int emin = std::numeric_limits<T>::min_exponent;  // -125 / -1021
    int e;
    std::frexp(static_cast<long double>(std::fabs(ref)), &e);
    if (ref == 0) e = emin;
    if (e < emin) e = emin;
    const long double ulp = std::ldexp(1.0L, e - mant);
    return static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / ulp);
}

static int sweep_f32(bool is_exp, uint64_t stride, uint64_t start) {
    const size_t chunk = 1 << 16;
    std::vector<float> in(chunk), out(chunk);
    double worst = 0, worst_normal = 0;
    float worst_x = 0;
    uint64_t count = 0, bad = 0;
    double sum = 0;
    uint64_t u = start;
    while (u < (1ull << 32)) {
        size_t n = 0;
        for (; n < chunk && u < (1ull << 32); ++n, u += stride) {
            uint32_t b = static_cast<uint32_t>(u);
            std::memcpy(&in[n], &b, 4);
        }
        apply<float>(is_exp, in.data(), out.data(), n);
        for (size_t i = 0; i < n; ++i) {
            const float x = in[i];
            if (std::isnan(x)) continue;
            if (!is_exp && x < 0) continue;
            if (!is_exp && x == 0) continue;
            // double libm is accurate to < 1 double ulp: ample for float
            const long double ref =
                is_exp ? std::exp(static_cast<double>(x)) : std::log(static_cast<double>(x));
            const double e = ulp_err<float>(out[i], ref);
            ++count;
            sum += e;
            if (e > 1.0) ++bad;
            if (e > worst) worst = e, worst_x = x;
            if (std::fabs(ref) >= 0x1p-126L && e > worst_normal) worst_normal = e;
        }
    }
    std::printf("%s f32 %s stride %" PRIu64 ": %" PRIu64
                " inputs, max %.4f ulp at %a (normal results: %.4f) (mean %.4f), >1ulp: %" PRIu64
                "\n",
                level, is_exp ? "exp" : "log", stride, count, worst, worst_x, worst_normal,
                sum / count, bad);
    return bad ? 1 : 0;
}

static int sweep_f64(bool is_exp, size_t n) {
    std::mt19937_64 rng(12345);
    struct Region {
        const char* name;
        double lo, hi;
        bool bits;
    };
    std::vector<Region> regions;
    if (is_exp) {
        regions = {{"bits", 0, 0, true},
                   {"[-1,1]", -1, 1, false},
                   {"[-30,30]", -30, 30, false},
                   {"[-745.2,709.8]", -745.2, 709.8, false},
                   {"ovf edge", 709.0, 709.8, false},
                   {"subnormal", -745.2, -708.0, false},
                   {"tiny", -1e-6, 1e-6, false}};
    } else {
        regions = {{"bits", 0, 0, true},
                   {"(0,4]", 0, 4, false},
                   {"near 1", 1 - 1.0 / 16, 1 + 1.0 / 16, false},
                   {"very near 1", 1 - 1e-6, 1 + 1e-6, false},
                   {"[0.5,1e6]", 0.5, 1e6, false}};
    }
    std::vector<double> in(n), out(n);
    int rc = 0;
    std::uniform_real_distribution<double> unit(0, 1);
    for (const auto& r : regions) {
        for (size_t i = 0; i < n; ++i) {
            if (r.bits) {
                uint64_t b = rng();
                if (!is_exp) b &= ~(1ull << 63);
                std::memcpy(&in[i], &b, 8);
            } else {
                in[i] = r.lo + (r.hi - r.lo) * unit(rng);
            }
        }
        if (!is_exp && r.bits) {  // add a subnormal block
            for (size_t i = 0; i < n / 8; ++i) {
                uint64_t b = rng() & 0x000fffffffffffffull;
                std::memcpy(&in[i], &b, 8);
            }
        }
        apply<double>(is_exp, in.data(), out.data(), n);
        double worst = 0, sum = 0;
        double wx = 0;
        size_t cnt = 0, bad = 0;
        for (size_t i = 0; i < n; ++i) {
            const double x = in[i];
            if (std::isnan(x) || (!is_exp && x <= 0)) continue;
            const long double ref =
                is_exp ? expl(static_cast<long double>(x)) : logl(static_cast<long double>(x));
            const double e = ulp_err<double>(out[i], ref);
            ++cnt;
            sum += e;
            if (e > 1.0) ++bad;
            if (e > worst) worst = e, wx = x;
        }
        std::printf("%s f64 %s %-16s n=%zu max %.4f ulp at %a (mean %.4f) >1ulp: %zu\n", level,
                    is_exp ? "exp" : "log", r.name, cnt, worst, wx, cnt ? sum / cnt : 0.0, bad);
        if (bad) rc = 1;
    }
    return rc;
}

template <class T, class U>
static int check_special(bool is_exp, T x, U want_bits) {
    T in[1] = {x}, out[1];
    apply<T>(is_exp, in, out, 1);
    U got;
    std::memcpy(&got, &out[0], sizeof(U));
    U xb;
    std::memcpy(&xb, &x, sizeof(U));
    if (got != want_bits) {
        std::printf("  MISMATCH %s %s(0x%llx) = 0x%llx, want 0x%llx\n",
                    sizeof(T) == 4 ? "f32" : "f64", is_exp ? "exp" : "log", (unsigned long long)xb,
                    (unsigned long long)got, (unsigned long long)want_bits);
        return 1;
    }
    return 0;
}

template <class T, class U>
static U bits_of(T v) {
    U u;
    std::memcpy(&u, &v, sizeof(U));
    return u;
}
template <class T, class U>
static T from_bits(U u) {
    T v;
    std::memcpy(&v, &u, sizeof(U));
    return v;
}

static int special() {
    int bad = 0;
    using U8 = uint64_t;
    using U4 = uint32_t;
    const double inf = INFINITY;
    // f64 exp
    bad += check_special<double, U8>(true, from_bits<double, U8>(0x7ff8000000000123ull),
                                     0x7ff8000000000123ull);
    bad += check_special<double, U8>(true, from_bits<double, U8>(0xfff8000000000000ull),
                                     0xfff8000000000000ull);
    bad += check_special<double, U8>(true, from_bits<double, U8>(0x7ff0000000000001ull),
                                     0x7ff8000000000001ull);
    bad += check_special<double, U8>(true, inf, bits_of<double, U8>(inf));
    bad += check_special<double, U8>(true, -inf, 0);
    bad += check_special<double, U8>(true, 0.0, bits_of<double, U8>(1.0));
    bad += check_special<double, U8>(true, -0.0, bits_of<double, U8>(1.0));
    bad += check_special<double, U8>(true, 709.78, bits_of<double, U8>(std::exp(709.78)));
    bad += check_special<double, U8>(true, 709.7827128933841, bits_of<double, U8>(inf));
    bad += check_special<double, U8>(true, 1e308, bits_of<double, U8>(inf));
    bad += check_special<double, U8>(true, -1e308, 0);
    bad += check_special<double, U8>(true, -745.2, 0);
    bad += check_special<double, U8>(true, -745.13, 1);  // min subnormal
    bad += check_special<double, U8>(true, 1e-300, bits_of<double, U8>(1.0));
    // f64 log
    bad += check_special<double, U8>(false, from_bits<double, U8>(0x7ff8000000000123ull),
                                     0x7ff8000000000123ull);
    bad += check_special<double, U8>(false, from_bits<double, U8>(0xfff8000000000000ull),
                                     0xfff8000000000000ull);
    bad += check_special<double, U8>(false, from_bits<double, U8>(0xfff0000000000001ull),
                                     0xfff8000000000001ull);
    bad += check_special<double, U8>(false, 0.0, bits_of<double, U8>(-inf));
    bad += check_special<double, U8>(false, -0.0, bits_of<double, U8>(-inf));
    bad += check_special<double, U8>(false, -1.0, 0xfff8000000000000ull);
    bad += check_special<double, U8>(false, -1e-310, 0xfff8000000000000ull);
    bad += check_special<double, U8>(false, -inf, 0xfff8000000000000ull);
    bad += check_special<double, U8>(false, inf, bits_of<double, U8>(inf));
    bad += check_special<double, U8>(false, 1.0, 0);
    bad += check_special<double, U8>(false, 0x1p-1074, bits_of<double, U8>(std::log(0x1p-1074)));
    bad += check_special<double, U8>(false, 0x1.fffffffffffffp+1023,
                                     bits_of<double, U8>(std::log(0x1.fffffffffffffp+1023)));
    // f32 exp
    const float finf = INFINITY;
    bad += check_special<float, U4>(true, from_bits<float, U4>(0x7fc00123u), 0x7fc00000u);
    bad += check_special<float, U4>(true, from_bits<float, U4>(0xffc00000u), 0x7fc00000u);
    bad += check_special<float, U4>(true, from_bits<float, U4>(0x7f800001u), 0x7fc00000u);
    bad += check_special<float, U4>(true, finf, bits_of<float, U4>(finf));
    bad += check_special<float, U4>(true, -finf, 0);
    bad += check_special<float, U4>(true, 0.0f, bits_of<float, U4>(1.0f));
    bad += check_special<float, U4>(true, -0.0f, bits_of<float, U4>(1.0f));
    bad += check_special<float, U4>(true, 88.72284f, bits_of<float, U4>(finf));
    bad += check_special<float, U4>(true, 88.7228f, bits_of<float, U4>(std::exp(88.7228f)));
    bad += check_special<float, U4>(true, -104.0f, 0);
    bad += check_special<float, U4>(true, 3e38f, bits_of<float, U4>(finf));
    bad += check_special<float, U4>(true, -3e38f, 0);
    // f32 log
    bad += check_special<float, U4>(false, from_bits<float, U4>(0x7fc00123u), 0x7fc00000u);
    bad += check_special<float, U4>(false, from_bits<float, U4>(0xffc00000u), 0x7fc00000u);
    bad += check_special<float, U4>(false, 0.0f, bits_of<float, U4>(-finf));
    bad += check_special<float, U4>(false, -0.0f, bits_of<float, U4>(-finf));
    bad += check_special<float, U4>(false, -1.0f, 0xffc00000u);
    bad += check_special<float, U4>(false, -finf, 0xffc00000u);
    bad += check_special<float, U4>(false, finf, bits_of<float, U4>(finf));
    bad += check_special<float, U4>(false, 1.0f, 0);
    bad += check_special<float, U4>(false, 0x1p-149f, bits_of<float, U4>(std::log(0x1p-149f)));
    std::printf("%s special values: %d mismatches\n", level, bad);
    return bad ? 1 : 0;
}

template <class T>
static double bench_one(bool is_exp, const std::vector<T>& in, std::vector<T>& out) {
    double best = 1e30;
    for (int rep = 0; rep < 30; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < 20; ++k) apply<T>(is_exp, in.data(), out.data(), in.size());
        auto t1 = std::chrono::steady_clock::now();
        double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (20.0 * in.size());
        if (ns < best) best = ns;
    }
    return best;
}

static int bench() {
    const size_t n = 100000;
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<double> e64(n), l64(n), o64(n);
    std::vector<float> e32(n), l32(n), o32(n);
    for (size_t i = 0; i < n; ++i) {
        e64[i] = u(rng) * 20 - 10;
        l64[i] = u(rng) * 100;
        e32[i] = static_cast<float>(e64[i]);
        l32[i] = static_cast<float>(l64[i]);
    }
    std::printf("%s ns/elt: f64 exp %.3f  f64 log %.3f  f32 exp %.3f  f32 log %.3f\n", level,
                bench_one<double>(true, e64, o64), bench_one<double>(false, l64, o64),
                bench_one<float>(true, e32, o32), bench_one<float>(false, l32, o32));
    return 0;
}

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    std::string mode = argv[1];
    if (mode == "special") return special();
    if (mode == "bench") return bench();
    if (mode == "f32" && argc >= 3) {
        uint64_t stride = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : 1;
        uint64_t start = argc > 4 ? std::strtoull(argv[4], nullptr, 0) : 0;
        return sweep_f32(std::string(argv[2]) == "exp", stride, start);
    }
    if (mode == "f64" && argc >= 3) {
        size_t n = argc > 3 ? std::strtoull(argv[3], nullptr, 0) : 1000000;
        return sweep_f64(std::string(argv[2]) == "exp", n);
    }
    return 2;
}
