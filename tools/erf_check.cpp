// Standalone accuracy / special-value / speed harness for src/core/kernels/erf.hpp.
//
// Build one object per arch (the kernel TU), then the driver, e.g.:
//   g++ -O2 -std=c++17 -msse2 -DERF_ARCH=xsimd::sse2 -DERF_NAME=sse2 -Isrc/core
//       -c tools/erf_check.cpp -o /tmp/erf_sse2.o
//   g++ -O2 -std=c++17 -mavx2 -mfma '-DERF_ARCH=xsimd::fma3<xsimd::avx2>' -DERF_NAME=avx2 ...
//   g++ -O2 -std=c++17 -mavx512f -mavx512cd -mavx512dq -mavx512bw -mavx512vl -mfma
//       -DERF_ARCH=xsimd::avx512bw -DERF_NAME=avx512 ...
//   g++ -O2 -std=c++17 tools/erf_check.cpp /tmp/erf_*.o -o /tmp/erf_check
// Run: /tmp/erf_check [special] [f32 STRIDE] [f64 COUNT] [bench] [benchn N] [dump N]
//   (bench: 1e5 elements; benchn N: N elements, e.g. 4000 for L1-resident data)
// References: erfl (x87 long double) for float64, erf (double) + erfl tie re-check for
// float32; __float128 products for subnormal inputs (tools/erf_spot.py checks erfl
// against mpmath).
#include <cstddef>
#include <cstdint>

#ifdef ERF_ARCH
#include "kernels/erf.hpp"

#define ERF_CAT2(a, b) a##b
#define ERF_CAT(a, b) ERF_CAT2(a, b)

template <class T>
static void run(const T* in, T* out, std::size_t n) {
    using B = xsimd::batch<T, ERF_ARCH>;
    std::size_t i = 0;
    for (; i + B::size <= n; i += B::size)
        numfuse::kernels::erf_kernel<ERF_ARCH>(B::load_unaligned(in + i)).store_unaligned(out + i);
    if (i < n) {
        alignas(64) T buf[B::size] = {};
        for (std::size_t j = i; j < n; ++j) buf[j - i] = in[j];
        numfuse::kernels::erf_kernel<ERF_ARCH>(B::load_aligned(buf)).store_aligned(buf);
        for (std::size_t j = i; j < n; ++j) out[j] = buf[j - i];
    }
}
extern "C" void ERF_CAT(erf_f64_, ERF_NAME)(const double* in, double* out, std::size_t n) {
    run(in, out, n);
}
extern "C" void ERF_CAT(erf_f32_, ERF_NAME)(const float* in, float* out, std::size_t n) {
    run(in, out, n);
}

#else  // driver

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/erf.hpp"  // for the table parameters only

extern "C" {
void erf_f64_sse2(const double*, double*, std::size_t);
void erf_f32_sse2(const float*, float*, std::size_t);
void erf_f64_avx2(const double*, double*, std::size_t);
void erf_f32_avx2(const float*, float*, std::size_t);
void erf_f64_avx512(const double*, double*, std::size_t);
void erf_f32_avx512(const float*, float*, std::size_t);
}

struct ArchFns {
    const char* name;
    void (*f64)(const double*, double*, std::size_t);
    void (*f32)(const float*, float*, std::size_t);
};
static const ArchFns archs[] = {
    {"sse2", erf_f64_sse2, erf_f32_sse2},
    {"avx2_fma", erf_f64_avx2, erf_f32_avx2},
    {"avx512", erf_f64_avx512, erf_f32_avx512},
};
static constexpr int NA = 3;

static std::uint64_t bits(double x) {
    std::uint64_t u;
    std::memcpy(&u, &x, 8);
    return u;
}
static std::uint32_t bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, 4);
    return u;
}
static double from_bits64(std::uint64_t u) {
    double x;
    std::memcpy(&x, &u, 8);
    return x;
}
static float from_bits32(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, 4);
    return x;
}

// ulp of the double / float format at the magnitude of a (long double) reference value
static long double ulp64(long double r) {
    r = fabsl(r);
    if (r < 0x1p-1022L) return 0x1p-1074L;
    int e;
    frexpl(r, &e);  // r = f * 2^e, f in [0.5, 1)
    return ldexpl(1.0L, e - 53);
}
static long double ulp32(long double r) {
    r = fabsl(r);
    if (r < 0x1p-126L) return 0x1p-149L;
    int e;
    frexpl(r, &e);
    return ldexpl(1.0L, e - 24);
}

static const __float128 two_over_sqrtpi_q =
    (__float128)0x1.20dd750429b6dp+0 + (__float128)0x1.1ae3a914fed80p-56 +
    (__float128)-0x1.3cbbebf65f145p-111;  // 2/sqrt(pi) to ~2^-165; see tools/erf_spot.py
static double cr_tiny(double x) { return (double)((__float128)x * two_over_sqrtpi_q); }
static float cr_tiny32(float x) { return (float)((__float128)x * two_over_sqrtpi_q); }

static int failures = 0;
#define CHECK(cond, ...)                                 \
    do {                                                 \
        if (!(cond)) {                                   \
            ++failures;                                  \
            if (failures < 40) std::printf(__VA_ARGS__); \
        }                                                \
    } while (0)

static void special() {
    const double inf = INFINITY;
    std::vector<double> x64 = {0.0,
                               -0.0,
                               inf,
                               -inf,
                               from_bits64(0x7ff8000000000000ull),
                               from_bits64(0xfff8000000000000ull),
                               from_bits64(0x7ff0000000000001ull),
                               from_bits64(0xfff4000000000123ull),
                               6.0,
                               -6.0,
                               5.921875,
                               1e300,
                               -1e300,
                               0x1p-1000,
                               0x1.fffffffffffffp-1001,
                               0x1p-1022,
                               0x1.fffffffffffffp-1023};
    // subnormals
    std::mt19937_64 rng(7);
    for (int i = 0; i < 52; ++i) x64.push_back(from_bits64(1ull << i));
    for (int i = 0; i < 20000; ++i) {
        std::uint64_t u = rng() & ((1ull << 52) - 1);
        x64.push_back(from_bits64(u >> (rng() % 52)));
        x64.push_back(from_bits64(rng() & 0x7fffffffffffffull) * 0x1p-970);  // tiny normals too
    }
    std::vector<double> neg(x64.size());
    for (std::size_t i = 0; i < x64.size(); ++i) neg[i] = -x64[i];
    for (int a = 0; a < NA; ++a) {
        std::vector<double> y(x64.size()), yn(x64.size());
        archs[a].f64(x64.data(), y.data(), x64.size());
        archs[a].f64(neg.data(), yn.data(), neg.size());
        int bad = 0;
        for (std::size_t i = 0; i < x64.size(); ++i) {
            double x = x64[i], e;
            if (std::isnan(x)) e = from_bits64(0x7ff8000000000000ull);
            else if (std::isinf(x)) e = std::copysign(1.0, x);
            else if (x == 0) e = x;
            else if (std::fabs(x) < 0x1p-1000) e = cr_tiny(x);
            else if (std::fabs(x) >= 6) e = std::copysign(1.0, x);
            else continue;
            if (bits(y[i]) != bits(e)) ++bad;
            CHECK(bits(y[i]) == bits(e),
                  "[%s] f64 special x=%a (%016llx): got %a (%016llx) want %a\n", archs[a].name, x,
                  (unsigned long long)bits(x), y[i], (unsigned long long)bits(y[i]), e);
            double en = std::isnan(x) ? e : -e;
            CHECK(bits(yn[i]) == bits(en), "[%s] f64 special -x=%a: got %a want %a\n",
                  archs[a].name, -x, yn[i], en);
        }
        std::printf("[%s] f64 special values + %zu subnormal/tiny: %d mismatches\n", archs[a].name,
                    x64.size(), bad);
    }
    // float32: specials and all subnormals
    std::vector<float> x32 = {0.0f,
                              -0.0f,
                              INFINITY,
                              -INFINITY,
                              from_bits32(0x7fc00000u),
                              from_bits32(0xffc00000u),
                              from_bits32(0x7f800001u),
                              from_bits32(0xff812345u),
                              4.0f,
                              -4.0f,
                              3.9192f,
                              1e30f,
                              -1e30f};
    for (std::uint32_t u = 1; u < 0x00800000u; ++u) x32.push_back(from_bits32(u));
    for (int a = 0; a < NA; ++a) {
        std::vector<float> y(x32.size());
        archs[a].f32(x32.data(), y.data(), x32.size());
        long bad = 0;
        for (std::size_t i = 0; i < x32.size(); ++i) {
            float x = x32[i], e;
            if (std::isnan(x)) e = from_bits32(0x7fc00000u);
            else if (std::isinf(x)) e = std::copysign(1.0f, x);
            else if (x == 0) e = x;
            else if (std::fabs(x) < 0x1p-126f) e = cr_tiny32(x);
            else if (std::fabs(x) >= 4) e = std::copysign(1.0f, x);
            else continue;
            if (bits(y[i]) != bits(e)) ++bad;
            CHECK(bits(y[i]) == bits(e), "[%s] f32 special x=%a (%08x): got %a (%08x) want %a\n",
                  archs[a].name, (double)x, bits(x), (double)y[i], bits(y[i]), (double)e);
        }
        std::printf("[%s] f32 special values + all subnormals: %ld mismatches\n", archs[a].name,
                    bad);
    }
}

// float32: every stride-th bit pattern (positive and negative), vs the correctly rounded value.
static void sweep32(std::uint64_t stride) {
    const std::size_t CH = 1 << 16;
    std::vector<float> x(CH), y(CH);
    double maxerr[NA] = {};
    float worst[NA] = {};
    long long notcr[NA] = {}, asym[NA] = {}, cnt = 0;
    std::vector<float> yneg(CH), xneg(CH);
    for (std::uint64_t base = 0; base < (1ull << 31); base += CH * stride) {
        std::size_t n = 0;
        for (std::uint64_t u = base; u < (1ull << 31) && n < CH; u += stride)
            x[n++] = from_bits32((std::uint32_t)u);
        for (std::size_t i = 0; i < n; ++i) xneg[i] = -x[i];
        std::vector<double> ref(n);
        for (std::size_t i = 0; i < n; ++i) ref[i] = std::erf((double)x[i]);
        cnt += n;
        for (int a = 0; a < NA; ++a) {
            archs[a].f32(x.data(), y.data(), n);
            archs[a].f32(xneg.data(), yneg.data(), n);
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(x[i])) continue;
                if (bits(yneg[i]) != (bits(y[i]) ^ 0x80000000u)) ++asym[a];
                long double r = ref[i];
                long double e = fabsl((long double)y[i] - r) / ulp32(r);
                if (e > 0.4999L) {  // near a tie or misrounded: settle with erfl
                    r = erfl((long double)x[i]);
                    e = fabsl((long double)y[i] - r) / ulp32(r);
                }
                if (y[i] != (float)r) ++notcr[a];
                if (e > maxerr[a]) {
                    maxerr[a] = (double)e;
                    worst[a] = x[i];
                }
            }
        }
    }
    for (int a = 0; a < NA; ++a)
        std::printf(
            "[%s] f32 sweep stride %llu (%lld inputs x2 signs): max err %.4f ulp at x=%a; "
            "not correctly rounded: %lld (%.4f%%); odd-symmetry mismatches: %lld\n",
            archs[a].name, (unsigned long long)stride, cnt, maxerr[a], (double)worst[a], notcr[a],
            100.0 * notcr[a] / cnt, asym[a]);
}

// float64: random inputs over the whole domain, vs erfl.
static void random64(long long count) {
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    const std::size_t CH = 1 << 16;
    std::vector<double> x(CH), y(CH), xn(CH), yn(CH);
    double maxerr[NA] = {};
    double worst[NA] = {};
    long long notcr[NA] = {}, asym[NA] = {}, done = 0;
    double maxerr_r[NA][8] = {};
    const char* rname[8] = {"[0,6] uniform",          "[0,1]",       "[0.7,2]",
                            "log-uniform 2^-1074..6", "random bits", "[5.5,6.5]",
                            "interval edges",         "[0,0.8]"};
    while (done < count) {
        std::size_t n = CH;
        std::vector<int> region(n);
        for (std::size_t i = 0; i < n; ++i) {
            int r = (int)(rng() % 8);
            double v;
            switch (r) {
                case 0: v = 6.0 * u01(rng); break;
                case 1: v = u01(rng); break;
                case 2: v = 0.7 + 1.3 * u01(rng); break;
                case 3: v = std::exp2(-1074.0 + 1077.0 * u01(rng)); break;
                case 4: v = from_bits64(rng()); break;
                case 5: v = 5.5 + u01(rng); break;
                case 6: {  // near the interval boundaries of the f64 table
                    using T = numfuse::kernels::erf_detail::erf_table_f64;
                    int k = 1 + (int)(rng() % 15);
                    double lvl = (0x1p52 - T::qn) + k - 0.5, B = T::qb, C = T::qc;
                    double b = (-B + std::sqrt(B * B + 4 * C * lvl)) / (2 * C);
                    v = b + (u01(rng) - 0.5) * 1e-9;
                    break;
                }
                default: v = 0.8 * u01(rng); break;
            }
            region[i] = r;
            x[i] = (rng() & 1) ? -v : v;
            xn[i] = -x[i];
        }
        std::vector<long double> ref(n);
        for (std::size_t i = 0; i < n; ++i) ref[i] = erfl((long double)x[i]);
        for (int a = 0; a < NA; ++a) {
            archs[a].f64(x.data(), y.data(), n);
            archs[a].f64(xn.data(), yn.data(), n);
            for (std::size_t i = 0; i < n; ++i) {
                if (std::isnan(x[i])) continue;
                if (bits(yn[i]) != (bits(y[i]) ^ 0x8000000000000000ull)) ++asym[a];
                long double r = ref[i];
                double cr = (double)r;
                if (std::fabs(x[i]) < 0x1p-100) {  // x*2/sqrt(pi): 64-bit product, and the CR value
                    r = (long double)x[i] * 1.12837916709551257389615890312154517L;
                    cr = cr_tiny(x[i]);
                }
                long double e = fabsl((long double)y[i] - r) / ulp64(r);
                if (y[i] != cr) ++notcr[a];
                if (e > maxerr[a]) {
                    maxerr[a] = (double)e;
                    worst[a] = x[i];
                }
                if (e > maxerr_r[a][region[i]]) maxerr_r[a][region[i]] = (double)e;
            }
        }
        done += n;
    }
    for (int a = 0; a < NA; ++a) {
        std::printf(
            "[%s] f64 random (%lld inputs x2 signs): max err %.4f ulp at x=%a; not CR: %lld "
            "(%.4f%%); odd-symmetry mismatches: %lld\n",
            archs[a].name, done, maxerr[a], worst[a], notcr[a], 100.0 * notcr[a] / done, asym[a]);
        std::printf("      by region:");
        for (int r = 0; r < 8; ++r) std::printf(" %s %.3f;", rname[r], maxerr_r[a][r]);
        std::printf("\n");
    }
}

template <class T, class F>
static double time_ns(F f, const std::vector<T>& in, std::vector<T>& out) {
    double best = 1e30;
    for (int rep = 0; rep < 15; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        for (int it = 0; it < 10; ++it) f(in.data(), out.data(), in.size());
        auto t1 = std::chrono::steady_clock::now();
        double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / (10.0 * in.size());
        if (ns < best) best = ns;
    }
    return best;
}

static void bench(std::size_t n = 100000) {
    std::mt19937_64 rng(1);
    std::normal_distribution<double> nd(0.0, 1.5);
    std::uniform_real_distribution<double> ud(-6.0, 6.0);
    std::vector<double> xn(n), xu(n), y(n);
    std::vector<float> fn(n), fu(n), fy(n);
    for (std::size_t i = 0; i < n; ++i) {
        xn[i] = nd(rng);
        xu[i] = ud(rng);
        fn[i] = (float)xn[i];
        fu[i] = (float)(xu[i] * 4.0 / 6.0);
    }
    double sink = 0;
    for (int a = 0; a < NA; ++a) {
        double t1 = time_ns(archs[a].f64, xn, y);
        sink += y[7];
        double t2 = time_ns(archs[a].f64, xu, y);
        sink += y[7];
        double t3 = time_ns(archs[a].f32, fn, fy);
        sink += fy[7];
        double t4 = time_ns(archs[a].f32, fu, fy);
        sink += fy[7];
        std::printf(
            "[%s] ns/element (%zu elements): f64 normal(0,1.5) %.3f, f64 U(-6,6) %.3f | "
            "f32 normal(0,1.5) %.3f, f32 U(-4,4) %.3f\n",
            archs[a].name, n, t1, t2, t3, t4);
    }
    double tl = time_ns(
        [](const double* in, double* out, std::size_t m) {
            for (std::size_t i = 0; i < m; ++i) out[i] = std::erf(in[i]);
        },
        xn, y);
    std::printf("[libm] std::erf scalar: %.3f ns/element (normal inputs) (sink %g)\n", tl, sink);
}

// Prints N random inputs and erfl(x) for tools/erf_spot.py.
static void dump(int count) {
    std::mt19937_64 rng(99);
    std::uniform_real_distribution<double> u01(0.0, 1.0);
    for (int i = 0; i < count; ++i) {
        double x = (i % 3 == 0)   ? 6.0 * u01(rng)
                   : (i % 3 == 1) ? u01(rng)
                                  : std::exp2(-60.0 * u01(rng));
        std::printf("%a %La\n", x, erfl((long double)x));
    }
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "special") special();
        else if (a == "f32") sweep32(std::strtoull(argv[++i], nullptr, 10));
        else if (a == "f64") random64(std::atoll(argv[++i]));
        else if (a == "bench") bench();
        else if (a == "benchn") bench(std::strtoull(argv[++i], nullptr, 10));
        else if (a == "dump") dump(std::atoi(argv[++i]));
        std::fflush(stdout);
    }
    if (failures) std::printf("FAILURES: %d\n", failures);
    return failures ? 1 : 0;
}
#endif
