// Putting the caches in a known state before a timed run, for measurements that should see
// memory the way a compiled model does rather than the way a tight timing loop does.
//
//   CacheFlusher(bytes)   scratch memory of `bytes`; flush() makes every compute thread read and
//                         rewrite one byte per cache line of its share, so the lines go through
//                         every core's caches and push out what was there (a memset would not:
//                         glibc's memset of tens of MiB writes with streaming stores that bypass
//                         the caches)
//   touch(p, bytes)       reads one byte per cache line of [p, p + bytes): brings a buffer back
//                         into the caches (e.g. the activation a previous task just wrote)
//   kModelFlushBytes      the flush size the executor's "cold" column and the harness's "model"
//                         cache mode use (64 MiB: more than the L2s and the L3 share a task of a
//                         model sees of its weights between two uses)
#pragma once

#include <cstdint>
#include <vector>

namespace tlm {

constexpr int64_t kModelFlushBytes = int64_t(64) << 20;

class CacheFlusher {
 public:
  explicit CacheFlusher(int64_t bytes);
  void flush();
  bool empty() const { return scratch_.empty(); }

 private:
  std::vector<uint8_t> scratch_;
  uint8_t sweep_ = 0;
};

void touch(const void* p, int64_t bytes);

}  // namespace tlm
