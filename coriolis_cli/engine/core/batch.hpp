// Many states at once: K states split into contiguous parts, one thread and one workspace each.
// No Python in this file; the binding releases the GIL around run_batch.
#pragma once

#include <algorithm>
#include <chrono>
#include <exception>
#include <memory>
#include <system_error>
#include <thread>
#include <vector>

#include "data.hpp"

namespace coriolis {

// A part of a batch shorter than this runs on the calling thread: starting a thread takes tens of
// microseconds (85 µs on a shared 2-core machine), more than a short part would save.
constexpr double MIN_PART_SECONDS = 100e-6;

struct BatchThreads {
    int wanted;   // the threads the batch's work called for, at most the ones asked for
    int started;  // those the system started (this one included)
};

// kernel(data, s) for s in [0, K), on up to `threads` threads (1: this thread alone). The first
// state runs here and is timed; the others are split into contiguous parts of at least
// MIN_PART_SECONDS each, one thread and one workspace each, so a small batch of cheap states
// starts no thread. Each state's result is the same whatever the split. A thread the system will
// not start (a process or address-space limit) is not an error: its part runs on this thread,
// after its own. What a part throws (a workspace that cannot be allocated) is thrown here once
// every thread has joined, never from a thread, where it would end the process.
template <typename Kernel>
BatchThreads run_batch(const Model& model, int64_t K, int threads, Kernel kernel) {
    if (K <= 0) return {1, 1};
    Data first_data(model);
    const auto started_at = std::chrono::steady_clock::now();
    kernel(first_data, 0);
    const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_at).count();
    const int64_t rest = K - 1;
    const int64_t worth = int64_t(double(rest) * first / MIN_PART_SECONDS);
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>({int64_t(threads), rest, worth}));
    std::vector<std::exception_ptr> failures(parts);
    auto part = [&](int64_t t, Data* given) noexcept {
        try {
            std::unique_ptr<Data> own;
            Data& data = given ? *given : *(own = std::make_unique<Data>(model));
            for (int64_t s = 1 + t * rest / parts; s < 1 + (t + 1) * rest / parts; ++s) kernel(data, s);
        } catch (...) {
            failures[t] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    int64_t started = 1;  // this thread's part, 0
    try {
        pool.reserve(parts - 1);
        for (; started < parts; ++started) pool.emplace_back(part, started, nullptr);
    } catch (const std::exception&) {  // std::system_error (no thread), std::bad_alloc: fewer threads
    }
    part(0, &first_data);
    for (int64_t t = started; t < parts; ++t) part(t, &first_data);
    for (auto& th : pool) th.join();
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
    return {int(parts), int(started)};
}

}  // namespace coriolis
