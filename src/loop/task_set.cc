// Training tasks of the loop (task_set.h).
#include "loop/task_set.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "language/workloads.h"
#include "loop/demonstrations.h"
#include "support/error.h"

namespace tlm {
namespace {

// m of the n tasks of one kind (sorted by FLOPs), evenly spread: the middle of each of m equal
// slices.
std::vector<size_t> spread(size_t n, size_t m) {
  std::vector<size_t> out;
  for (size_t j = 0; j < m; j++) out.push_back(std::min(n - 1, (size_t)((j + 0.5) * n / m)));
  return out;
}

}  // namespace

TaskSet choose_training_tasks(const TaskSetOptions& o) {
  TLM_USER_CHECK(o.max_tasks >= 0) << "--tasks must not be negative";
  const std::vector<std::string> held = heldout_workloads();
  std::set<std::string> held_canon;
  for (const std::string& h : held) held_canon.insert(canonical_workload(h));
  for (const std::string& w : o.workloads)
    TLM_USER_CHECK(w != "heldout" && !(w != "train" && held_canon.count(canonical_workload(w))))
        << "workload '" << w << "' is held out for evaluation (language/workloads.cc): it never "
        << "enters training data";
  const std::set<std::string> held_keys = heldout_task_keys();

  TaskSet set;
  std::set<std::string> seen;
  std::vector<LoopTask> all;
  for (const std::string& spec : expand_workloads(o.workloads))
    for (const Subgraph& sub : workload_tasks(spec)) {
      if (!seen.insert(sub.key).second) continue;
      set.unique++;
      if (held_keys.count(sub.key)) {
        set.heldout++;
      } else if (o.max_mflops > 0 && sub.flops > o.max_mflops * 1e6) {
        set.too_big++;
      } else {
        all.push_back({sub, spec});
      }
    }
  auto order = [](const LoopTask& a, const LoopTask& b) {
    return std::tie(a.sub.kind, a.sub.flops, a.sub.key) <
           std::tie(b.sub.kind, b.sub.flops, b.sub.key);
  };
  std::sort(all.begin(), all.end(), order);
  TLM_USER_CHECK(!all.empty()) << "the loop's task set is empty (" << set.unique
                               << " unique tasks, " << set.heldout << " held out, " << set.too_big
                               << " above --max-mflops)";
  if (o.max_tasks == 0 || (size_t)o.max_tasks >= all.size()) {
    set.tasks = std::move(all);
    return set;
  }

  // Every kind keeps one task (the largest kinds first when there are fewer slots than kinds),
  // the rest is shared in proportion to the kinds' sizes (largest remainder).
  std::map<std::string, std::vector<size_t>> by_kind;
  for (size_t i = 0; i < all.size(); i++) by_kind[all[i].sub.kind].push_back(i);
  std::vector<std::pair<size_t, std::string>> kinds;  // (-size, kind) order by size
  for (const auto& [k, v] : by_kind) kinds.push_back({v.size(), k});
  std::stable_sort(kinds.begin(), kinds.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::map<std::string, size_t> take;
  size_t left = (size_t)o.max_tasks;
  for (const auto& [n, k] : kinds)
    if (left > 0) take[k] = 1, left--;
  const size_t extra_pool = all.size() - take.size();
  std::vector<std::tuple<double, size_t, std::string>> rema;
  size_t given = 0;
  for (const auto& [n, k] : kinds) {
    if (!take.count(k)) continue;
    const double share = extra_pool ? (double)left * (double)(n - 1) / (double)extra_pool : 0;
    const size_t whole = std::min(n - 1, (size_t)share);
    take[k] += whole;
    given += whole;
    rema.push_back({-(share - (double)whole), rema.size(), k});
  }
  std::sort(rema.begin(), rema.end());
  for (size_t i = 0; given < left && i < rema.size() * 2; i++) {
    const std::string& k = std::get<2>(rema[i % rema.size()]);
    if (take[k] < by_kind[k].size()) take[k]++, given++;
  }
  for (const auto& [k, m] : take)
    for (size_t j : spread(by_kind[k].size(), m)) set.tasks.push_back(all[by_kind[k][j]]);
  std::sort(set.tasks.begin(), set.tasks.end(), order);
  set.tasks.erase(
      std::unique(set.tasks.begin(), set.tasks.end(),
                  [](const LoopTask& a, const LoopTask& b) { return a.sub.key == b.sub.key; }),
      set.tasks.end());
  return set;
}

std::vector<int> loop_batch(size_t tasks, int k_b, int b) {
  TLM_CHECK(k_b >= 1 && b >= 0 && b < k_b) << "batch " << b << " of " << k_b;
  std::vector<int> out;
  for (size_t i = (size_t)b; i < tasks; i += (size_t)k_b) out.push_back((int)i);
  return out;
}

}  // namespace tlm
