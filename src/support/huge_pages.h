// Large buffers on 2 MiB transparent huge pages: every Tensor's bytes (support/tensor.h: a
// model's weights, the measured tasks' inputs and outputs), a compiled model's activation arena
// (runtime/executor.cc) and the packed weight copies its programs read (lower/lower.cc).
//
// Why: a model's tasks stream megabytes of activations and weights that the previous task wrote
// or that come from the last-level cache or memory; with 4 KiB pages every 4 KiB is a TLB entry,
// and inside a VM a TLB miss walks two page tables (the guest's and the host's). These VMs run
// Linux with transparent huge pages in "madvise" mode: memory gets 2 MiB pages only when the
// program asks for them, before it first touches the memory. (Measured in BENCHMARKS.md, "Huge
// pages": ResNet-50 at two threads on AMD Zen 5.)
//
//   huge_pages_wanted()   true unless TLM_HUGE_PAGES is "0" (read at every call: allocations are few)
//   huge_alloc(bytes)     memory for `bytes` bytes, 64-byte aligned; when huge_pages_wanted() and
//                         bytes >= 1 MiB: aligned to 2 MiB, rounded up to whole 2 MiB pages and
//                         madvise(MADV_HUGEPAGE)d (a request: the kernel may still give 4 KiB
//                         pages). Free with std::free. nullptr when out of memory (and for 0).
//   kHugePageBytes        2 MiB
//
// The AOT artifacts (deploy/artifact.cc) do the same in their generated tlm_model_init, decided
// when `tlm compile` runs (TLM_HUGE_PAGES=0 then builds an artifact without them).
#pragma once

#include <cstddef>

namespace tlm {

constexpr size_t kHugePageBytes = size_t(2) << 20;

bool huge_pages_wanted();
void* huge_alloc(size_t bytes);

}  // namespace tlm
