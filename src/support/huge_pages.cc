#include "support/huge_pages.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace tlm {

bool huge_pages_wanted() {
  const char* v = std::getenv("TLM_HUGE_PAGES");
  return !(v && std::strcmp(v, "0") == 0);
}

void* huge_alloc(size_t bytes) {
  if (bytes == 0) return nullptr;
  if (!huge_pages_wanted() || bytes < kHugePageBytes / 2) {
    return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  void* p = std::aligned_alloc(kHugePageBytes, rounded);
#ifdef MADV_HUGEPAGE
  if (p) ::madvise(p, rounded, MADV_HUGEPAGE);  // a request; failure leaves 4 KiB pages
#endif
  return p;
}

}  // namespace tlm
