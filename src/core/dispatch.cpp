// The ufuncs' entry points: apply_unary / apply_binary (the active level's SIMD loops,
// threaded; float16 through float32 and long double and complex by scalar_loops.cpp),
// the thread thresholds and the NaN-policy store.
//
// Compiled with the baseline flags only: it runs on any CPU of the target architecture
// and calls a wider level's loops only where levels.cpp says the CPU runs it.
#include <algorithm>
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "arch/level_tables.hpp"
#include "fp_status.hpp"
#include "numfuse_core.hpp"
#include "parallel.hpp"
#include "scalar_loops.hpp"
#include "streaming.hpp"

namespace numfuse::core {
namespace {

const PerLevelTables<UnaryTable>& unary_tables() noexcept {
    static const PerLevelTables<UnaryTable> tables(
        [](const LevelKernelFill& fill, UnaryTable& table) { fill.unary(table); });
    return tables;
}

const PerLevelTables<BinaryTable>& binary_tables() noexcept {
    static const PerLevelTables<BinaryTable> tables(
        [](const LevelKernelFill& fill, BinaryTable& table) { fill.binary(table); });
    return tables;
}

// Elements per thread below which a ufunc call stays on one thread: the table's threads
// column (functions.hpp), read once into arrays here (a call must not scan the table).
struct ThreadThresholds {
    std::size_t unary[unary_op_count] = {};
    std::size_t binary[binary_op_count > 0 ? binary_op_count : 1] = {};
};
constexpr ThreadThresholds thread_thresholds_of_table() noexcept {
    ThreadThresholds t;
    for (int k = 0; k < unary_op_count; ++k) {
        t.unary[k] = static_cast<std::size_t>(ufunc_row(1, k)->min_elements_per_thread);
    }
    for (int k = 0; k < binary_op_count; ++k) {
        t.binary[k] = static_cast<std::size_t>(ufunc_row(2, k)->min_elements_per_thread);
    }
    return t;
}
constexpr ThreadThresholds thread_thresholds = thread_thresholds_of_table();

// Which unary rows take complex operands (has_complex of the row's type rule), read once
// from the table like the thresholds: unary_supported runs on every ufunc call.
struct ComplexRows {
    bool unary[unary_op_count] = {};
};
constexpr ComplexRows complex_rows_of_table() noexcept {
    ComplexRows c;
    for (int k = 0; k < unary_op_count; ++k) c.unary[k] = has_complex(ufunc_row(1, k)->types);
    return c;
}
constexpr ComplexRows complex_rows = complex_rows_of_table();
constexpr bool every_ufunc_forks_above_1000() noexcept {
    for (const std::size_t n : thread_thresholds.unary) {
        if (n <= 1000) return false;
    }
    for (int k = 0; k < binary_op_count; ++k) {
        if (thread_thresholds.binary[k] <= 1000) return false;
    }
    return true;
}
static_assert(every_ufunc_forks_above_1000(),
              "functions.hpp: a ufunc row's threads column must be above 1000");

std::size_t min_elements_per_thread(UnaryOp op) noexcept {
    return thread_thresholds.unary[static_cast<int>(op)];
}
std::size_t min_elements_per_thread(BinaryOp op) noexcept {
    return thread_thresholds.binary[static_cast<int>(op)];
}

}  // namespace

const char* unary_op_name(UnaryOp op) noexcept {
    const FunctionInfo* info = ufunc_info(op);
    return info != nullptr ? info->name : "unknown";
}

UnaryLoop unary_loop(UnaryOp op, DType dtype, Level level) noexcept {
    const int d = static_cast<int>(dtype);
    if (d >= simd_dtype_count) return nullptr;
    if (!level_compiled(level) || !level_supported(level)) return nullptr;
    return unary_tables()[level][static_cast<int>(op)][d][0];
}

namespace {
std::atomic<std::uint64_t> invalid_nans[unary_op_count][simd_dtype_count] = {};
std::atomic<std::uint64_t> nan_inputs[unary_op_count][simd_dtype_count] = {};
std::atomic<bool> quiet_subnormal_underflow[unary_op_count][simd_dtype_count] = {};
std::atomic<unsigned> power_conventions[simd_dtype_count] = {};
}  // namespace

void set_power_convention(DType dtype, unsigned bits) noexcept {
    const int d = static_cast<int>(dtype);
    if (d < simd_dtype_count) power_conventions[d].store(bits);
}

unsigned power_convention(DType dtype) noexcept {
    const int d = static_cast<int>(dtype);
    if (d >= simd_dtype_count) return 0;
    return power_conventions[d].load(std::memory_order_relaxed);
}

void set_subnormal_underflow(UnaryOp op, DType dtype, bool raise) noexcept {
    const int d = static_cast<int>(dtype);
    if (d < simd_dtype_count) quiet_subnormal_underflow[static_cast<int>(op)][d].store(!raise);
}

bool subnormal_underflow(UnaryOp op, DType dtype) noexcept {
    const int d = static_cast<int>(dtype);
    if (d >= simd_dtype_count) return true;
    return !quiet_subnormal_underflow[static_cast<int>(op)][d].load(std::memory_order_relaxed);
}

void set_invalid_nan_bits(UnaryOp op, DType dtype, std::uint64_t bits) noexcept {
    const int d = static_cast<int>(dtype);
    if (d < simd_dtype_count) invalid_nans[static_cast<int>(op)][d].store(bits);
}

void set_nan_input_bits(UnaryOp op, DType dtype, std::uint64_t bits) noexcept {
    const int d = static_cast<int>(dtype);
    if (d < simd_dtype_count) nan_inputs[static_cast<int>(op)][d].store(bits);
}

std::uint64_t nan_input_bits(UnaryOp op, DType dtype) noexcept {
    const int d = static_cast<int>(dtype);
    if (d >= simd_dtype_count) return 0;
    return nan_inputs[static_cast<int>(op)][d].load(std::memory_order_relaxed);
}

std::uint64_t invalid_nan_bits(UnaryOp op, DType dtype) noexcept {
    const int d = static_cast<int>(dtype);
    if (d >= simd_dtype_count) return 0;
    return invalid_nans[static_cast<int>(op)][d].load(std::memory_order_relaxed);
}

namespace {

// How a loop's input shares memory with its output. NumPy's contract for an
// inner loop is the result of running it element by element, in order, and
// NumPy passes overlapping operands only where that order is what it wants:
// the output trailing a 1-d input (its trivial loop: np.exp(x[1:], out=x[:-1])),
// and reduce / accumulate, whose operand is the output itself at stride 0 or
// one element back; it copies every other overlap first. Threads and SIMD
// blocks give that result only in the first two cases below.
enum class Sharing {
    // No byte in common, element for element (in place), or one element:
    // any order, any threads.
    none,
    // Each output element lands only on input elements before its own (same
    // direction, the output behind, its stride no longer than the input's):
    // reading a block of inputs before writing that block's outputs, block
    // after block, is the in-order result.
    trailing,
    // Any other overlap (an output element lands on an input still to be
    // read): element by element, in order.
    in_order,
};

Sharing sharing_of(const char* in, std::ptrdiff_t in_stride, const char* out,
                   std::ptrdiff_t out_stride, std::size_t n, std::size_t size) noexcept {
    if (n <= 1 || (in == out && in_stride == out_stride && out_stride != 0)) return Sharing::none;
    const auto span = [&](const char* p, std::ptrdiff_t stride) {
        const char* last = p + static_cast<std::ptrdiff_t>(n - 1) * stride;
        return std::make_pair(std::min(p, last), std::max(p, last) + size);
    };
    const auto [in_lo, in_hi] = span(in, in_stride);
    const auto [out_lo, out_hi] = span(out, out_stride);
    if (!(in_lo < out_hi && out_lo < in_hi)) return Sharing::none;
    const auto in_step = static_cast<std::size_t>(in_stride < 0 ? -in_stride : in_stride);
    const auto out_step = static_cast<std::size_t>(out_stride < 0 ? -out_stride : out_stride);
    const bool behind = (in_stride > 0 && out_stride > 0 && out <= in) ||
                        (in_stride < 0 && out_stride < 0 && out >= in);
    return behind && out_step >= size && out_step <= in_step ? Sharing::trailing
                                                             : Sharing::in_order;
}

Sharing worst(Sharing a, Sharing b) noexcept { return a > b ? a : b; }

std::size_t element_size(DType dtype) noexcept {
    switch (dtype) {
        case DType::f32: return sizeof(float);
        case DType::f64: return sizeof(double);
        case DType::f16: return 2;
        default: return sizeof(long double);
    }
}

// Elements per block of a trailing call: inputs are copied a block at a time
// (bounded memory), and a block is long enough for every thread to get work.
constexpr std::size_t trailing_block = std::size_t{1} << 18;

// An input copied a block at a time into contiguous memory (see Sharing::trailing).
struct CopiedInput {
    const char* data;
    std::ptrdiff_t stride;
    std::size_t size;
    std::unique_ptr<char[]> buffer;  // null: used in place

    CopiedInput(const char* p, std::ptrdiff_t s, std::size_t item, bool copy) noexcept
        : data(p), stride(s), size(item) {
        if (copy) buffer.reset(new (std::nothrow) char[trailing_block * item]);
    }
    bool failed(bool copy) const noexcept { return copy && !buffer; }
    // The input elements [begin, begin + count) as (pointer, stride).
    std::pair<const char*, std::ptrdiff_t> block(std::size_t begin, std::size_t count) const {
        const char* from = data + static_cast<std::ptrdiff_t>(begin) * stride;
        if (!buffer) return {from, stride};
        for (std::size_t k = 0; k < count; ++k) {
            std::memcpy(buffer.get() + k * size, from + static_cast<std::ptrdiff_t>(k) * stride,
                        size);
        }
        return {buffer.get(), static_cast<std::ptrdiff_t>(size)};
    }
};

// The threaded loops of apply_unary / apply_binary over operands that do not
// overlap the output (or only element for element).
unsigned run_unary(const UnaryLoop (&table)[simd_dtype_count][2], UnaryOp op, DType dtype,
                   const char* in, std::ptrdiff_t in_stride, char* out, std::ptrdiff_t out_stride,
                   std::size_t n) {
    if (dtype == DType::f16) {
        const UnaryLoop loop = table[static_cast<int>(DType::f32)][0];
        return parallel::for_ranges_or(
            n, min_elements_per_thread(op), half_block, [&](std::size_t begin, std::size_t end) {
                return apply_half(loop, in, in_stride, out, out_stride, begin, end);
            });
    }
    const std::size_t size = element_size(dtype);
    const bool streaming =
        out_stride == static_cast<std::ptrdiff_t>(size) && n * size >= streaming_min_bytes;
    const UnaryLoop loop = table[static_cast<int>(dtype)][streaming ? 1 : 0];
    return parallel::for_ranges_or(
        n, min_elements_per_thread(op), 64 / size, [&](std::size_t begin, std::size_t end) {
            const auto offset = static_cast<std::ptrdiff_t>(begin);
            return loop(in + offset * in_stride, in_stride, out + offset * out_stride, out_stride,
                        end - begin);
        });
}

unsigned run_binary(BinaryLoop loop, BinaryOp op, DType dtype, const char* a,
                    std::ptrdiff_t a_stride, const char* b, std::ptrdiff_t b_stride, char* out,
                    std::ptrdiff_t out_stride, std::size_t n) {
    if (dtype == DType::f16) {
        return parallel::for_ranges_or(n, min_elements_per_thread(op), half_block,
                                       [&](std::size_t begin, std::size_t end) {
                                           return apply_half_binary(loop, a, a_stride, b, b_stride,
                                                                    out, out_stride, begin, end);
                                       });
    }
    return parallel::for_ranges_or(n, min_elements_per_thread(op), 64 / element_size(dtype),
                                   [&](std::size_t begin, std::size_t end) {
                                       const auto k = static_cast<std::ptrdiff_t>(begin);
                                       return loop(a + k * a_stride, a_stride, b + k * b_stride,
                                                   b_stride, out + k * out_stride, out_stride,
                                                   end - begin);
                                   });
}

}  // namespace

unsigned apply_binary(BinaryOp op, DType dtype, const char* a, std::ptrdiff_t a_stride,
                      const char* b, std::ptrdiff_t b_stride, char* out, std::ptrdiff_t out_stride,
                      std::size_t n) {
    if (n == 0) return fp_none;
    if (dtype == DType::longdouble) {
        // The C++ library, element by element in order: right for any overlap.
        apply_binary_longdouble(op, a, a_stride, b, b_stride, out, out_stride, n);
        return fp_none;
    }
    if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::f16) return fp_none;
    const auto& row =
        binary_tables()[active_level()][static_cast<int>(op)][dtype == DType::f64 ? 1 : 0];
    const BinaryLoop loop = row[0];
    const std::size_t size = element_size(dtype);
    const Sharing a_sharing = sharing_of(a, a_stride, out, out_stride, n, size);
    const Sharing b_sharing = sharing_of(b, b_stride, out, out_stride, n, size);
    const Sharing sharing = worst(a_sharing, b_sharing);
    FpStatusGuard guard;
    if (sharing == Sharing::none) {
        return run_binary(loop, op, dtype, a, a_stride, b, b_stride, out, out_stride, n);
    }
    if (sharing == Sharing::trailing) {
        const bool copy_a = a_sharing == Sharing::trailing, copy_b = b_sharing == Sharing::trailing;
        CopiedInput ca(a, a_stride, size, copy_a), cb(b, b_stride, size, copy_b);
        if (!ca.failed(copy_a) && !cb.failed(copy_b)) {
            unsigned flags = fp_none;
            for (std::size_t begin = 0; begin < n; begin += trailing_block) {
                const std::size_t count = std::min(trailing_block, n - begin);
                const auto [pa, sa] = ca.block(begin, count);
                const auto [pb, sb] = cb.block(begin, count);
                flags |= run_binary(loop, op, dtype, pa, sa, pb, sb,
                                    out + static_cast<std::ptrdiff_t>(begin) * out_stride,
                                    out_stride, count);
            }
            return flags;
        }
        // No memory for the copies: element by element is right too.
    }
    // Reduce (a is the output, both at stride 0) and accumulate (a is the output one
    // element back), with b read no later than its element's turn: the fold.
    const bool folds_into_out = (a == out && a_stride == 0 && out_stride == 0) ||
                                (a_stride == out_stride && a + out_stride == out);
    if (folds_into_out && b_sharing != Sharing::in_order && dtype != DType::f16) {
        return row[1](a, a_stride, b, b_stride, out, out_stride, n);
    }
    // Any other overlap: element by element, in order.
    unsigned flags = fp_none;
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        if (dtype == DType::f16) {
            flags |= apply_half_binary(loop, a, a_stride, b, b_stride, out, out_stride, i, i + 1);
        } else {
            flags |= loop(a + k * a_stride, a_stride, b + k * b_stride, b_stride,
                          out + k * out_stride, out_stride, 1);
        }
    }
    return flags;
}

bool unary_supported(UnaryOp op, DType dtype) noexcept {
    const int k = static_cast<int>(op);
    if (k < 0 || k >= unary_op_count) return false;
    const bool complex = dtype == DType::c64 || dtype == DType::c128 || dtype == DType::clongdouble;
    return !complex || complex_rows.unary[k];
}

unsigned apply_unary(UnaryOp op, DType dtype, const char* in, std::ptrdiff_t in_stride, char* out,
                     std::ptrdiff_t out_stride, std::size_t n) {
    if (n == 0 || !unary_supported(op, dtype)) return fp_none;
    // The C++ library's loops run element by element in order: right for any overlap.
    if (dtype != DType::f32 && dtype != DType::f64 && dtype != DType::f16) {
        apply_unary_scalar(op, dtype, in, in_stride, out, out_stride, n);
        return fp_none;
    }
    const auto& table = unary_tables()[active_level()][static_cast<int>(op)];
    const std::size_t size = element_size(dtype);
    const Sharing sharing = sharing_of(in, in_stride, out, out_stride, n, size);
    FpStatusGuard guard;
    if (sharing == Sharing::none) {
        return run_unary(table, op, dtype, in, in_stride, out, out_stride, n);
    }
    if (sharing == Sharing::trailing) {
        CopiedInput copied(in, in_stride, size, true);
        if (!copied.failed(true)) {
            unsigned flags = fp_none;
            for (std::size_t begin = 0; begin < n; begin += trailing_block) {
                const std::size_t count = std::min(trailing_block, n - begin);
                const auto [p, s] = copied.block(begin, count);
                flags |= run_unary(table, op, dtype, p, s,
                                   out + static_cast<std::ptrdiff_t>(begin) * out_stride,
                                   out_stride, count);
            }
            return flags;
        }
    }
    unsigned flags = fp_none;
    for (std::size_t i = 0; i < n; ++i) {
        const auto k = static_cast<std::ptrdiff_t>(i);
        flags |= run_unary(table, op, dtype, in + k * in_stride, in_stride, out + k * out_stride,
                           out_stride, 1);
    }
    return flags;
}

}  // namespace numfuse::core
