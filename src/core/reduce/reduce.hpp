// logsumexp, softmax and log_softmax over any strided array (pure C++).
//
// The caller describes the problem as "outer" (kept) and "inner" (reduced)
// dimensions with byte strides per operand, as NumPy does after choosing
// the axes; broadcast operands simply have zero strides. Semantics follow
// scipy.special (see python/numfuse/_reduce.py for the argument handling).
//
// Guarantees
//   * One pass over the input for logsumexp. softmax finds each group's (or
//     chunk's) maximum, then sums exp(x - max) while storing it into out,
//     then scales out by 1/sum: one exp per element, each group of up to
//     kReduceChunk elements handled by one thread while it is in cache.
//     log_softmax folds like logsumexp (or, for one-chunk runs, maximum
//     first) and writes x - max - log(sum) once. No temporaries proportional
//     to the input.
//   * Bit-identical results for any thread count: the inner range of every
//     output is cut into fixed chunks (kReduceChunk elements, independent of
//     the thread count), each chunk is folded by one thread in a fixed lane
//     order, and the chunks are merged in index order. Results may differ
//     between instruction-set levels (different lane counts).
//   * Accuracy: per-lane TwoSum compensation and double-word exponents keep
//     logsumexp and log_softmax within a few eps of the exact result (tests:
//     <= 4 eps against mpmath) for inputs spanning the whole exp range.
#pragma once

#include <cstddef>
#include <vector>

#include "numfuse_core.hpp"
#include "reduce/kernel_table.hpp"

namespace numfuse::core {

// Fixed chunk of the reduced range folded by one thread (elements).
inline constexpr std::size_t kReduceChunk = std::size_t{1} << 16;

struct ReduceShape {
    std::vector<std::size_t> outer;  // kept dimensions
    std::vector<std::size_t> inner;  // reduced dimensions (empty: one element)
};

// One operand: a base pointer and byte strides (any sign, 0 to broadcast)
// for each outer and inner dimension.
struct ReduceOperand {
    const char* data = nullptr;
    std::vector<std::ptrdiff_t> outer;
    std::vector<std::ptrdiff_t> inner;
};

// A written operand: outer strides (and inner strides for softmax outputs).
struct ReduceOutput {
    char* data = nullptr;
    std::vector<std::ptrdiff_t> outer;
    std::vector<std::ptrdiff_t> inner;
};

// For each outer index: log(sum(b * exp(a))) over the inner dimensions,
// scipy.special.logsumexp's value (b.data == nullptr: no weights). With
// sign.data != nullptr the log of |sum| goes to result and sign(sum) (+1, 0,
// -1, NaN) to sign; without it a negative sum gives NaN. Where the
// accurate value is not finite, the plain formula decides (inf, -inf or NaN)
// exactly as SciPy. An empty inner range gives -inf (sign -1, as SciPy).
// dtype: f32 or f64; throws std::invalid_argument on inconsistent input.
void logsumexp(DType dtype, const ReduceShape& shape, const ReduceOperand& a,
               const ReduceOperand& b, const ReduceOutput& result, const ReduceOutput& sign);

// softmax: exp(x - max) / sum(exp(x - max)); log_softmax: x - max -
// log(sum(exp(x - max))), over the inner dimensions, with SciPy's special
// values (+inf, all -inf or NaN in a group: NaN, except log_softmax with
// +inf: NaN at the +inf entries, -inf elsewhere). out may be x itself
// (identical strides), but must not overlap it otherwise.
void softmax(SoftmaxKind kind, DType dtype, const ReduceShape& shape, const ReduceOperand& x,
             const ReduceOutput& out);

}  // namespace numfuse::core
