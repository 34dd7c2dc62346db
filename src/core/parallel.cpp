#include "parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
#include <immintrin.h>
#endif

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#endif

namespace numfuse::parallel {
namespace {

// NUMFUSE_NUM_THREADS as an explicit count, else 0 (automatic): a plain
// decimal integer from 1 to max_thread_count(), nothing else.
int parse_thread_setting(const char* text) noexcept {
    if (text == nullptr) return 0;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > max_thread_count()) return 0;
    return static_cast<int>(value);
}

int initial_setting() noexcept { return parse_thread_setting(std::getenv("NUMFUSE_NUM_THREADS")); }

std::atomic<int>& setting() noexcept {
    static std::atomic<int> value{initial_setting()};
    return value;
}

// omp_get_max_threads() as the process started (OMP_NUM_THREADS or the
// processor count): a smaller value in some thread means someone lowered it
// there (threadpoolctl, omp_set_num_threads) and numfuse follows.
int openmp_baseline() noexcept {
#ifdef _OPENMP
    static const int baseline = omp_get_max_threads();
    return baseline;
#else
    return 1;
#endif
}

// Who made the count explicit, and the OpenMP limit in that thread then: a
// limit lowered afterwards (threadpoolctl) caps the count, while one that was
// already in force (torch.set_num_threads on a shared libgomp) does not
// override the user's later, explicit choice. Other threads compare with the
// start-up value.
struct ExplicitOrigin {
    std::atomic<std::thread::id> thread{};
    std::atomic<int> openmp_limit{0};
};

ExplicitOrigin& explicit_origin() noexcept {
    static ExplicitOrigin origin;
    return origin;
}

// Set in a child made by fork(): the OpenMP limit there is 1 (module.cpp's
// atfork handler; libgomp's pool did not survive the fork), and an explicit
// count set before the fork (whatever the limit was then) must not ask for a
// team that would wait forever: in the child the limit always caps it.
std::atomic<bool> forked_child{false};
// Counts fork()s into children: a pool made before the last one has no
// threads here any more.
std::atomic<unsigned> fork_epoch{0};

#if defined(__unix__) || defined(__APPLE__)
extern "C" void numfuse_parallel_note_fork_child() {
    forked_child.store(true);
    fork_epoch.fetch_add(1);
}
#endif

std::atomic<std::thread::id>& recorded_main() noexcept {
    static std::atomic<std::thread::id> id{};
    return id;
}

thread_local int peak_team = 1;
thread_local bool in_job = false;

// ------------------------------------------------------------------ the pool
//
// One pool per calling thread (as OpenMP keeps one team per thread that
// starts one), made on its first parallel call; its workers live as long as
// that thread. A job is published by storing `ticket_`, which holds the job's
// generation, its chunk count and how many chunks have been claimed from
// each end (the Ticket layout below). The caller claims chunks from the
// front, the workers from the back: a worker that joins late takes the end
// of the range, and in repeated calls each thread tends to get the part it
// had the last time (still in its core's cache) instead of every other chunk.
// Claiming a chunk is one compare-and-swap of the whole ticket, so a claim
// that succeeds was made against the current job's ticket: a worker that
// wakes late (or is preempted between reading the ticket and claiming) can
// neither run a chunk of a finished job nor claim one of the next job with
// the last one's counts, and it never delays the caller, who waits only for
// chunks that some thread has claimed. The other job parameters are atomics
// written before the ticket is stored and read after a successful claim; the
// job they belong to cannot end, nor the next be published, before the claim
// is run and counted done.
struct Ticket {
    static constexpr std::uint64_t field = 0xffff;
    static constexpr std::uint64_t back_one = std::uint64_t{1} << 16;
    static std::uint64_t make(std::uint64_t generation, std::size_t chunks) noexcept {
        return (generation & field) << 48 | (static_cast<std::uint64_t>(chunks) & field) << 32;
    }
    static std::uint64_t generation(std::uint64_t t) noexcept { return t >> 48; }
    static std::size_t chunks(std::uint64_t t) noexcept { return (t >> 32) & field; }
    static std::size_t back(std::uint64_t t) noexcept { return (t >> 16) & field; }
    static std::size_t front(std::uint64_t t) noexcept { return t & field; }
};
// The most chunks a job may have (a count in a ticket field).
constexpr std::size_t max_chunks = Ticket::field;

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(_M_X64) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

// Polls ready() until it holds or `patience` has passed; returns whether it
// holds. Every 64 polls the spinning thread also yields its core: where the OS
// has put the thread it waits for on the same core (a busy machine: a woken
// worker placed on its caller's core, or the caller on a worker's), that
// thread runs at once instead of after the spin; on a core of its own the
// yield returns at once.
template <class Ready>
bool spin_until(Ready ready, std::chrono::steady_clock::duration patience) {
    const auto start = std::chrono::steady_clock::now();
    for (unsigned polls = 1;; ++polls) {
        if (ready()) return true;
        if (polls % 64 == 0) {
            if (std::chrono::steady_clock::now() - start > patience) return ready();
            std::this_thread::yield();
        } else {
            cpu_relax();
        }
    }
}

// How long an idle worker watches for the next job before it sleeps: long
// enough that back-to-back calls find it awake, short enough that on a busy
// machine it gives its core back almost at once.
constexpr auto worker_spin = std::chrono::microseconds(50);
// How long the caller spins for chunks that workers still hold: three of its
// own chunks' durations (a running worker finishes a chunk in about one),
// within [caller_spin_min, caller_spin_max]. Longer, and the holder is likely
// not running (the OS put it aside for another process); the caller then
// sleeps: its core goes idle, and the scheduler moves a preempted worker
// there rather than leaving it queued behind the other core's process (a
// yield moves nothing). Waking the caller costs some tens of microseconds,
// small beside a spin of caller_spin_max.
constexpr auto caller_spin_min = std::chrono::microseconds(20);
constexpr auto caller_spin_max = std::chrono::microseconds(200);
constexpr int caller_spin_chunks = 3;

// A job that starts less than this after the pool's previous one ended is
// one of a run of calls (a loop over numfuse calls and little else): it
// wakes sleeping workers at once, and once awake they spin between the calls
// and catch the rest of the run. Longer, and the caller did other work in
// between (another library's call, or numfuse's on one thread), which
// leaves the data in the caller's cache: a short job is then faster alone.
constexpr auto back_to_back = std::chrono::microseconds(10);

// The fewest chunks per thread for which the caller runs one before it
// decides whether to wake sleeping workers (wake_worth): at most a third of a
// thread's share is then run before the decision. Every job that an
// elementwise loop splits at its threading threshold has at least three
// (chunk_size: four, fewer only by the rounding up to the alignment).
constexpr std::size_t probe_chunks = 3;

class Pool {
public:
    Pool() : asleep_(new std::atomic<bool>[static_cast<std::size_t>(max_thread_count())]) {
        for (int i = 0; i < max_thread_count(); ++i) asleep_[i].store(false);
    }
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;
    ~Pool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& worker : workers_) worker->join();
    }

    unsigned run(std::size_t n, std::size_t chunk, int threads, ChunkFunction fn, void* body) {
        grow(threads - 1);
        // More chunks than a ticket counts (only with thousands of threads):
        // whole multiples of the chunk, which keep its alignment.
        if (const std::size_t count = (n + chunk - 1) / chunk; count > max_chunks) {
            chunk *= (count + max_chunks - 1) / max_chunks;
        }
        const std::size_t chunks = (n + chunk - 1) / chunk;
        fn_.store(fn, std::memory_order_relaxed);
        body_.store(body, std::memory_order_relaxed);
        n_.store(n, std::memory_order_relaxed);
        chunk_.store(chunk, std::memory_order_relaxed);
        helpers_.store(threads - 1, std::memory_order_relaxed);
        done_.store(0, std::memory_order_relaxed);
        flags_.store(0, std::memory_order_relaxed);
        const std::uint64_t generation = ++generation_ & Ticket::field;
        // seq_cst, with the asleep_ loads after it: a worker going to sleep
        // either sees this ticket or is seen in asleep_ (and may be woken).
        ticket_.store(Ticket::make(generation, chunks), std::memory_order_seq_cst);
        const auto start = std::chrono::steady_clock::now();
        std::size_t own = 0;
        unsigned flags = 0;
        const int helpers = std::min(threads - 1, static_cast<int>(workers_.size()));
        if (sleeping_helpers(helpers) > 0) {
            // Workers still spinning have the job already. The sleepers are
            // worth a wake only for a job that its first chunk shows to be
            // long (wake_worth); a sleeper left asleep sees a later job's
            // ticket. They are woken at once when the previous job ended
            // less than back_to_back ago (a run of calls: once awake they
            // spin, and the next calls find them so, at no wake), and for a
            // job of fewer than probe_chunks chunks per thread (coarse items:
            // reductions over rows or blocks), whose first chunk would hold
            // back too much of the job.
            bool wake = true;
            if (start - last_end_ >= back_to_back &&
                chunks >= probe_chunks * static_cast<std::size_t>(threads)) {
                flags = claim_and_run(generation, &own, 1);
                const auto rest = (std::chrono::steady_clock::now() - start) *
                                  static_cast<std::chrono::steady_clock::rep>(chunks - claimed());
                wake = rest >= wake_threshold();
            }
            if (wake) {
                // The lock orders this against a sleeper's check of the
                // ticket; notifying after it is released spares the woken
                // worker a second sleep on the mutex the caller still holds.
                {
                    std::lock_guard<std::mutex> lock(mutex_);
                }
                wake_.notify_all();
                ++wakes_;
            } else if (sleeping_helpers(helpers) == helpers) {
                // No worker is awake to join: the rest in one claim and one
                // call of the body, as on one thread.
                flags |= claim_rest_and_run(generation, &own);
            }
        }
        flags |= claim_and_run(generation, &own, max_chunks);
        // Only chunks that another thread claimed are still running.
        if (done_.load(std::memory_order_acquire) < chunks) wait_for_holders(chunks, start, own);
        last_end_ = std::chrono::steady_clock::now();
        return flags | flags_.load(std::memory_order_relaxed);
    }

    unsigned epoch() const noexcept { return epoch_; }
    // On the owner's thread only (workers_ and wakes_ are the owner's).
    PoolCounts counts() const noexcept {
        return {static_cast<int>(workers_.size()), sleepers_.load(std::memory_order_seq_cst),
                wakes_};
    }

private:
    // Waits until every chunk of the job is done (the caller ran `own` of
    // them since `start`; workers hold the others): spinning while a running
    // holder would finish, then asleep until the worker that completes the
    // last chunk wakes it (see caller_spin_min).
    void wait_for_holders(std::size_t chunks, std::chrono::steady_clock::time_point start,
                          std::size_t own) {
        const auto now = std::chrono::steady_clock::now();
        const auto per_chunk = (now - start) / static_cast<std::chrono::steady_clock::rep>(
                                                   std::max<std::size_t>(own, 1));
        const auto all_done = [&] { return done_.load(std::memory_order_acquire) >= chunks; };
        const std::chrono::steady_clock::duration patience =
            std::clamp<std::chrono::steady_clock::duration>(caller_spin_chunks * per_chunk,
                                                            caller_spin_min, caller_spin_max);
        if (spin_until(all_done, patience)) {
            return;
        }
        std::unique_lock<std::mutex> lock(mutex_);
        // seq_cst, with the load of done_ after it: the worker that completes
        // the last chunk either is seen in done_ or sees caller_asleep_.
        caller_asleep_.store(true, std::memory_order_seq_cst);
        finished_.wait(lock, [&] { return done_.load(std::memory_order_seq_cst) >= chunks; });
        caller_asleep_.store(false, std::memory_order_relaxed);
    }

    // How many of the workers that the current job may use (the first
    // `helpers`) sleep now. Workers past them (a pool grown by a larger team
    // earlier) take no part in the job and do not count.
    int sleeping_helpers(int helpers) const noexcept {
        int asleep = 0;
        for (int i = 0; i < helpers; ++i) asleep += asleep_[i].load(std::memory_order_seq_cst);
        return asleep;
    }

    // Chunks of the current job claimed so far (on the owner's thread).
    std::size_t claimed() const noexcept {
        const std::uint64_t ticket = ticket_.load(std::memory_order_acquire);
        return Ticket::front(ticket) + Ticket::back(ticket);
    }

    // The caller's claim of every chunk of job `generation` still unclaimed,
    // run as one range: fewer claims and calls of the body where no worker
    // will join (a worker woken by chance finds the job claimed).
    unsigned claim_rest_and_run(std::uint64_t generation, std::size_t* own) noexcept {
        std::uint64_t ticket = ticket_.load(std::memory_order_acquire);
        std::size_t first = 0, last = 0;
        for (;;) {
            if (Ticket::generation(ticket) != generation) return 0;
            const std::size_t chunks = Ticket::chunks(ticket);
            first = Ticket::front(ticket);
            last = chunks - Ticket::back(ticket);
            if (first >= last) return 0;
            if (ticket_.compare_exchange_weak(ticket, ticket + (last - first),
                                              std::memory_order_acq_rel,
                                              std::memory_order_acquire)) {
                break;
            }
        }
        const std::size_t n = n_.load(std::memory_order_relaxed);
        const std::size_t chunk = chunk_.load(std::memory_order_relaxed);
        const bool was_in_job = in_job;
        in_job = true;
        const unsigned flags = fn_.load(std::memory_order_relaxed)(
            body_.load(std::memory_order_relaxed), first * chunk, std::min(n, last * chunk));
        in_job = was_in_job;
        *own += last - first;
        done_.fetch_add(last - first, std::memory_order_release);
        return flags;
    }

    // Claims chunks of job `generation` until none is left (the caller: at
    // most `limit`). The caller (own != nullptr: the count of chunks it ran)
    // claims from the front and gets the OR of its chunks' results back; a
    // worker claims from the back, adds each chunk's result to flags_ before
    // counting the chunk done (after that the job may be over), and wakes the
    // caller when it completes the last chunk while the caller sleeps.
    unsigned claim_and_run(std::uint64_t generation, std::size_t* own,
                           std::size_t limit = max_chunks) noexcept {
        unsigned flags = 0;
        const bool from_back = own == nullptr;
        std::uint64_t ticket = ticket_.load(std::memory_order_acquire);
        for (std::size_t ran = 0; ran < limit;) {
            if (Ticket::generation(ticket) != generation) return flags;
            const std::size_t chunks = Ticket::chunks(ticket);
            const std::size_t front = Ticket::front(ticket), back = Ticket::back(ticket);
            if (front + back >= chunks) return flags;
            if (!ticket_.compare_exchange_weak(ticket, ticket + (from_back ? Ticket::back_one : 1),
                                               std::memory_order_acq_rel,
                                               std::memory_order_acquire)) {
                continue;
            }
            const std::size_t index = from_back ? chunks - 1 - back : front;
            const std::size_t n = n_.load(std::memory_order_relaxed);
            const std::size_t chunk = chunk_.load(std::memory_order_relaxed);
            const std::size_t begin = index * chunk;
            const std::size_t end = std::min(n, begin + chunk);
            const bool was_in_job = in_job;
            in_job = true;
            const unsigned result = fn_.load(std::memory_order_relaxed)(
                body_.load(std::memory_order_relaxed), begin, end);
            in_job = was_in_job;
            ++ran;
            if (own != nullptr) {
                flags |= result;
                ++*own;
                done_.fetch_add(1, std::memory_order_release);
            } else {
                if (result != 0) flags_.fetch_or(result, std::memory_order_relaxed);
                // The pool outlives the job, so its members may be touched
                // after the count below ends the job; `chunks` is this job's.
                if (done_.fetch_add(1, std::memory_order_seq_cst) + 1 == chunks &&
                    caller_asleep_.load(std::memory_order_seq_cst)) {
                    {
                        std::lock_guard<std::mutex> lock(mutex_);
                    }
                    finished_.notify_one();
                }
            }
            ticket = ticket_.load(std::memory_order_acquire);
        }
        return flags;
    }

    void grow(int wanted) {
        while (static_cast<int>(workers_.size()) < wanted) {
            const int index = static_cast<int>(workers_.size());
            try {
                workers_.push_back(std::make_unique<std::thread>([this, index] { work(index); }));
            } catch (...) {
                // No more threads to be had (a process limit): the caller and
                // the workers that exist share the chunks.
                return;
            }
        }
    }

    void work(int index) {
        in_job = true;  // a loop inside a chunk runs serially
        std::uint64_t seen = 0;
        bool helped = true;
        for (;;) {
            // A worker that the last job did not use (a smaller team than the
            // pool) sleeps at once instead of spinning for the next job.
            std::uint64_t generation = wait_for_job(index, seen, helped);
            if (generation == stop_generation) return;
            seen = generation;
            helped = index < helpers_.load(std::memory_order_relaxed);
            if (helped) claim_and_run(generation, nullptr);
        }
    }

    static constexpr std::uint64_t stop_generation = ~std::uint64_t{0};

    // The generation of the next job after `seen` (spinning first when
    // `spin`, then asleep), or stop_generation.
    std::uint64_t wait_for_job(int index, std::uint64_t seen, bool spin) {
        const auto published = [&] {
            return Ticket::generation(ticket_.load(std::memory_order_seq_cst));
        };
        if (spin && spin_until([&] { return published() != seen; }, worker_spin)) {
            return published();
        }
        std::unique_lock<std::mutex> lock(mutex_);
        // seq_cst, with the ticket loads of the wait after it (see run()).
        asleep_[index].store(true, std::memory_order_seq_cst);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        std::uint64_t generation = seen;
        wake_.wait(lock, [&] {
            generation = published();
            return stop_ || generation != seen;
        });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        asleep_[index].store(false, std::memory_order_relaxed);
        return stop_ ? stop_generation : generation;
    }

    // The claim counter and the completion counter on lines of their own: every claim and
    // every completion moves its line between cores, and nothing else should move with it.
    alignas(64) std::atomic<std::uint64_t> ticket_{0};
    std::chrono::steady_clock::time_point last_end_{};  // the owner's: its last job's end
    unsigned long wakes_ = 0;                           // the owner's: calls that woke sleepers
    std::uint64_t generation_ = 0;  // the owner's count of jobs (its low 16 bits in tickets)
    std::atomic<ChunkFunction> fn_{nullptr};
    std::atomic<void*> body_{nullptr};
    std::atomic<std::size_t> n_{0}, chunk_{1};
    std::atomic<int> helpers_{0};
    alignas(64) std::atomic<std::size_t> done_{0};
    alignas(64) std::atomic<unsigned> flags_{0};
    std::atomic<int> sleepers_{0};
    // asleep_[i]: worker i sleeps (max_thread_count() entries, so that the
    // workers never see the array move).
    std::unique_ptr<std::atomic<bool>[]> asleep_;
    std::atomic<bool> caller_asleep_{false};
    std::mutex mutex_;
    std::condition_variable wake_;      // workers wait here for a job
    std::condition_variable finished_;  // the caller waits here for held chunks
    bool stop_ = false;  // under mutex_
    const unsigned epoch_ = fork_epoch.load();
    std::vector<std::unique_ptr<std::thread>> workers_;
};

// The calling thread's pool. A thread's pool is stopped and joined when the
// thread ends; the main thread's is left to the end of the process (its
// workers sleep; joining them from exit handlers buys nothing), and so is one
// made before a fork (its threads do not exist in the child).
struct PoolHolder {
    Pool* pool = nullptr;
    ~PoolHolder() {
        if (pool != nullptr && !on_main_thread() && pool->epoch() == fork_epoch.load()) {
            delete pool;
        }
    }
};
thread_local PoolHolder pool_holder;

Pool& calling_threads_pool() {
    Pool*& pool = pool_holder.pool;
    if (pool != nullptr && pool->epoch() != fork_epoch.load()) pool = nullptr;  // left behind
    if (pool == nullptr) pool = new Pool();
    return *pool;
}

}  // namespace

unsigned run_chunks(std::size_t n, std::size_t chunk, int threads, ChunkFunction fn,
                    void* body) noexcept {
    if (n == 0) return 0u;
    if (threads <= 1 || chunk >= n) {
        const bool was_in_job = in_job;
        in_job = true;
        const unsigned flags = fn(body, 0, n);
        in_job = was_in_job;
        return flags;
    }
    Pool* pool = nullptr;
    try {
        pool = &calling_threads_pool();
    } catch (...) {
        pool = nullptr;
    }
    if (pool == nullptr) return fn(body, 0, n);
    return pool->run(n, chunk, threads, fn, body);
}

bool inside_job() noexcept { return in_job; }

namespace {
std::atomic<std::int64_t> wake_threshold_ns{
    std::chrono::duration_cast<std::chrono::nanoseconds>(wake_worth).count()};
}  // namespace

std::chrono::nanoseconds wake_threshold() noexcept {
    return std::chrono::nanoseconds(wake_threshold_ns.load(std::memory_order_relaxed));
}

void set_wake_threshold(std::chrono::nanoseconds threshold) noexcept {
    wake_threshold_ns.store(threshold.count(), std::memory_order_relaxed);
}

PoolCounts pool_counts() noexcept {
    const Pool* pool = pool_holder.pool;
    if (pool == nullptr || pool->epoch() != fork_epoch.load()) return {};
    return pool->counts();
}

void mark_main_thread() noexcept {
    recorded_main().store(std::this_thread::get_id(), std::memory_order_relaxed);
    (void)openmp_baseline();
#if defined(__unix__) || defined(__APPLE__)
    static const bool registered =
        pthread_atfork(nullptr, nullptr, &numfuse_parallel_note_fork_child) == 0;
    (void)registered;
#endif
}

bool on_main_thread() noexcept {
#if defined(__linux__)
    // One syscall per thread, then cached.
    thread_local const bool is_main = syscall(SYS_gettid) == getpid();
    return is_main;
#else
    return std::this_thread::get_id() == recorded_main().load(std::memory_order_relaxed);
#endif
}

int thread_count() noexcept {
    int n = setting().load(std::memory_order_relaxed);
    if (in_job) return 1;
#ifdef _OPENMP
    if (omp_in_parallel()) return 1;
    const int openmp_now = omp_get_max_threads();
    if (n == 0) {
        n = on_main_thread() ? openmp_now : 1;
    } else {
        const auto& origin = explicit_origin();
        const bool set_here =
            origin.thread.load(std::memory_order_relaxed) == std::this_thread::get_id();
        const int reference =
            set_here ? origin.openmp_limit.load(std::memory_order_relaxed) : openmp_baseline();
        if (openmp_now < reference || forked_child.load(std::memory_order_relaxed)) {
            n = std::min(n, openmp_now);
        }
    }
#else
    // Built without OpenMP: every call runs on the calling thread, whatever the
    // setting (set_num_threads still validates and records it).
    n = 1;
#endif
    return std::clamp(n, 1, max_thread_count());
}

int set_thread_count(int n) noexcept {
    const int previous = thread_count();
    auto& origin = explicit_origin();
    origin.thread.store(std::this_thread::get_id(), std::memory_order_relaxed);
#ifdef _OPENMP
    origin.openmp_limit.store(omp_get_max_threads(), std::memory_order_relaxed);
#endif
    setting().store(std::clamp(n, 1, max_thread_count()), std::memory_order_relaxed);
    return previous;
}

// Read once: omp_get_num_procs() asks the OS for the affinity mask on every call, and
// thread_count() runs on every ufunc call.
int max_thread_count() noexcept {
    static const int limit = std::max(64, processor_count());
    return limit;
}

const char* thread_count_environment(bool* accepted) noexcept {
    const char* text = std::getenv("NUMFUSE_NUM_THREADS");
    if (accepted != nullptr) *accepted = text != nullptr && parse_thread_setting(text) > 0;
    return text;
}

int use_automatic_thread_count() noexcept {
    const int previous = thread_count();
    setting().store(0, std::memory_order_relaxed);
    return previous;
}

int start_thread_count() noexcept {
    const int environment = initial_setting();
    if (environment > 0) return environment;
    return std::clamp(openmp_baseline(), 1, max_thread_count());
}

int explicit_thread_count() noexcept { return setting().load(std::memory_order_relaxed); }

int take_peak_team_size() noexcept {
    const int peak = peak_team;
    peak_team = 1;
    return peak;
}

void note_team_size(int team) noexcept {
    if (team > peak_team) peak_team = team;
}

int processor_count() noexcept {
#ifdef _OPENMP
    return omp_get_num_procs();
#else
    return 1;
#endif
}

bool has_openmp() noexcept {
#ifdef _OPENMP
    return true;
#else
    return false;
#endif
}

}  // namespace numfuse::parallel
