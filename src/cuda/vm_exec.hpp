// The device interpreter's per-element core (see evaluate.cu), as NUMFUSE_HD
// functions: nvcc compiles it into the GPU kernel, g++ into a host loop
// (program.cpp, run_program_host) that the CPU tests compare with numfuse.evaluate.
// Transcendental functions other than exp/log/erf are CUDA's libdevice on the GPU
// and the C++ library on the host (the only place the two may differ).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "device_math/device_math.hpp"
#include "launch.hpp"

namespace numfuse::cuda::vm {

namespace dm = numfuse::device_math;

union Reg {
    double d;
    float f;
    long long l;
    int i;
    bool b;
    unsigned long long bits;
};

template <class T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool is_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
NUMFUSE_HD inline T get(const Reg& r) {
    if constexpr (std::is_same_v<T, double>) return r.d;
    else if constexpr (std::is_same_v<T, float>) return r.f;
    else if constexpr (std::is_same_v<T, long long>) return r.l;
    else if constexpr (std::is_same_v<T, int>) return r.i;
    else return r.b;
}

template <class T>
NUMFUSE_HD inline void put(Reg& r, T v) {
    if constexpr (std::is_same_v<T, double>) r.d = v;
    else if constexpr (std::is_same_v<T, float>) r.f = v;
    else if constexpr (std::is_same_v<T, long long>) r.l = v;
    else if constexpr (std::is_same_v<T, int>) r.i = v;
    else r.b = v;
}

template <class T>
NUMFUSE_HD inline T wrap_add(T a, T b) {
    using U = unsigned long long;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
NUMFUSE_HD inline T wrap_sub(T a, T b) {
    using U = unsigned long long;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
NUMFUSE_HD inline T wrap_mul(T a, T b) {
    using U = unsigned long long;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

template <class R, class T>
NUMFUSE_HD inline R cast_to(T a) {
    if constexpr (std::is_same_v<R, bool>) {
        return a != T(0);
    } else if constexpr (!is_float_v<R> && is_float_v<T>) {
        if (!(a >= T(-0x1p63) && a < T(0x1p63)))
            return sizeof(R) == 8 ? R(-0x7fffffffffffffffll - 1) : R(-0x7fffffff - 1);
        return static_cast<R>(static_cast<long long>(a));
    } else {
        return static_cast<R>(a);
    }
}

template <class T>
NUMFUSE_HD inline void cast_from(const Instr& in, Reg* r) {
    const T a = get<T>(r[in.a]);
    switch (static_cast<Type>(in.rtype)) {
        case Type::b: put<bool>(r[in.dst], cast_to<bool>(a)); break;
        case Type::i: put<int>(r[in.dst], cast_to<int>(a)); break;
        case Type::l: put<long long>(r[in.dst], cast_to<long long>(a)); break;
        case Type::f: put<float>(r[in.dst], cast_to<float>(a)); break;
        case Type::d: put<double>(r[in.dst], cast_to<double>(a)); break;
    }
}

// Real functions: float -> CUDA's f-suffixed versions, double -> the plain ones;
// fn_<libm> for every libdevice row of the function table (functions.hpp), plus
// pow and fmod for the operators. sqrt is IEEE correctly rounded
// (-prec-sqrt=true, the default), rint rounds half to even (np.round), fmod is
// exact on both sides.
#if defined(__CUDA_ARCH__)
#define NUMFUSE_VM_REAL_FN_1(cuda_fn)                                         \
    NUMFUSE_HD inline float fn_##cuda_fn(float x) { return ::cuda_fn##f(x); } \
    NUMFUSE_HD inline double fn_##cuda_fn(double x) { return ::cuda_fn(x); }
#define NUMFUSE_VM_REAL_FN_2(cuda_fn)                                                     \
    NUMFUSE_HD inline float fn_##cuda_fn(float a, float b) { return ::cuda_fn##f(a, b); } \
    NUMFUSE_HD inline double fn_##cuda_fn(double a, double b) { return ::cuda_fn(a, b); }
#else
#define NUMFUSE_VM_REAL_FN_1(cuda_fn)                                         \
    NUMFUSE_HD inline float fn_##cuda_fn(float x) { return std::cuda_fn(x); } \
    NUMFUSE_HD inline double fn_##cuda_fn(double x) { return std::cuda_fn(x); }
#define NUMFUSE_VM_REAL_FN_2(cuda_fn)                                                     \
    NUMFUSE_HD inline float fn_##cuda_fn(float a, float b) { return std::cuda_fn(a, b); } \
    NUMFUSE_HD inline double fn_##cuda_fn(double a, double b) { return std::cuda_fn(a, b); }
#endif
#define NUMFUSE_VM_LIBDEVICE_FN(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_VM_IF_LIBDEVICE_##gpu(NUMFUSE_VM_REAL_FN_##arity(libm))
#define NUMFUSE_VM_IF_LIBDEVICE_none(...)
#define NUMFUSE_VM_IF_LIBDEVICE_device_math(...)
#define NUMFUSE_VM_IF_LIBDEVICE_libdevice(...) __VA_ARGS__
NUMFUSE_FUNCTIONS(NUMFUSE_VM_LIBDEVICE_FN)
NUMFUSE_VM_REAL_FN_2(pow)
NUMFUSE_VM_REAL_FN_2(fmod)
#undef NUMFUSE_VM_LIBDEVICE_FN
#undef NUMFUSE_VM_REAL_FN_1
#undef NUMFUSE_VM_REAL_FN_2

// One function of the function table on operands of type T (exec's float switch).
#define NUMFUSE_VM_ARGS_1(fn) fn(A())
#define NUMFUSE_VM_ARGS_2(fn) fn(A(), B())
#define NUMFUSE_VM_CALL_device_math(name, libm, arity) dm::name##_scalar(A())
#define NUMFUSE_VM_CALL_libdevice(name, libm, arity) NUMFUSE_VM_ARGS_##arity(fn_##libm)
// clang-format off
#define NUMFUSE_VM_FUNCTION_CASE(name, arity, types, Functor, libm, ufunc, gpu, summary) \
    NUMFUSE_CUDA_VM_IF_GPU_##gpu(                                                        \
        case Family::Functor: put<T>(dst, NUMFUSE_VM_CALL_##gpu(name, libm, arity)); return;)
// clang-format on

// Python/NumPy floor division and remainder (np.floor_divide, np.remainder): the
// quotient is floored, the remainder takes the divisor's sign, a == b*q + r as
// closely as rounding allows; integer division by zero gives 0 as in NumPy.
template <class T>
NUMFUSE_HD inline T float_floor_divide(T a, T b, T* remainder) {
    T mod = fn_fmod(a, b);
    if (b == T(0)) {
        *remainder = mod;
        return a / b;
    }
    T div = (a - mod) / b;
    if (mod != T(0)) {
        if ((b < T(0)) != (mod < T(0))) {
            mod += b;
            div -= T(1);
        }
    } else {
        mod = fn_copysign(T(0), b);
    }
    T floordiv;
    if (div != T(0)) {
        floordiv = fn_floor(div);
        if (div - floordiv > T(0.5)) floordiv += T(1);
    } else {
        floordiv = fn_copysign(T(0), a / b);
    }
    *remainder = mod;
    return floordiv;
}

template <class T>
NUMFUSE_HD inline T int_floor_divide(T a, T b) {
    if (b == 0) return 0;
    if (b == -1) return wrap_sub(T(0), a);  // MIN // -1 wraps to MIN
    T q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

template <class T>
NUMFUSE_HD inline T int_remainder(T a, T b) {
    if (b == 0 || b == -1) return 0;
    T r = a % b;
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
}

// One instruction whose operands are of type T.
template <class T>
NUMFUSE_HD inline void exec(const Instr& in, Reg* r) {
    const Family fam = static_cast<Family>(in.family);
    Reg& dst = r[in.dst];
    // Operands as T; only read where the family uses them.
    const auto A = [&] { return get<T>(r[in.a]); };
    const auto B = [&] { return get<T>(r[in.b]); };
    switch (fam) {
        case Family::Copy: put<T>(dst, A()); return;
        case Family::OnesLike: put<T>(dst, T(1)); return;
        case Family::Cast: cast_from<T>(in, r); return;
        case Family::Where:
            put<T>(dst, get<bool>(r[in.a]) ? get<T>(r[in.b]) : get<T>(r[in.c]));
            return;
        case Family::Less: put<bool>(dst, A() < B()); return;
        case Family::LessEqual: put<bool>(dst, A() <= B()); return;
        case Family::Greater: put<bool>(dst, A() > B()); return;
        case Family::GreaterEqual: put<bool>(dst, A() >= B()); return;
        case Family::Equal: put<bool>(dst, A() == B()); return;
        case Family::NotEqual: put<bool>(dst, A() != B()); return;
        case Family::Maximum: {
            const T a = A(), b = B();
            put<T>(dst, (a >= b || a != a) ? a : b);
            return;
        }
        case Family::Minimum: {
            const T a = A(), b = B();
            put<T>(dst, (a <= b || a != a) ? a : b);
            return;
        }
        default: break;
    }
    if constexpr (std::is_same_v<T, bool>) {
        switch (fam) {
            case Family::BitAnd: put<bool>(dst, A() && B()); return;
            case Family::BitOr: put<bool>(dst, A() || B()); return;
            case Family::BitXor: put<bool>(dst, A() != B()); return;
            case Family::Invert: put<bool>(dst, !A()); return;
            default: return;
        }
    } else if constexpr (is_int_v<T>) {
        switch (fam) {
            case Family::Add: put<T>(dst, wrap_add(A(), B())); return;
            case Family::Sub: put<T>(dst, wrap_sub(A(), B())); return;
            case Family::Mul: put<T>(dst, wrap_mul(A(), B())); return;
            case Family::Neg: put<T>(dst, wrap_sub(T(0), A())); return;
            case Family::Abs: {
                const T a = A();
                put<T>(dst, a < 0 ? wrap_sub(T(0), a) : a);
                return;
            }
            case Family::BitAnd: put<T>(dst, A() & B()); return;
            case Family::BitOr: put<T>(dst, A() | B()); return;
            case Family::BitXor: put<T>(dst, A() ^ B()); return;
            case Family::Invert: put<T>(dst, ~A()); return;
            case Family::FloorDiv: put<T>(dst, int_floor_divide(A(), B())); return;
            case Family::Mod: put<T>(dst, int_remainder(A(), B())); return;
            case Family::Fmod: {
                const T a = A(), b = B();
                put<T>(dst, (b == 0 || b == -1) ? T(0) : T(a % b));
                return;
            }
            default: return;
        }
    } else {
        switch (fam) {
            NUMFUSE_FUNCTIONS(NUMFUSE_VM_FUNCTION_CASE)  // the function table's GPU rows
            case Family::Add: put<T>(dst, A() + B()); return;
            case Family::Sub: put<T>(dst, A() - B()); return;
            case Family::Mul: put<T>(dst, A() * B()); return;
            case Family::Div: put<T>(dst, A() / B()); return;
            case Family::Neg: put<T>(dst, -A()); return;
            case Family::Abs: put<T>(dst, dm::abs_(A())); return;
            case Family::Pow: put<T>(dst, fn_pow(A(), B())); return;
            case Family::Isnan: put<bool>(dst, dm::is_nan(A())); return;
            case Family::Isinf: {
                const T a = dm::abs_(A());
                put<bool>(dst, a == T(1) / T(0));
                return;
            }
            case Family::Isfinite: put<bool>(dst, dm::abs_(A()) < T(1) / T(0)); return;
            case Family::FloorDiv: {
                T mod;
                put<T>(dst, float_floor_divide(A(), B(), &mod));
                return;
            }
            case Family::Mod: {
                const T a = A(), b = B();
                T mod = fn_fmod(a, b);
                if (b != T(0)) float_floor_divide(a, b, &mod);
                put<T>(dst, mod);
                return;
            }
            case Family::Fmod: put<T>(dst, fn_fmod(A(), B())); return;
            case Family::Signbit:
                put<bool>(dst, (dm::bits_of(A()) >> (sizeof(T) * 8 - 1)) != 0);
                return;
            default: return;
        }
    }
}

NUMFUSE_HD inline void load(Reg& r, Type t, const void* base, std::int64_t i) {
    switch (t) {
        case Type::b: r.b = static_cast<const bool*>(base)[i]; break;
        case Type::i: r.i = static_cast<const int*>(base)[i]; break;
        case Type::l: r.l = static_cast<const long long*>(base)[i]; break;
        case Type::f: r.f = static_cast<const float*>(base)[i]; break;
        case Type::d: r.d = static_cast<const double*>(base)[i]; break;
    }
}

NUMFUSE_HD inline void store(const Reg& r, Type t, void* base, std::int64_t i) {
    switch (t) {
        case Type::b: static_cast<bool*>(base)[i] = r.b; break;
        case Type::i: static_cast<int*>(base)[i] = r.i; break;
        case Type::l: static_cast<long long*>(base)[i] = r.l; break;
        case Type::f: static_cast<float*>(base)[i] = r.f; break;
        case Type::d: static_cast<double*>(base)[i] = r.d; break;
    }
}

// One element: load every array input at index i, run the program, store the result.
NUMFUSE_HD inline void run_element(const Program& p, Reg* r, void* out, std::int64_t i) {
    for (int k = 0; k < p.nregs; ++k) {
        if (p.reg_input[k] >= 0) {
            load(r[k], static_cast<Type>(p.reg_type[k]), p.inputs[p.reg_input[k]], i);
        } else {
            r[k].bits = p.const_bits[k];
        }
    }
    for (int c = 0; c < p.ncode; ++c) {
        const Instr in = p.code[c];
        switch (static_cast<Type>(in.type)) {
            case Type::b: exec<bool>(in, r); break;
            case Type::i: exec<int>(in, r); break;
            case Type::l: exec<long long>(in, r); break;
            case Type::f: exec<float>(in, r); break;
            case Type::d: exec<double>(in, r); break;
        }
    }
    store(r[p.result], static_cast<Type>(p.result_type), out, i);
}

}  // namespace numfuse::cuda::vm
