// The one function table: a row per element-wise math function.
//
// A row is the only place a function is named. Generated from these rows: the parser's
// names, the compiler's type rules, the VM's opcode rows and per-level kernel tables
// (expr/opcodes.hpp, arch/expr_ops.hpp), the ufunc enum, loops, thread thresholds and
// registration (numfuse_core.hpp, arch/unary_loop.hpp, dispatch.cpp, scalar_loops.cpp,
// src/python/ufuncs.cpp), the NaN-policy probes (src/python/nan_policy.cpp), the GPU
// interpreter's families and the CUDA ufunc kernels (src/cuda), the kernel benchmarks and
// the accuracy harness (benchmarks/cpp), and, through numfuse._core._function_table(),
// numfuse-bench's cases. tools/gen_function_lists.py writes the package's ufunc exports and
// stubs and the lists in README.md and docs from the text of this header (`make regen`).
// docs/adding-a-function.md walks through adding a row.
//
// Columns of a row, R(X, name, arity, types, Functor, libm, ufunc, identity, gpu, threads,
// invalid, lo, hi, summary); NUMFUSE_FUNCTIONS(X) hands X name, arity, types, Functor,
// libm, ufunc, gpu and summary; the other columns are data only (FunctionInfo below):
//   name     as users write it: evaluate("name(x)"), and numfuse.name for a ufunc.
//   arity    1 or 2.
//   types    the type rule; bool operands compute in float32, integers in float64
//            (NumPy's loop choice) and the rule says which opcode rows exist:
//              float_complex     name_ff name_dd name_cc name_zz
//              float_only        name_ff name_dd (complex operands: TypeError)
//              float_pair        name_fff name_ddd (arity 2)
//              power             no opcode rows: evaluate compiles power(a, b) as a ** b
//                                (integers stay integers); the ufunc has NumPy's np.power
//                                loops, integer and complex ones included
//              float_power       no opcode rows: evaluate compiles float_power(a, b) as
//                                a ** b in float64 / complex128; np.float_power's loops
//              rounding          name_ff name_dd; bool and integer operands pass unchanged
//              rounding_complex  name_ff name_dd name_cc name_zz; bool and integers unchanged
//   Functor  the kernel: `kernel` or `kernel64` for a one-argument row whose kernel is
//            kernels::<name>_kernel (xsimd batches; `kernel64`: float64 batches only,
//            float32 lanes widened and rounded once) with kernels::<name>_special (the
//            lanes that may raise a floating-point condition): its VM functor
//            expr_ops::<name>_fn (arch/expr_math.hpp) and ufunc loop operation
//            <name>_fnOp (arch/table_op.hpp) are generated from the row, and its scalar
//            and complex values are scalar_libm::<libm>. Otherwise the name of a
//            hand-written functor, struct Functor in arch/expr_math.hpp, whose ufunc
//            loop operation is struct FunctorOp in arch/unary_loop.hpp (binary_loop.hpp
//            for two arguments). NUMFUSE_FUNCTIONS hands X the functor's type name.
//   libm     the function of one scalar, scalar_libm::libm (scalar_libm.hpp: the C++
//            library's, plus expit, logaddexp, logaddexp2 and NumPy's complex forms it lacks): a
//            ufunc's long double and complex loops and the VM's complex ones; the GPU's `libdevice`
//            form (CUDA's ::libm / libmf). Two-argument rows call libm(a, b) (long double).
//   ufunc    no | numpy | scipy: whether numfuse.name is a numpy.ufunc, and its loop
//            order (NumPy picks the first loop the input casts to safely, so the order
//            decides result types): numpy "efdgFDG" as np.exp, scipy "dfg" as
//            scipy.special (float_only rules drop the complex loops; float_pair rows
//            take NumPy's "efdg", as np.logaddexp).
//   identity none | minus_inf | zero: the ufunc's identity as NumPy's generate_umath.py
//            gives it (None: no identity, reduce neither of an empty array nor over several
//            axes at once; MinusInfinity: -inf, and reorderable, as np.logaddexp; Zero: the
//            integer 0, reorderable, as np.hypot). none where ufunc is no and for the
//            one-argument ufuncs.
//   gpu      none | device_math | libdevice: how the GPU computes it. device_math is
//            numfuse's own device code (device_math::name_scalar, the same source the
//            CPU tests check); libdevice is CUDA's libm.
//   threads  a ufunc's elements per thread below which its call stays on one thread
//            (splitting costs a fork/join of a few microseconds: about 32768 for a kernel
//            of 1 ns per float64 element, exp and log; 8192 for 2-3 ns; 4096 for the
//            trigonometric, inverse and hyperbolic ones, 3-10 ns). Above 1000 for every
//            ufunc, so that small calls never fork; 0 where ufunc is no.
//   invalid  none | negative | below_one | below_minus_one | outside_unit | infinite: the
//            arguments outside the domain the NaN policy probes NumPy with (invalid_args
//            below; src/python/nan_policy.cpp); none where every non-NaN argument gives a
//            non-NaN result.
//   lo, hi   where the function is commonly used (and defined): the inputs of the
//            benchmarks (benchmarks/cpp/bench_kernels.cpp, numfuse-bench).
//   summary  one line for docstrings and numfuse._core._function_table().
//
// This header is plain macros and constexpr data (no includes): nvcc and NVRTC
// (the CUDA run-time compiler of evaluate programs) read it too.
#pragma once

// clang-format off
#define NUMFUSE_FUNCTION_ROWS(R, X) \
/*    name       ar types             Functor    libm       ufunc  identity   gpu          threads invalid          lo     hi     summary */ \
    R(X, sqrt,      1, float_complex,    Sqrt,      sqrt,      numpy, none,      libdevice,   32768, negative,        0.1,   100.0, "Square root") \
    R(X, sin,       1, float_complex,    Sin,       sin,       numpy, none,      libdevice,   4096,  infinite,        -10.0, 10.0,  "Sine") \
    R(X, cos,       1, float_complex,    Cos,       cos,       numpy, none,      libdevice,   4096,  infinite,        -10.0, 10.0,  "Cosine") \
    R(X, tan,       1, float_complex,    Tan,       tan,       numpy, none,      libdevice,   4096,  infinite,        -1.5,  1.5,   "Tangent") \
    R(X, arcsin,    1, float_complex,    Arcsin,    asin,      numpy, none,      libdevice,   4096,  outside_unit,    -1.0,  1.0,   "Inverse sine") \
    R(X, arccos,    1, float_complex,    Arccos,    acos,      numpy, none,      libdevice,   4096,  outside_unit,    -1.0,  1.0,   "Inverse cosine") \
    R(X, arctan,    1, float_complex,    Arctan,    atan,      numpy, none,      libdevice,   4096,  none,            -10.0, 10.0,  "Inverse tangent") \
    R(X, sinh,      1, float_complex,    Sinh,      sinh,      numpy, none,      libdevice,   4096,  none,            -10.0, 10.0,  "Hyperbolic sine") \
    R(X, cosh,      1, float_complex,    Cosh,      cosh,      numpy, none,      libdevice,   4096,  none,            -10.0, 10.0,  "Hyperbolic cosine") \
    R(X, tanh,      1, float_complex,    Tanh,      tanh,      numpy, none,      libdevice,   8192,  none,            -5.0,  5.0,   "Hyperbolic tangent") \
    R(X, arcsinh,   1, float_complex,    Arcsinh,   asinh,     numpy, none,      libdevice,   4096,  none,            -10.0, 10.0,  "Inverse hyperbolic sine") \
    R(X, arccosh,   1, float_complex,    Arccosh,   acosh,     numpy, none,      libdevice,   4096,  below_one,       1.0,   100.0, "Inverse hyperbolic cosine") \
    R(X, arctanh,   1, float_complex,    Arctanh,   atanh,     numpy, none,      libdevice,   4096,  outside_unit,    -1.0,  1.0,   "Inverse hyperbolic tangent") \
    R(X, exp,       1, float_complex,    Exp,       exp,       numpy, none,      device_math, 32768, none,            -5.0,  5.0,   "Exponential") \
    R(X, log,       1, float_complex,    Log,       log,       numpy, none,      device_math, 32768, negative,        0.1,   100.0, "Natural logarithm") \
    R(X, log1p,     1, float_complex,    Log1p,     log1p,     numpy, none,      libdevice,   8192,  below_minus_one, -0.5,  10.0,  "log(1 + x)") \
    R(X, log10,     1, float_complex,    Log10,     log10,     numpy, none,      libdevice,   8192,  negative,        0.1,   100.0, "Base-10 logarithm") \
    R(X, log2,      1, float_complex,    Log2,      log2,      numpy, none,      libdevice,   8192,  negative,        0.1,   100.0, "Base-2 logarithm") \
    R(X, expm1,     1, float_complex,    Expm1,     expm1,     numpy, none,      libdevice,   8192,  none,            -5.0,  5.0,   "exp(x) - 1") \
    R(X, erf,       1, float_only,       Erf,       erf,       scipy, none,      device_math, 8192,  none,            -3.0,  3.0,   "Error function") \
    R(X, erfc,      1, float_only,       Erfc,      erfc,      scipy, none,      libdevice,   4096,  none,            -3.0,  3.0,   "Complementary error function") \
    R(X, expit,     1, float_only,       Expit,     expit,     scipy, none,      none,        8192,  none,            -10.0, 10.0,  "Logistic sigmoid 1 / (1 + exp(-x))") \
    R(X, ceil,      1, rounding,         Ceil,      ceil,      no,    none,      libdevice,   0,     none,            -10.0, 10.0,  "Ceiling") \
    R(X, floor,     1, rounding,         Floor,     floor,     no,    none,      libdevice,   0,     none,            -10.0, 10.0,  "Floor") \
    R(X, trunc,     1, rounding,         Trunc,     trunc,     no,    none,      libdevice,   0,     none,            -10.0, 10.0,  "Truncation toward zero") \
    R(X, round,     1, rounding_complex, Round,     rint,      no,    none,      libdevice,   0,     none,            -10.0, 10.0,  "Round half to even") \
    R(X, nextafter, 2, float_pair,       Nextafter, nextafter, no,    none,      none,        0,     none,            -10.0, 10.0,  "Next float after x1 toward x2") \
    R(X, copysign,  2, float_pair,       Copysign,  copysign,  no,    none,      libdevice,   0,     none,            -10.0, 10.0,  "x1 with the sign of x2") \
    R(X, logaddexp, 2, float_pair,       Logaddexp, logaddexp, numpy, minus_inf, none,        8192,  none,            -5.0,  5.0,   "log(exp(x1) + exp(x2))") \
    R(X, logaddexp2, 2, float_pair,      Logaddexp2, logaddexp2, numpy, minus_inf, none,      8192,  none,            -5.0,  5.0,   "log2(2**x1 + 2**x2)") \
    R(X, exp2,      1, float_complex,    Exp2,      exp2,      numpy, none,      libdevice,   32768, none,            -5.0,  5.0,   "Base-2 exponential 2**x") \
    R(X, cbrt,      1, float_only,       Cbrt,      cbrt,      numpy, none,      libdevice,   16384, none,            -10.0, 10.0,  "Cube root") \
    R(X, hypot,     2, float_pair,       Hypot,     hypot,     numpy, zero,      libdevice,   8192,  none,            -10.0, 10.0,  "sqrt(x1**2 + x2**2)") \
    R(X, arctan2,   2, float_pair,       Arctan2,   atan2,     numpy, none,      libdevice,   4096,  none,            -10.0, 10.0,  "Quadrant-aware arctan(x1 / x2)") \
    R(X, power,     2, power,            Pow,       pow,       numpy, none,      none,        4096,  none,            0.1,   10.0,  "x1 raised to the power x2") \
    R(X, float_power, 2, float_power,    Pow,       pow,       numpy, none,      none,        4096,  none,            0.1,   10.0,  "x1 raised to the power x2, computed in float64 or complex128")
// clang-format on

// Every row: X(name, arity, types, Functor, libm, ufunc, gpu, summary), Functor the
// functor's type name (NUMFUSE_FN_FUNCTOR).
// (tools/gen_function_lists.py names the columns by NUMFUSE_FN_EVERY_ROW's parameters.)
#define NUMFUSE_FUNCTIONS(X) NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_EVERY_ROW, X)
#define NUMFUSE_FN_EVERY_ROW(X, name, arity, types, Functor, libm, ufunc, identity, gpu, threads, \
                             invalid, lo, hi, summary)                                            \
    NUMFUSE_FN_CALL(                                                                              \
        X, (name, arity, types, NUMFUSE_FN_FUNCTOR(name, Functor), libm, ufunc, gpu, summary))
// X's arguments expanded before X sees them (X may paste Functor##Op).
#define NUMFUSE_FN_CALL(X, arguments) X arguments

// The functor's type name of a row: name_fn where the Functor column is `kernel` or
// `kernel64` (generated from the row), else the column itself (a hand-written functor).
// NUMFUSE_FN_GENERATED(Functor) is 1 for the two words, 0 for any other identifier: the
// words define a probe macro that expands to two arguments, which moves the 1 into the
// second argument's place.
#define NUMFUSE_FN_FUNCTOR(name, Functor) \
    NUMFUSE_FN_CAT(NUMFUSE_FN_FUNCTOR_, NUMFUSE_FN_GENERATED(Functor))(name, Functor)
#define NUMFUSE_FN_FUNCTOR_0(name, Functor) Functor
#define NUMFUSE_FN_FUNCTOR_1(name, Functor) name##_fn
#define NUMFUSE_FN_GENERATED(Functor) NUMFUSE_FN_PROBE(NUMFUSE_FN_PROBE_##Functor)
#define NUMFUSE_FN_PROBE(...) NUMFUSE_FN_SECOND(__VA_ARGS__, 0, unused)
#define NUMFUSE_FN_SECOND(first, second, ...) second
#define NUMFUSE_FN_PROBE_kernel unused, 1
#define NUMFUSE_FN_PROBE_kernel64 unused, 1
// NUMFUSE_FN_IF_GENERATED(Functor)(code): code for a generated functor's row only.
#define NUMFUSE_FN_IF_GENERATED(Functor) \
    NUMFUSE_FN_CAT(NUMFUSE_FN_IF_, NUMFUSE_FN_GENERATED(Functor))
#define NUMFUSE_FN_IF_0(...)
#define NUMFUSE_FN_IF_1(...) __VA_ARGS__
#define NUMFUSE_FN_CAT(a, b) NUMFUSE_FN_CAT_(a, b)
#define NUMFUSE_FN_CAT_(a, b) a##b

// The one-argument ufuncs: X(name), in table order (the UnaryOp enum).
#define NUMFUSE_UNARY_OPS(X) NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_UFUNC_ROW, X)
#define NUMFUSE_FN_UFUNC_ROW(X, name, arity, types, Functor, libm, ufunc, ...) \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_1_##arity(X(name)))
#define NUMFUSE_FN_IF_UFUNC_no(...)
#define NUMFUSE_FN_IF_UFUNC_numpy(...) __VA_ARGS__
#define NUMFUSE_FN_IF_UFUNC_scipy(...) __VA_ARGS__
#define NUMFUSE_FN_IF_ARITY_1_1(...) __VA_ARGS__
#define NUMFUSE_FN_IF_ARITY_1_2(...)
#define NUMFUSE_FN_IF_ARITY_2_1(...)
#define NUMFUSE_FN_IF_ARITY_2_2(...) __VA_ARGS__

// The two-argument ufuncs: X(name), in table order (the BinaryOp enum).
#define NUMFUSE_BINARY_OPS(X) NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_BINARY_UFUNC_ROW, X)
#define NUMFUSE_FN_BINARY_UFUNC_ROW(X, name, arity, types, Functor, libm, ufunc, ...) \
    NUMFUSE_FN_IF_UFUNC_##ufunc(NUMFUSE_FN_IF_ARITY_2_##arity(X(name)))

// The ufuncs the GPU runs with numfuse's own device code (numfuse.cuda.name): X(name).
#define NUMFUSE_GPU_UNARY_OPS(X) NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_GPU_UFUNC_ROW, X)
#define NUMFUSE_FN_GPU_UFUNC_ROW(X, name, arity, types, Functor, libm, ufunc, identity, gpu, ...) \
    NUMFUSE_FN_IF_UFUNC_##ufunc(                                                                  \
        NUMFUSE_FN_IF_ARITY_1_##arity(NUMFUSE_FN_IF_DEVICE_MATH_##gpu(X(name))))
#define NUMFUSE_FN_IF_DEVICE_MATH_none(...)
#define NUMFUSE_FN_IF_DEVICE_MATH_libdevice(...)
#define NUMFUSE_FN_IF_DEVICE_MATH_device_math(...) __VA_ARGS__

// The VM opcode rows of each function (expr/opcodes.hpp's row format).
#define NUMFUSE_FUNCTION_OPCODES(X) NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_OPCODE_ROWS, X)
#define NUMFUSE_FN_OPCODE_ROWS(X, name, arity, types, Functor, ...) \
    NUMFUSE_FN_OPCODES_##types(X, name, NUMFUSE_FN_FUNCTOR(name, Functor))
#define NUMFUSE_FN_OPCODES_float_only(X, name, F) \
    X(name##_ff, F, f, f, n, n) X(name##_dd, F, d, d, n, n)
#define NUMFUSE_FN_OPCODES_float_complex(X, name, F)                      \
    NUMFUSE_FN_OPCODES_float_only(X, name, F) X(name##_cc, F, c, c, n, n) \
        X(name##_zz, F, z, z, n, n)
#define NUMFUSE_FN_OPCODES_rounding(X, name, F) NUMFUSE_FN_OPCODES_float_only(X, name, F)
#define NUMFUSE_FN_OPCODES_rounding_complex(X, name, F) NUMFUSE_FN_OPCODES_float_complex(X, name, F)
#define NUMFUSE_FN_OPCODES_float_pair(X, name, F) \
    X(name##_fff, F, f, f, f, n) X(name##_ddd, F, d, d, d, n)
// power and float_power compile to the ** operator's opcodes (pow_*).
#define NUMFUSE_FN_OPCODES_power(X, name, F)
#define NUMFUSE_FN_OPCODES_float_power(X, name, F)

namespace numfuse::core {

// The ufuncs, one enumerator per ufunc row.
enum class UnaryOp : int {
#define NUMFUSE_UNARY_ENUM(name) name,
    NUMFUSE_UNARY_OPS(NUMFUSE_UNARY_ENUM)
#undef NUMFUSE_UNARY_ENUM
};
#define NUMFUSE_UNARY_COUNT(name) +1
inline constexpr int unary_op_count = 0 NUMFUSE_UNARY_OPS(NUMFUSE_UNARY_COUNT);
inline constexpr int binary_op_count = 0 NUMFUSE_BINARY_OPS(NUMFUSE_UNARY_COUNT);
#undef NUMFUSE_UNARY_COUNT

// The two-argument ufuncs, one enumerator per ufunc row of arity 2.
enum class BinaryOp : int {
#define NUMFUSE_BINARY_ENUM(name) name,
    NUMFUSE_BINARY_OPS(NUMFUSE_BINARY_ENUM)
#undef NUMFUSE_BINARY_ENUM
};

#ifndef __CUDACC_RTC__
// The table as data, for code that looks functions up by name at run time.
enum class TypeRule : unsigned char {
    float_complex,
    float_only,
    float_pair,
    rounding,
    rounding_complex,
    power,
    float_power
};
enum class GpuForm : unsigned char { none, device_math, libdevice };
enum class UfuncIdentity : unsigned char { none, minus_inf, zero };
enum class InvalidArgs : unsigned char {
    none,
    negative,
    below_one,
    below_minus_one,
    outside_unit,
    infinite
};

// The two arguments outside the domain that an `invalid` class names: a finite one and an
// infinite one (kernels make invalid NaNs on different paths for the two), and an argument
// inside the domain of every function of that class.
struct InvalidProbe {
    double finite;
    double infinite;
    double inside;
};
inline constexpr InvalidProbe invalid_probe(InvalidArgs args) noexcept {
    constexpr double inf = __builtin_inf();
    switch (args) {
        case InvalidArgs::none: break;
        case InvalidArgs::negative: return {-1.0, -inf, 0.5};  // log, log2, log10, sqrt
        case InvalidArgs::below_one: return {-1.0, -inf, 1.5};  // arccosh
        case InvalidArgs::below_minus_one: return {-2.0, -inf, 0.5};  // log1p
        case InvalidArgs::outside_unit: return {2.0, -inf, 0.5};  // arcsin, arccos, arctanh
        case InvalidArgs::infinite: return {-inf, inf, 0.5};  // sin, cos, tan
    }
    return {0.0, 0.0, 0.5};
}

struct FunctionInfo {
    const char* name;
    int arity;
    TypeRule types;
    const char* ufunc_loops;  // "" when not a ufunc; else NumPy type characters in order
    UfuncIdentity identity;
    GpuForm gpu;
    const char* summary;
    const char* libm;
    int min_elements_per_thread;  // the threads column
    InvalidArgs invalid;
    double lo, hi;  // the benchmarks' inputs
};

// Loop orders; the complex loops only where the type rule has complex opcodes.
#define NUMFUSE_FN_LOOPS_no(types) ""
#define NUMFUSE_FN_LOOPS_numpy(types) NUMFUSE_FN_NUMPY_LOOPS_##types
#define NUMFUSE_FN_LOOPS_scipy(types) NUMFUSE_FN_SCIPY_LOOPS_##types
#define NUMFUSE_FN_NUMPY_LOOPS_float_complex "efdgFDG"
#define NUMFUSE_FN_NUMPY_LOOPS_rounding_complex "efdgFDG"
#define NUMFUSE_FN_NUMPY_LOOPS_float_only "efdg"
#define NUMFUSE_FN_NUMPY_LOOPS_rounding "efdg"
#define NUMFUSE_FN_NUMPY_LOOPS_float_pair "efdg"
#define NUMFUSE_FN_NUMPY_LOOPS_power "bBhHiIlLqQefdgFDG"
#define NUMFUSE_FN_NUMPY_LOOPS_float_power "dgDG"
#define NUMFUSE_FN_SCIPY_LOOPS_float_complex "dfgDFG"
#define NUMFUSE_FN_SCIPY_LOOPS_rounding_complex "dfgDFG"
#define NUMFUSE_FN_SCIPY_LOOPS_float_only "dfg"
#define NUMFUSE_FN_SCIPY_LOOPS_rounding "dfg"

inline constexpr FunctionInfo function_table[] = {
#define NUMFUSE_FN_INFO(X, name, arity, types, Functor, libm, ufunc, identity, gpu, threads, \
                        invalid, lo, hi, summary)                                            \
    {#name,                                                                                  \
     arity,                                                                                  \
     TypeRule::types,                                                                        \
     NUMFUSE_FN_LOOPS_##ufunc(types),                                                        \
     UfuncIdentity::identity,                                                                \
     GpuForm::gpu,                                                                           \
     summary,                                                                                \
     #libm,                                                                                  \
     threads,                                                                                \
     InvalidArgs::invalid,                                                                   \
     lo,                                                                                     \
     hi},
    NUMFUSE_FUNCTION_ROWS(NUMFUSE_FN_INFO, unused)
#undef NUMFUSE_FN_INFO
};
inline constexpr int function_count =
    static_cast<int>(sizeof function_table / sizeof *function_table);

// The row of `name`, or nullptr (a linear scan over a few dozen rows: compile time only).
inline const FunctionInfo* find_function(const char* name) noexcept {
    for (const FunctionInfo& info : function_table) {
        const char* a = info.name;
        const char* b = name;
        while (*a != '\0' && *a == *b) ++a, ++b;
        if (*a == *b) return &info;
    }
    return nullptr;
}

inline constexpr bool has_complex(TypeRule rule) noexcept {
    return rule == TypeRule::float_complex || rule == TypeRule::rounding_complex;
}

inline constexpr const char* type_rule_name(TypeRule rule) noexcept {
    switch (rule) {
        case TypeRule::float_complex: return "float_complex";
        case TypeRule::float_only: return "float_only";
        case TypeRule::float_pair: return "float_pair";
        case TypeRule::rounding: return "rounding";
        case TypeRule::rounding_complex: return "rounding_complex";
        case TypeRule::power: return "power";
        case TypeRule::float_power: return "float_power";
    }
    return "unknown";
}

// The ufunc rows of one arity in enum order.
inline constexpr const FunctionInfo* ufunc_row(int arity, int k) noexcept {
    for (const FunctionInfo& info : function_table) {
        if (info.ufunc_loops[0] != '\0' && info.arity == arity && k-- == 0) return &info;
    }
    return nullptr;
}
inline constexpr const FunctionInfo* ufunc_info(UnaryOp op) noexcept {
    return ufunc_row(1, static_cast<int>(op));
}
inline constexpr const FunctionInfo* ufunc_info(BinaryOp op) noexcept {
    return ufunc_row(2, static_cast<int>(op));
}
#endif

}  // namespace numfuse::core
