// The training tasks of the iterative loop and their batches (paper §5.3).
//
//   choose_training_tasks(o)  the unique tasks of the training workloads (tasks whose key occurs in
//                             a held-out workload are dropped, a held-out spec is refused), sorted
//                             by (kind, FLOPs, key); with max_tasks, a subset that keeps every
//                             kind and spreads each kind's share over its FLOPs range, so a loop
//                             can be sized to the measurement time at hand
//   loop_batch(tasks, k_b, b) batch b of k_b: "sort them by subgraph type, selecting one every
//                             k_b" -- every batch holds every kind (a good decision for one task
//                             often helps the others of its kind)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "partition/partition.h"

namespace tlm {

struct TaskSetOptions {
  std::vector<std::string> workloads = {"train"};  // zoo specs or the set "train"
  int max_tasks = 0;                               // 0: every task
  double max_mflops = 0;  // drop tasks above this many MFLOP (0: none); big tasks are slow to time
};

struct LoopTask {
  Subgraph sub;
  std::string workload;  // the first workload it came from
};

struct TaskSet {
  std::vector<LoopTask> tasks;  // sorted by (kind, flops, key)
  int64_t unique = 0;           // unique tasks of the workloads
  int64_t heldout = 0;          // dropped: also in a held-out workload
  int64_t too_big = 0;          // dropped: above max_mflops
};

TaskSet choose_training_tasks(const TaskSetOptions& o);

// Indices into `tasks` of batch b (0 <= b < k_b).
std::vector<int> loop_batch(size_t tasks, int k_b, int b);

}  // namespace tlm
