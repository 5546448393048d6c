// Plain thread-parallel loops for host-side work (sampling, the reference interpreter). Threads
// are started per call and joined before returning; the first exception any iteration throws is
// rethrown in the caller after all threads stopped.
//
//   parallel_for(n, threads, fn)     fn(i) for i in [0, n), indices handed out one at a time
//                                    (uneven work per index: sampling tasks, spaces)
//   parallel_ranges(n, threads, fn)  fn(begin, end) on `threads` contiguous ranges of [0, n)
//                                    (even work: rows of a tensor)
// How many threads to use is the caller's choice, normally compute_threads() (support/threads.h).
#pragma once

#include <cstdint>
#include <functional>

namespace tlm {

void parallel_for(int64_t n, int threads, const std::function<void(int64_t)>& fn);
void parallel_ranges(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tlm
