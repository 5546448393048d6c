// support/huge_pages.h: large buffers come whole 2 MiB pages at a 2 MiB boundary (what
// madvise(MADV_HUGEPAGE) needs to give huge pages), small ones 64-byte aligned, a large Tensor's
// bytes are such a buffer, and TLM_HUGE_PAGES=0 turns the request off. Whether the kernel grants
// huge pages depends on the machine (transparent huge pages "never", fragmentation):
// BENCHMARKS.md measures that.
#include "support/huge_pages.h"

#include "support/tensor.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace tlm {
namespace {

TEST(HugePages, LargeBuffersStartOnAHugePage) {
  ASSERT_TRUE(huge_pages_wanted()) << "the tests run without TLM_HUGE_PAGES=0";
  const size_t bytes = 3 * kHugePageBytes + 12345;
  auto* p = static_cast<uint8_t*>(huge_alloc(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHugePageBytes, 0u);
  std::memset(p, 7, bytes);  // all of it is usable
  EXPECT_EQ(p[bytes - 1], 7);
  std::free(p);
}

TEST(HugePages, SmallBuffersAreCacheLineAligned) {
  for (size_t bytes : {size_t(1), size_t(100), size_t(4096), kHugePageBytes / 2 - 1}) {
    auto* p = static_cast<uint8_t*>(huge_alloc(bytes));
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 1, bytes);
    std::free(p);
  }
  EXPECT_EQ(huge_alloc(0), nullptr);
}

TEST(HugePages, LargeTensorsLiveOnThem) {
  Tensor big(DType::F32, {3, 1024, 1024});  // 12 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.raw()) % kHugePageBytes, 0u);
  EXPECT_EQ(big.data<float>()[3 * 1024 * 1024 - 1], 0.0f);  // zero-filled, all of it
  Tensor copy = big.reshaped({3 * 1024 * 1024});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(copy.raw()) % kHugePageBytes, 0u);
  Tensor small(DType::I64, {3});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.raw()) % 64, 0u);
  Tensor empty(DType::F32, {0});
  EXPECT_TRUE(empty.empty_storage());
}

TEST(HugePages, ZeroInTheEnvironmentTurnsThemOff) {
  // In a child, so the variable does not leak into the other tests.
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::setenv("TLM_HUGE_PAGES", "0", 1);
    void* p = huge_alloc(3 * kHugePageBytes);
    bool ok = !huge_pages_wanted() && p != nullptr && reinterpret_cast<uintptr_t>(p) % 64 == 0;
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace tlm
