// Memory planning: every activation (the output of a task instance) lives at a fixed offset in
// one arena, assigned once at compile time from value lifetimes over the instance order.
//
//   plan_offsets(buffers)   the allocator alone: greedy by size (largest first), each buffer
//                           placed in the smallest gap left by already-placed buffers whose
//                           lifetimes overlap its own (best fit), else on top of them.
//   plan_memory(g, p)       the lifetimes of a partitioned model: a value is live from the
//                           instance that produces it to its last consuming instance; graph
//                           outputs live to the end (they are copied out after the last
//                           instance). Graph inputs and constants are not in the arena: they are
//                           bound in place.
//                           An instance of a view task (partition.h's is_view_subgraph: only
//                           Reshape/Flatten/Squeeze/Unsqueeze) whose input is an activation does
//                           not run: its output is a view of the input's bytes (same offset),
//                           and the input lives as long as either is read. Not when either value
//                           is a graph output (outputs are written to and copied from their own
//                           buffers) or with `views` false (TLM_RESHAPE_VIEWS=0, for A/B runs).
//
// Two buffers whose intervals overlap never share a byte; a chain a->b->c->d reuses a's bytes
// for c. Offsets are aligned to kArenaAlignment so every view is vector-aligned.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partition/partition.h"

namespace tlm {

constexpr int64_t kArenaAlignment = 64;

// One buffer to place: `bytes` long, live over the instance indices [first, last] inclusive.
struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;
  int last = 0;
};

// Offsets (one per buffer, multiples of `alignment`) and the arena size they need.
struct ArenaLayout {
  std::vector<int64_t> offsets;
  int64_t arena_bytes = 0;
};

ArenaLayout plan_offsets(const std::vector<BufferLifetime>& buffers,
                         int64_t alignment = kArenaAlignment);

struct MemoryPlan {
  std::vector<int64_t> offset;           // per model ValueId: byte offset in the arena, or -1
  std::vector<BufferLifetime> lifetime;  // per model ValueId (meaningful where offset >= 0)
  std::vector<bool> view;                // per instance: its output is a view of its input, so
                                         // it does not run
  int views = 0;                         // how many instances are views
  int64_t arena_bytes = 0;               // size of the arena
  int64_t activation_bytes = 0;          // sum of the sizes of the activations that own bytes
                                         // (what no reuse would need; views own none)
};

// False when the environment sets TLM_RESHAPE_VIEWS=0: every view task runs as a copy.
bool reshape_views_enabled();

MemoryPlan plan_memory(const Graph& g, const Partition& p, bool views = reshape_views_enabled());

// Per task: true when it has instances and every one of them is a view, so the task never runs.
// `view` is per instance (MemoryPlan::view, Timing::view); instances past its end are not views.
std::vector<bool> view_only_tasks(const Partition& p, const std::vector<bool>& view);

// "arena 12.3 MiB for 45.6 MiB of activations (27%)", then "; 12 reshapes are views" if any.
std::string memory_plan_summary(const MemoryPlan& plan);

// "12.3 MiB", "640 B".
std::string format_bytes(int64_t bytes);

}  // namespace tlm
