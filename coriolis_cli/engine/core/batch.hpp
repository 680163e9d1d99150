// Many states at once: K states split into contiguous parts, one thread and one workspace each.
// No Python in this file; the binding releases the GIL around run_batch.
#pragma once

#include <algorithm>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "data.hpp"

namespace coriolis {

// kernel(data, s) for s in [0, K), on up to `threads` threads (1: this thread alone); returns the
// threads it ran on. A thread the system will not start (a process or address-space limit) is
// not an error: its part runs on this thread, after its own. What a part throws (a workspace
// that cannot be allocated) is thrown here once every thread has joined, never from a thread,
// where it would end the process.
template <typename Kernel>
int run_batch(const Model& model, int64_t K, int threads, Kernel kernel) {
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, K));
    std::vector<std::exception_ptr> failures(parts);
    auto part = [&](int64_t t) noexcept {
        try {
            Data data(model);
            for (int64_t s = t * K / parts; s < (t + 1) * K / parts; ++s) kernel(data, s);
        } catch (...) {
            failures[t] = std::current_exception();
        }
    };
    std::vector<std::thread> pool;
    int64_t started = 1;  // this thread's part, 0
    try {
        pool.reserve(parts - 1);
        for (; started < parts; ++started) pool.emplace_back(part, started);
    } catch (const std::exception&) {  // std::system_error (no thread), std::bad_alloc: fewer threads
    }
    part(0);
    for (int64_t t = started; t < parts; ++t) part(t);
    for (auto& th : pool) th.join();
    for (const auto& failure : failures)
        if (failure) std::rethrow_exception(failure);
    return int(started);
}

}  // namespace coriolis
