#include "support/cache_flush.h"

#include <algorithm>

#include "support/parallel.h"
#include "support/threads.h"

namespace tlm {

namespace {
constexpr int64_t kLine = 64;
}

CacheFlusher::CacheFlusher(int64_t bytes) : scratch_((size_t)std::max<int64_t>(bytes, 0)) {}

void CacheFlusher::flush() {
  const int64_t lines = (int64_t)scratch_.size() / kLine;
  volatile uint8_t* bytes = scratch_.data();
  const uint8_t sweep = ++sweep_;
  parallel_ranges(lines, compute_threads(), [&](int64_t begin, int64_t end) {
    for (int64_t l = begin; l < end; l++) bytes[l * kLine] = (uint8_t)(bytes[l * kLine] + sweep);
  });
}

void touch(const void* p, int64_t bytes) {
  const volatile uint8_t* b = static_cast<const uint8_t*>(p);
  uint8_t sink = 0;
  for (int64_t i = 0; i < bytes; i += kLine) sink = (uint8_t)(sink + b[i]);
  if (bytes > 0) sink = (uint8_t)(sink + b[bytes - 1]);
  (void)sink;
}

}  // namespace tlm
