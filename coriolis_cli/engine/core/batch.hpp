// Many states at once: K states split into contiguous parts, one thread and one workspace each.
// No Python in this file; the binding releases the GIL around run_batch.
#pragma once

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

#include "data.hpp"

namespace coriolis {

// kernel(data, s) for s in [0, K), on `threads` threads (1: this thread alone)
template <typename Kernel>
void run_batch(const Model& model, int64_t K, int threads, Kernel kernel) {
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads, K));
    auto part = [&](int64_t t) {
        Data data(model);
        for (int64_t s = t * K / parts; s < (t + 1) * K / parts; ++s) kernel(data, s);
    };
    if (parts == 1) {
        part(0);
        return;
    }
    std::vector<std::thread> pool;
    pool.reserve(parts - 1);
    for (int64_t t = 1; t < parts; ++t) pool.emplace_back(part, t);
    part(0);
    for (auto& th : pool) th.join();
}

}  // namespace coriolis
