// logsumexp of values handed over in pieces: the VM's logsumexp stages
// (expr/vm_reduce.cpp), which compute their operand block by block and never
// hold a whole group. The pieces go through the active level's reduction
// kernels (kernel_table.hpp) and are merged in the order they arrive with
// ChunkMerge (fold.hpp), and the total is finished by lse_log_value, so a stage
// has numfuse.logsumexp's accuracy (per-lane TwoSum compensation, errors of the
// merges kept; docs/accuracy.md) and SIMD exp. Deterministic: the result depends
// only on the values and on where the pieces are cut.
//
// Special values as scipy.special.logsumexp without weights: NaN anywhere gives
// NaN, else +inf anywhere gives +inf, else nothing above -inf (or no element)
// gives -inf. A kernel turns both NaN and +inf into a NaN sum; the piece, still
// at hand, is then scanned once to tell which.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>

#include "reduce/fold.hpp"
#include "reduce/plan.hpp"

namespace numfuse::core {

// One group's state: the merged pieces so far. A piece is folded into the run
// kernel's lane state (run_accumulate: double-word exponents, as numfuse.logsumexp
// folds a chunk), which later pieces continue; the lanes become a triple
// (run_finish) when another stream's state is merged in or at the result.
// Copying copies the lane state only while it is in use (the VM resets a short
// row's stream per row by assignment).
template <class T>
class LseStream {
public:
    LseStream() noexcept = default;
    LseStream(const LseStream& other) noexcept { *this = other; }
    LseStream& operator=(const LseStream& other) noexcept {
        if (this == &other) return *this;
        merge_ = other.merge_;
        started_ = other.started_;
        open_ = other.open_;
        nan_ = other.nan_;
        pos_inf_ = other.pos_inf_;
        if (open_) {
            lanes_.lanes = other.lanes_.lanes;
            for (std::size_t k = 0; k < lanes_.lanes; ++k) {
                lanes_.m[k] = other.lanes_.m[k];
                lanes_.s[k] = other.lanes_.s[k];
                lanes_.c[k] = other.lanes_.c[k];
            }
        }
        return *this;
    }

    // Folds v[0, n) (contiguous), the elements that follow everything added so far.
    void add_run(const T* v, std::size_t n) noexcept {
        if (n == 0 || nan_) return;
        if (pos_inf_) {  // decided unless a NaN follows
            note_specials(v, n, 1);
            return;
        }
        const auto& kernels = reduce_detail::active_kernels<T>();
        if (!open_) {
            kernels.run_init(lanes_);
            open_ = true;
        }
        kernels.run_accumulate(reinterpret_cast<const char*>(v), sizeof(T), nullptr, 0, n, lanes_);
        // A NaN or +inf element makes its lane's s NaN (and it stays NaN).
        bool special = false;
        for (std::size_t k = 0; k < lanes_.lanes; ++k) special = special || std::isnan(lanes_.s[k]);
        if (special) {
            note_specials(v, n, 1);
            open_ = false;  // the lanes hold nothing usable any more
        }
    }

    // Folds a piece that a kernel already reduced to a triple (m, s, c) with a
    // number s (not NaN).
    void add_partial(const ReducePartial<T>& q) noexcept {
        if (nan_ || pos_inf_) return;
        close();
        merge_in(q);
    }

    // Folds the state of the elements that follow this one's.
    void add(const LseStream& later) noexcept {
        nan_ = nan_ || later.nan_;
        pos_inf_ = pos_inf_ || later.pos_inf_;
        if (nan_ || pos_inf_) return;
        close();
        if (later.started_) merge_in(later.merge_.total());
        if (later.open_) merge_in(reduce_detail::active_kernels<T>().run_finish(later.lanes_));
    }

    // Records the NaN and +inf among v[0], v[stride], ... (they decide the result).
    void note_specials(const T* v, std::size_t n, std::ptrdiff_t stride) noexcept {
        for (std::size_t k = 0; k < n; ++k) {
            const T x = v[static_cast<std::ptrdiff_t>(k) * stride];
            if (std::isnan(x)) nan_ = true;
            if (x == std::numeric_limits<T>::infinity()) pos_inf_ = true;
        }
    }

    // True when the result of this group of n elements is one whose terms' rounded
    // arguments may reach it (lse::argument_rounding_matters: a maximum near 0 that
    // dominates), with m set to the group's maximum: the caller then sums the elements
    // again with LseExact (x - m as a double word) and takes its result instead.
    bool needs_exact(std::size_t n, T& m) const noexcept {
        if (nan_ || pos_inf_) return false;
        LseStream all = *this;
        all.close();
        if (!all.started_) return false;
        const ReducePartial<T> total = all.merge_.total();
        m = total.m;
        return lse::argument_rounding_matters(static_cast<double>(total.m),
                                              reduce_detail::normalise(total).hi, n);
    }

    T result() const noexcept {
        if (nan_) return std::numeric_limits<T>::quiet_NaN();
        if (pos_inf_) return std::numeric_limits<T>::infinity();
        LseStream all = *this;
        all.close();
        if (!all.started_) return -std::numeric_limits<T>::infinity();
        const ReducePartial<T> total = all.merge_.total();
        const reduce_detail::Normalised sum = reduce_detail::normalise(total);
        if (!(sum.hi > 0.0)) return -std::numeric_limits<T>::infinity();  // all -inf
        return static_cast<T>(reduce_detail::lse_log_value(total.m, sum));
    }

private:
    // The lanes' triple joins the merged pieces.
    void close() noexcept {
        if (!open_) return;
        open_ = false;
        merge_in(reduce_detail::active_kernels<T>().run_finish(lanes_));
    }

    void merge_in(const ReducePartial<T>& q) noexcept {
        if (!started_) {
            merge_ = reduce_detail::ChunkMerge<T>(q);
            started_ = true;
        } else {
            merge_.add(q);
        }
    }

    reduce_detail::ChunkMerge<T> merge_{ReducePartial<T>{T(0), T(0), T(0)}};
    bool started_ = false;
    bool open_ = false;
    bool nan_ = false;
    bool pos_inf_ = false;
    RunLaneState<T> lanes_;
};

// A group summed again in pieces with its maximum m known (LseStream::needs_exact):
// reduce_detail::ExactSum (fold.hpp). The result depends only on the values and on
// where the pieces are cut.
template <class T>
class LseExact {
public:
    explicit LseExact(T m) noexcept : sum_(m) {}

    void add_run(const T* v, std::size_t n) noexcept {
        sum_.add_run(reduce_detail::active_kernels<T>(), reinterpret_cast<const char*>(v),
                     sizeof(T), n);
    }

    T result() const noexcept {
        const ReducePartial<T> total = sum_.total();
        const reduce_detail::Normalised sum = reduce_detail::normalise(total);
        return static_cast<T>(reduce_detail::lse_log_value(total.m, sum));
    }

private:
    reduce_detail::ExactSum<T> sum_;
};

// The groups of a columns layout: group k's elements arrive one per row, as
// entry k of row after row (row[0, count) holds groups [first, first + count)).
// Per-group (m, s, c) in arrays (the strip kernels' layout, padded to whole
// batches) folded with the online max-and-rescale strip kernel
// (strip_accumulate); each group's triple is finished as one LseStream piece.
template <class T>
class LseColumns {
public:
    explicit LseColumns(std::size_t groups)
        : padded_(groups + reduce_detail::active_kernels<T>().batch_lanes),
          m_(new T[padded_]),
          s_(new T[padded_]),
          c_(new T[padded_]) {
        for (std::size_t k = 0; k < padded_; ++k) {
            m_[k] = std::numeric_limits<T>::lowest();
            s_[k] = T(0);
            c_[k] = T(0);
        }
    }

    void add_row(std::size_t first, const T* row, std::size_t count) noexcept {
        reduce_detail::active_kernels<T>().strip_accumulate(
            reinterpret_cast<const char*>(row), sizeof(T), 0, nullptr, 0, 0, count, 1,
            m_.get() + first, s_.get() + first, c_.get() + first);
    }

    // Group k's sum is NaN, from a NaN or a +inf element; NaN never enters m, so a
    // finite m means a NaN. With m = +inf only the elements tell whether a NaN is
    // there too: the caller scans them (LseStream::note_specials).
    bool needs_scan(std::size_t k) const noexcept {
        return std::isnan(s_[k]) && m_[k] == std::numeric_limits<T>::infinity();
    }

    // As LseStream::needs_exact, for group k of n elements.
    bool needs_exact(std::size_t k, std::size_t n, T& m) const noexcept {
        if (std::isnan(s_[k])) return false;
        LseStream<T> one;
        one.add_partial({m_[k], s_[k], c_[k]});
        return one.needs_exact(n, m);
    }

    // Group k's value (for a group that needs_scan: +inf, unless the scan found a NaN).
    T result(std::size_t k) const noexcept {
        LseStream<T> one;
        if (std::isnan(s_[k])) {
            const T x = needs_scan(k) ? m_[k] : s_[k];
            one.note_specials(&x, 1, 1);
        } else {
            one.add_partial({m_[k], s_[k], c_[k]});
        }
        return one.result();
    }

private:
    std::size_t padded_;
    std::unique_ptr<T[]> m_, s_, c_;
};

}  // namespace numfuse::core
