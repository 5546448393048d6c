// The partitioning driver and its report.
//   partition_graph()  fuse_groups (fuse.cc) -> make_subgraph per group (subgraph.cc) -> tasks
//                      de-duplicated by key, weight = number of instances sharing it.
//   task_table()       the table `tlm extract` prints: one row per task, columns sized to fit.
#include "partition/partition.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

namespace tlm {

Partition partition_graph(const Graph& g) {
  Partition p;
  std::unordered_map<std::string, int> task_of_key;
  for (const FusedGroup& group : fuse_groups(g)) {
    TaskInstance inst;
    Subgraph sub = make_subgraph(g, group, &inst.inputs);
    inst.output = group.output;
    for (int n : group.nodes) inst.ops.push_back(g.nodes[n].name);
    auto [it, fresh] = task_of_key.emplace(sub.key, (int)p.tasks.size());
    if (fresh) {
      Task t;
      t.id = it->second;
      t.sub = std::move(sub);
      p.tasks.push_back(std::move(t));
    }
    p.tasks[it->second].weight++;
    inst.task = it->second;
    p.instances.push_back(std::move(inst));
  }
  return p;
}

namespace {

// "1.23 GFLOP", "45.6 MFLOP", "789 KFLOP", "12 FLOP": three significant digits.
std::string human_flops(double f) {
  static const struct {
    double scale;
    const char* unit;
  } kUnits[] = {{1e12, "TFLOP"}, {1e9, "GFLOP"}, {1e6, "MFLOP"}, {1e3, "KFLOP"}, {1, "FLOP"}};
  for (const auto& u : kUnits) {
    if (f < u.scale && u.scale > 1) continue;
    double x = f / u.scale;
    char buf[48];
    const char* fmt = u.scale == 1 || x >= 100 ? "%.0f %s" : x >= 10 ? "%.1f %s" : "%.2f %s";
    std::snprintf(buf, sizeof(buf), fmt, x, u.unit);
    return buf;
  }
  return "?";
}

// Input shapes, compactly: activations as shapes, weights prefixed "w", runs of equal entries
// counted ("12x[1,32,28,28]": DenseNet's concatenations).
std::string inputs_text(const Graph& sg) {
  std::vector<std::string> items;
  for (ValueId in : sg.inputs) {
    const Value& v = sg.value(in);
    items.push_back((!v.name.empty() && v.name[0] == 'w' ? "w" : "") + shape_str(v.shape));
  }
  std::string s;
  for (size_t i = 0; i < items.size();) {
    size_t run = 1;
    while (i + run < items.size() && items[i + run] == items[i]) run++;
    if (!s.empty()) s += " ";
    s += (run > 1 ? std::to_string(run) + "x" : "") + items[i];
    i += run;
  }
  return s;
}

}  // namespace

std::string task_table(const Partition& p) {
  double total = 0;
  for (const Task& t : p.tasks) total += t.weight * t.sub.flops;

  const std::vector<std::string> header = {"id",    "kind",   "output", "inputs",
                                           "FLOPs", "weight", "share"};
  const std::vector<bool> right = {true, false, false, false, true, true, true};
  std::vector<std::vector<std::string>> rows = {header};
  for (const Task& t : p.tasks) {
    const Graph& sg = t.sub.graph;
    char share[32];
    std::snprintf(share, sizeof(share), "%.1f%%",
                  total > 0 ? 100.0 * t.weight * t.sub.flops / total : 0.0);
    rows.push_back({std::to_string(t.id), t.sub.kind,
                    sg.outputs.empty() ? "?" : shape_str(sg.value(sg.outputs[0]).shape),
                    inputs_text(sg), human_flops(t.sub.flops), std::to_string(t.weight), share});
  }
  std::vector<size_t> width(header.size(), 0);
  for (const auto& r : rows)
    for (size_t c = 0; c < r.size(); c++) width[c] = std::max(width[c], r[c].size());

  std::string out;
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < r.size(); c++) {
      std::string pad(width[c] - r[c].size(), ' ');
      if (c) line += "  ";
      line += right[c] ? pad + r[c] : r[c] + pad;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out + "total: " + std::to_string(p.tasks.size()) + " tasks, " +
         std::to_string(p.instances.size()) + " instances, " + human_flops(total) + "\n";
}

}  // namespace tlm
