// Operator fusion: which nodes of a model run together as one task (TVM's FuseOps, simplified to
// the patterns of graph/op.h). fuse_groups() makes three passes over the topologically ordered
// nodes:
//   1. every Anchor/Reduce node, in order, starts a group, pulls in its prologue (Injective
//      producers read only by the group, transitively) and then its epilogue (the chain
//      of Elemwise consumers while the chain's current value has one consumer and is not a graph
//      output; a value v read only by u = f(v) and by v * u, f elementwise with no other
//      activation input, joins with both: the gate of SiLU / Swish, x * sigmoid(x), so
//      EfficientNet's conv -> sigmoid -> mul is one task, not a conv and a full-size pass).
//      Earlier anchors claim first, so conv -> relu -> conv gives conv_relu, conv.
//   2. every node left over (Elemwise/Injective), from the last to the first, starts a group and
//      pulls in its unclaimed Elemwise/Injective producers read only by the group: single-consumer
//      chains (reshape -> transpose) and trees that end in one value (a, b -> add).
//   3. groups are sorted by their output node's index.
// Prologues are Injective only, as in TVM: an elementwise producer (BERT's GELU before a dense,
// DenseNet's BN+ReLU before a conv) would be recomputed for every read the anchor makes of it
// (hundreds of times per element) if fused in; it runs once, as its own task, instead.
// Every node of a group is an ancestor of the group's output node, so the output node has the
// group's largest index and any producer group's output index is below it: sorting by that index
// is an execution order, and the fused graph is acyclic.
#include <algorithm>
#include <queue>
#include <unordered_set>
#include <utility>

#include "partition/partition.h"

namespace tlm {
namespace {

bool starts_group(Op op) {
  OpPattern p = op_pattern(op);
  return p == OpPattern::Anchor || p == OpPattern::Reduce;
}

bool fusible(Op op) {
  OpPattern p = op_pattern(op);
  return p == OpPattern::Elemwise || p == OpPattern::Injective;
}

class Fuser {
 public:
  explicit Fuser(const Graph& g)
      : g_(g),
        consumers_(g.consumers()),
        is_output_(g.values.size(), false),
        group_of_(g.nodes.size(), -1) {
    for (ValueId o : g.outputs) {
      TLM_CHECK(o >= 0 && o < (ValueId)g.values.size()) << "bad graph output id " << o;
      is_output_[o] = true;
    }
    for (const Node& n : g.nodes) {
      TLM_CHECK(n.outputs.size() == 1)
          << op_name(n.op) << " node '" << n.name << "' has " << n.outputs.size() << " outputs";
      TLM_CHECK(n.outputs[0] >= 0 && n.outputs[0] < (ValueId)g.values.size())
          << "node '" << n.name << "' writes bad value id " << n.outputs[0];
      for (ValueId v : n.inputs)
        TLM_CHECK(v == kNoValue || (v >= 0 && v < (ValueId)g.values.size()))
            << "node '" << n.name << "' reads bad value id " << v;
    }
    // Distinct consumers: Mul(x, x) reads x twice but is one consumer.
    for (auto& c : consumers_) c.erase(std::unique(c.begin(), c.end()), c.end());
    producer_.assign(g.values.size(), -1);
    for (size_t i = 0; i < g.nodes.size(); i++) producer_[out(i)] = (int)i;
  }

  std::vector<FusedGroup> run() {
    const int n = (int)g_.nodes.size();
    for (int i = 0; i < n; i++) {
      if (!starts_group(g_.nodes[i].op)) continue;
      int gid = new_group(i);
      pull_producers(gid, i, /*injective_only=*/true);
      int cur = i;
      while (true) {
        int c = sole_consumer(out(cur));
        if (c >= 0 && group_of_[c] == -1 && op_pattern(g_.nodes[c].op) == OpPattern::Elemwise &&
            !grows(i, c)) {
          add(gid, c);
          cur = c;
          continue;
        }
        const auto [f, gate] = gated_by(out(cur));
        if (gate < 0) break;
        add(gid, f);
        add(gid, gate);
        cur = gate;
      }
      groups_[gid].output = out(cur);
    }
    for (int i = n - 1; i >= 0; i--) {
      if (group_of_[i] != -1) continue;
      int gid = new_group(i);
      // A merging Reshape left over (the rows flattened for a dense) is a view by itself; pulling
      // the elementwise ops before it in would make them write through a div / mod of every
      // row index (ConvNeXt's GELU between its two MLP layers ran 2-3.6x slower so).
      if (!merging_view(i)) pull_producers(gid, i, /*injective_only=*/false);
      groups_[gid].output = out(i);
    }
    for (FusedGroup& grp : groups_) std::sort(grp.nodes.begin(), grp.nodes.end());
    std::sort(groups_.begin(), groups_.end(), [](const FusedGroup& a, const FusedGroup& b) {
      return a.nodes.back() < b.nodes.back();
    });
    for (const FusedGroup& grp : groups_) check_single_output(grp);
    return std::move(groups_);
  }

 private:
  ValueId out(int node) const { return g_.nodes[node].outputs[0]; }

  // The one node reading v, or -1 when v has none, several, or is a graph output.
  int sole_consumer(ValueId v) const {
    if (is_output_[v] || consumers_[v].size() != 1) return -1;
    return consumers_[v][0];
  }

  // Whether the epilogue node c would broadcast the Anchor node a's output to a larger shape (an
  // SE block's scale, [N, C, 1, 1] times the [N, C, H, W] activation): it runs as its own pass
  // instead, since a schedule that computes the anchor inside the output's tiles would recompute
  // it for every tile (measured 36x slower on EfficientNet-B0's 7x7 excitation convs).
  // Reductions keep such epilogues (x - mean(x) over the reduced rows).
  bool grows(int a, int c) const {
    return op_pattern(g_.nodes[a].op) == OpPattern::Anchor &&
           numel(g_.value(out(c)).shape) > numel(g_.value(out(a)).shape);
  }

  // Whether node p is a Reshape that merges dims of a value no injective op produces (ConvNeXt's
  // token grid flattened for a dense, graph/passes.h flatten_matmul_rows): kept out of a
  // MatMul's prologue it runs as a view of its own (no copy) or ends the elementwise group that
  // produces it, and the anchor reads the merged rows directly instead of through a div / mod of
  // every row index.
  bool merging_view(int p) const {
    const Node& r = g_.nodes[p];
    if (r.op != Op::Reshape || r.inputs.empty()) return false;
    const ValueId in = r.inputs[0];
    // Two or more dims above 1 become one (a [1, 128, K] -> [128, K] view only drops a 1).
    const Shape& is = g_.value(in).shape;
    const Shape& os = g_.value(out(p)).shape;
    int in_rows = 0, out_rows = 0;
    for (int64_t d : is) in_rows += d > 1;
    for (int64_t d : os) out_rows += d > 1;
    if (out_rows >= in_rows) return false;
    const int q = producer_[in];
    return q < 0 || op_pattern(g_.nodes[q].op) != OpPattern::Injective;
  }

  // {f, m} when v (not a graph output) is read by exactly two unclaimed Elemwise nodes: u = f(v),
  // whose other inputs are constants and whose only reader is m, and m = Mul(v, u) in either
  // order; {-1, -1} otherwise.
  std::pair<int, int> gated_by(ValueId v) const {
    const std::pair<int, int> none = {-1, -1};
    if (is_output_[v] || consumers_[v].size() != 2) return none;
    for (int k = 0; k < 2; k++) {
      const int f = consumers_[v][k], m = consumers_[v][1 - k];
      if (f == m || group_of_[f] != -1 || group_of_[m] != -1 ||
          op_pattern(g_.nodes[f].op) != OpPattern::Elemwise || g_.nodes[m].op != Op::Mul ||
          sole_consumer(out(f)) != m)
        continue;
      bool unary = true;
      for (ValueId in : g_.nodes[f].inputs)
        unary = unary && (in == v || in == kNoValue || g_.value(in).is_constant());
      const std::vector<ValueId>& mi = g_.nodes[m].inputs;
      if (unary && mi.size() == 2 &&
          ((mi[0] == v && mi[1] == out(f)) || (mi[0] == out(f) && mi[1] == v)))
        return {f, m};
    }
    return none;
  }

  int new_group(int node) {
    groups_.push_back(FusedGroup{});
    add((int)groups_.size() - 1, node);
    return (int)groups_.size() - 1;
  }

  void add(int gid, int node) {
    group_of_[node] = gid;
    groups_[gid].nodes.push_back(node);
  }

  // Pulls unclaimed Elemwise/Injective (or only Injective) producers whose every consumer is
  // already in the group.
  // Candidates are visited from the highest node index down: by the time a node is decided, all
  // of its consumers (higher indices) that could join have been decided.
  void pull_producers(int gid, int seed, bool injective_only) {
    std::priority_queue<int> todo;
    std::unordered_set<int> seen;
    auto push_producers = [&](int node) {
      for (ValueId in : g_.nodes[node].inputs) {
        if (in == kNoValue) continue;
        int p = producer_[in];
        if (p < 0 || group_of_[p] != -1 || !fusible(g_.nodes[p].op)) continue;
        if (injective_only && op_pattern(g_.nodes[p].op) != OpPattern::Injective) continue;
        if (injective_only && node == seed && g_.nodes[seed].op == Op::MatMul && merging_view(p))
          continue;
        if (seen.insert(p).second) todo.push(p);
      }
    };
    push_producers(seed);
    while (!todo.empty()) {
      int p = todo.top();
      todo.pop();
      ValueId v = out(p);
      if (is_output_[v]) continue;
      bool all_inside = !consumers_[v].empty();
      for (int c : consumers_[v]) all_inside = all_inside && group_of_[c] == gid;
      if (!all_inside) continue;
      add(gid, p);
      push_producers(p);
    }
  }

  void check_single_output(const FusedGroup& grp) const {
    TLM_CHECK(out(grp.nodes.back()) == grp.output) << "group output is not its last node";
    int gid = group_of_[grp.nodes.back()];
    for (size_t k = 0; k + 1 < grp.nodes.size(); k++) {
      ValueId v = out(grp.nodes[k]);
      TLM_CHECK(!is_output_[v]) << "fused value " << g_.value(v).name << " is a graph output";
      for (int c : consumers_[v])
        TLM_CHECK(group_of_[c] == gid) << "fused value " << g_.value(v).name << " escapes";
    }
  }

  const Graph& g_;
  std::vector<std::vector<int>> consumers_;
  std::vector<bool> is_output_;
  std::vector<int> producer_;
  std::vector<int> group_of_;
  std::vector<FusedGroup> groups_;
};

}  // namespace

std::vector<FusedGroup> fuse_groups(const Graph& g) { return Fuser(g).run(); }

}  // namespace tlm
