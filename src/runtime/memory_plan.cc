#include "runtime/memory_plan.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace tlm {
namespace {

int64_t align_up(int64_t x, int64_t a) { return (x + a - 1) / a * a; }

bool overlaps(const BufferLifetime& a, const BufferLifetime& b) {
  return !(a.last < b.first || b.last < a.first);
}

int64_t value_bytes(const Value& v) {
  int64_t n = 1;
  for (int64_t d : v.shape) {
    TLM_CHECK(d >= 0) << "value '" << v.name << "' has a negative extent";
    TLM_USER_CHECK(d == 0 || n <= std::numeric_limits<int64_t>::max() / 16 / d)
        << "value '" << v.name << "' of shape " << shape_str(v.shape) << " is too large";
    n *= d;
  }
  return n * (int64_t)dtype_size(v.dtype);
}

}  // namespace

ArenaLayout plan_offsets(const std::vector<BufferLifetime>& buffers, int64_t alignment) {
  TLM_CHECK(alignment > 0) << "alignment " << alignment;
  // Largest first: big buffers claim space early, small ones fill the gaps they leave.
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    return buffers[a].first < buffers[b].first;
  });

  ArenaLayout layout;
  layout.offsets.assign(buffers.size(), -1);
  std::vector<int> placed;
  for (int i : order) {
    const BufferLifetime& b = buffers[i];
    TLM_CHECK(b.bytes >= 0 && b.first <= b.last)
        << "buffer " << i << " bytes " << b.bytes << " interval [" << b.first << "," << b.last
        << "]";
    // The placed buffers live at the same time as this one, by offset: the gaps between them
    // are the candidate places.
    std::vector<int> live;
    for (int j : placed)
      if (overlaps(b, buffers[j])) live.push_back(j);
    std::sort(live.begin(), live.end(),
              [&](int x, int y) { return layout.offsets[x] < layout.offsets[y]; });
    int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max(), end = 0;
    for (int j : live) {
      int64_t gap = layout.offsets[j] - end;
      if (gap >= b.bytes && gap < best_gap) {
        best = end;
        best_gap = gap;
      }
      end = std::max(end, align_up(layout.offsets[j] + buffers[j].bytes, alignment));
    }
    if (best < 0) best = end;
    layout.offsets[i] = best;
    layout.arena_bytes = std::max(layout.arena_bytes, best + b.bytes);
    placed.push_back(i);
  }
  layout.arena_bytes = align_up(layout.arena_bytes, alignment);
  return layout;
}

bool reshape_views_enabled() {
  const char* env = std::getenv("TLM_RESHAPE_VIEWS");
  return !(env && std::string(env) == "0");
}

MemoryPlan plan_memory(const Graph& g, const Partition& p, bool views) {
  const int n = (int)p.instances.size();
  MemoryPlan plan;
  plan.offset.assign(g.values.size(), -1);
  plan.lifetime.assign(g.values.size(), BufferLifetime{});
  plan.view.assign(n, false);

  std::vector<ValueId> activations;  // in production order
  std::vector<int> producer(g.values.size(), -1);
  for (int k = 0; k < n; k++) {
    const TaskInstance& inst = p.instances[k];
    for (ValueId v : inst.inputs) {
      if (v == kNoValue) continue;
      TLM_CHECK(v >= 0 && v < (ValueId)g.values.size()) << "instance " << k << " reads value " << v;
      const Value& val = g.value(v);
      if (val.is_constant() || std::find(g.inputs.begin(), g.inputs.end(), v) != g.inputs.end())
        continue;
      TLM_CHECK(producer[v] >= 0 && producer[v] < k)
          << "instance " << k << " reads '" << val.name << "' before it is produced";
      plan.lifetime[v].last = std::max(plan.lifetime[v].last, k);
    }
    ValueId out = inst.output;
    TLM_CHECK(out >= 0 && out < (ValueId)g.values.size()) << "instance " << k << " output";
    TLM_CHECK(producer[out] < 0) << "value '" << g.value(out).name << "' produced twice";
    producer[out] = k;
    plan.lifetime[out] = BufferLifetime{value_bytes(g.value(out)), k, k};
    activations.push_back(out);
  }
  // Graph outputs are copied out after the last instance.
  std::vector<bool> is_output(g.values.size(), false);
  for (ValueId v : g.outputs)
    if (v >= 0 && v < (ValueId)producer.size() && producer[v] >= 0) {
      plan.lifetime[v].last = n;
      is_output[v] = true;
    }

  // Views: root[v] is the activation that owns v's bytes (v itself unless v is a view).
  std::vector<ValueId> root(g.values.size(), kNoValue);
  for (ValueId v : activations) root[v] = v;
  if (views) {
    std::vector<int> task_is_view(p.tasks.size(), -1);  // -1 not yet asked
    for (int k = 0; k < n; k++) {
      const TaskInstance& inst = p.instances[k];
      TLM_CHECK(inst.task >= 0 && inst.task < (int)p.tasks.size()) << "instance task " << inst.task;
      int& is_view = task_is_view[inst.task];
      if (is_view < 0) is_view = is_view_subgraph(p.tasks[inst.task].sub.graph);
      if (!is_view || inst.inputs.size() != 1) continue;
      const ValueId in = inst.inputs[0], out = inst.output;
      if (in == kNoValue || producer[in] < 0 || is_output[in] || is_output[out]) continue;
      TLM_CHECK(value_bytes(g.value(in)) == value_bytes(g.value(out)))
          << "view '" << g.value(out).name << "' differs in size from '" << g.value(in).name << "'";
      plan.view[k] = true;
      plan.views++;
      root[out] = root[in];
    }
  }
  // A root lives as long as any of its views is read.
  for (ValueId v : activations)
    if (root[v] != v)
      plan.lifetime[root[v]].last = std::max(plan.lifetime[root[v]].last, plan.lifetime[v].last);

  std::vector<ValueId> owners;
  std::vector<BufferLifetime> buffers;
  for (ValueId v : activations) {
    if (root[v] != v) continue;
    owners.push_back(v);
    buffers.push_back(plan.lifetime[v]);
    plan.activation_bytes += plan.lifetime[v].bytes;
  }
  ArenaLayout layout = plan_offsets(buffers);
  for (size_t i = 0; i < owners.size(); i++) plan.offset[owners[i]] = layout.offsets[i];
  for (ValueId v : activations) plan.offset[v] = plan.offset[root[v]];
  plan.arena_bytes = layout.arena_bytes;
  return plan;
}

std::vector<bool> view_only_tasks(const Partition& p, const std::vector<bool>& view) {
  std::vector<bool> only(p.tasks.size(), false), runs(p.tasks.size(), false);
  for (size_t k = 0; k < p.instances.size(); k++) {
    const int t = p.instances[k].task;
    TLM_CHECK(t >= 0 && t < (int)p.tasks.size()) << "instance task " << t;
    (k < view.size() && view[k] ? only : runs)[t] = true;
  }
  for (size_t i = 0; i < only.size(); i++) only[i] = only[i] && !runs[i];
  return only;
}

std::string format_bytes(int64_t bytes) {
  char buf[64];
  if (bytes < 1024)
    std::snprintf(buf, sizeof buf, "%lld B", (long long)bytes);
  else if (bytes < 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / 1024.0);
  else if (bytes < (int64_t)1024 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / (1024.0 * 1024));
  else
    std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

std::string memory_plan_summary(const MemoryPlan& plan) {
  char pct[32] = "";
  if (plan.activation_bytes > 0)
    std::snprintf(pct, sizeof pct, " (%.0f%%)", 100.0 * plan.arena_bytes / plan.activation_bytes);
  std::string s = "arena " + format_bytes(plan.arena_bytes) + " for " +
                  format_bytes(plan.activation_bytes) + " of activations" + pct;
  if (plan.views > 0)
    s += "; " + std::to_string(plan.views) +
         (plan.views == 1 ? " reshape is a view" : " reshapes are views");
  return s;
}

}  // namespace tlm
