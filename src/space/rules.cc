// Sketch rules (paper §4.1; Ansor's CPU rules, expressed with Halide's scheduling primitives):
// which decisions a task's schedule must make, derived from the lowered stages.
//
// TiledAnchor -- a conv / conv-transpose / gemm / matmul anchor whose output (the fused
// elementwise epilogue) has the anchor's shape. Ansor's "multi-level tiling with fusion":
//   pad     per spatial var whose extent has few useful divisors, the multiple its tile chain
//           may round the extent up to (1: none); the output's outermost split then shifts the
//           last tile inwards, so every tile keeps its full, constant size.
//   tile    every spatial var of extent > 1 into 4 levels (3 inner factors: S0 S1 S2 S3) and
//           every reduction dim of extent > 1 into 2 (1 inner factor: R0 R1); the loop nest is
//           S0 S1 R0 S2 R1 S3 (SSRSRS). The output follows the same tiles down to the
//           accumulator's level (the epilogue is fused there).
//   order   which var's loop is innermost among the S2 loops (the others keep var order): with
//           rows innermost a matmul's B micro-panel stays in L1 across the register blocks.
//   compute_at  the accumulator is computed in the output's tiles after level 0, 1 or 2; its
//           update runs the remaining levels, so with level 1 the R0 loop sits outside the
//           register blocks (S2) and the R1 loop inside: the classic fast CPU matmul.
//   vectorize   which var's S3 factor is the vector (the accumulator's storage puts it
//           innermost: vectorizing NCHW conv over output channels keeps dense accumulators).
//   parallel    how many outermost S0 loops are fused and run in parallel.
//   pack    per operand the update reads (Func::in(), Ansor's cache read): no copy, a copy of
//           the whole operand (root), or of its tile inside the S0, S1, R0 or S2 level; stored
//           with the dim that the vectorized var indexes innermost.
//   unroll  an unroll limit for S3 and R1 loops (the register block), bounded.
// Rows -- everything else (pools, softmax, layer norm, reductions, elementwise/injective, and
// anchors whose epilogue broadcasts to another shape):
//   the output: tile (one inner factor per var), vectorize, parallel, unroll;
//   each stage with an update (reductions, Reused stages), in reverse topological order:
//   compute_at root or in the output's tile, vectorize a pure var (or none), rfactor (vectorized
//   partial reductions), unroll of its reduction loops;
//   each pure stage read twice or read by a reduction: inline, in the tile, or root.
// Injective producers without a slot stay inlined (Ansor's AlwaysInline).
#include <algorithm>
#include <cstdlib>
#include <map>
#include <utility>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {
namespace {

using Halide::Internal::Call;

// The Funcs and input images one Func's definitions call, in first-call order, and the
// arguments of each one's first call.
class CallCollector : public Halide::Internal::IRVisitor {
 public:
  std::vector<std::string> names;
  std::map<std::string, std::vector<Halide::Expr>> first_args;

 protected:
  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (op->call_type == Call::Halide && first_args.emplace(op->name, op->args).second)
      names.push_back(op->name);
    IRVisitor::visit(op);
  }
};

void collect(const Halide::Internal::Definition& d, CallCollector* c) {
  for (const Halide::Expr& e : d.args()) e.accept(c);
  for (const Halide::Expr& e : d.values()) e.accept(c);
}

// SpaceOperand::index of `callee` in the anchor's update: per argument, e(v + 1) - e(v) for
// every var and reduction dim, when that simplifies to a constant.
std::vector<std::vector<int64_t>> index_of(const Stage& anchor, const std::string& callee) {
  namespace HI = Halide::Internal;
  const HI::Function fn = anchor.func.function();
  if (fn.updates().empty()) return {};
  CallCollector c;
  for (const Halide::Expr& e : fn.updates()[0].values()) e.accept(&c);
  const auto it = c.first_args.find(callee);
  if (it == c.first_args.end()) return {};
  std::vector<std::string> names;
  for (const Halide::Var& x : anchor.vars) names.push_back(x.name());
  for (int j = 0; j < anchor.rdom.dimensions(); j++) names.push_back(anchor.rdom[j].name());
  std::vector<std::vector<int64_t>> index;
  for (const Halide::Expr& arg : it->second) {
    std::vector<int64_t> row;
    for (const std::string& n : names) {
      const Halide::Expr next = HI::substitute(n, HI::Variable::make(Halide::Int(32), n) + 1, arg);
      const int64_t* c = HI::as_const_int(HI::simplify(next - arg));
      row.push_back(c ? std::abs(*c) : kNotAffine);
    }
    index.push_back(std::move(row));
  }
  return index;
}

std::vector<std::string> callees(const Halide::Func& f, bool updates_only) {
  CallCollector c;
  Halide::Internal::Function fn = f.function();
  if (!updates_only) collect(fn.definition(), &c);
  for (const Halide::Internal::Definition& d : fn.updates()) collect(d, &c);
  std::vector<std::string> out;
  for (const std::string& n : c.names)
    if (n != fn.name()) out.push_back(n);
  return out;
}

bool is_compute_heavy(Op op) {
  return op == Op::Conv || op == Op::ConvTranspose || op == Op::ConvNchwc || op == Op::Gemm ||
         op == Op::MatMul;
}

bool tiled_anchor(const LoweredTask& t) {
  if (t.anchor < 0 || t.anchor + 1 >= (int)t.stages.size()) return false;
  const Stage& a = t.stages[t.anchor];
  return a.role == StageRole::Anchor && a.has_update && a.node && is_compute_heavy(a.node->op) &&
         !a.extents.empty() && a.extents == t.stages.back().extents;
}

Slot slot(StepKind kind, int stage, const std::string& subject, int var = -1) {
  Slot s;
  s.kind = kind;
  s.stage = stage;
  s.var = var;
  s.subject = subject;
  return s;
}

Slot tile_slot(int stage, const std::string& subject, int var, bool reduction, int64_t extent,
               int arity) {
  Slot s = slot(StepKind::Tile, stage, subject, var);
  s.reduction = reduction;
  s.extent = extent;
  s.arity = arity;
  return s;
}

// Halide makes repeated Func names unique with a "$n" suffix that depends on what was built
// before in the process; subjects and matching use the name without it.
std::string stable_name(const std::string& name) { return name.substr(0, name.find('$')); }

std::string var_name(const SpaceStage& st, int i) { return st.name + ".d" + std::to_string(i); }

void tiled_anchor_slots(TaskSpace* space) {
  int a = space->anchor, out = (int)space->stages.size() - 1;
  const SpaceStage& st = space->stages[a];
  for (int i = 0; i < (int)st.extents.size(); i++) {
    if (st.extents[i] <= 1) continue;
    if (pad_options(st.extents[i]).size() > 1) {
      Slot pad = slot(StepKind::Pad, a, var_name(st, i), i);
      pad.extent = st.extents[i];
      space->slots.push_back(pad);
    }
    space->slots.push_back(tile_slot(a, var_name(st, i), i, false, st.extents[i], 3));
  }
  int tiled = 0;
  for (int64_t e : st.extents) tiled += e > 1;
  for (int j = 0; j < (int)st.rextents.size(); j++)
    if (st.rextents[j] > 1)
      space->slots.push_back(
          tile_slot(a, st.name + ".r" + std::to_string(j), j, true, st.rextents[j], 1));
  if (tiled >= 2) space->slots.push_back(slot(StepKind::Order, a, st.name + ".s2"));
  space->slots.push_back(slot(StepKind::ComputeAt, a, st.name));
  space->slots.push_back(slot(StepKind::Vectorize, a, st.name));
  space->slots.push_back(slot(StepKind::Parallel, out, space->stages[out].name));
  for (int k = 0; k < (int)st.operands.size(); k++)
    space->slots.push_back(slot(StepKind::Pack, a, st.name + ".pack." + st.operands[k].name, k));
  space->slots.push_back(slot(StepKind::Unroll, a, st.name));
}

void rows_slots(TaskSpace* space) {
  int out = (int)space->stages.size() - 1;
  const SpaceStage& o = space->stages[out];
  int tiled = 0;
  for (int i = 0; i < (int)o.extents.size(); i++)
    if (o.extents[i] > 1) {
      space->slots.push_back(tile_slot(out, var_name(o, i), i, false, o.extents[i], 1));
      tiled++;
    }
  if (tiled > 0) {
    space->slots.push_back(slot(StepKind::Vectorize, out, o.name));
    space->slots.push_back(slot(StepKind::Parallel, out, o.name));
    space->slots.push_back(slot(StepKind::Unroll, out, o.name));
  }
  for (int s = out - 1; s >= 0; s--) {
    const SpaceStage& st = space->stages[s];
    if (st.consumers.empty()) continue;
    if (!st.rextents.empty()) {
      space->slots.push_back(slot(StepKind::ComputeAt, s, st.name));
      space->slots.push_back(slot(StepKind::Vectorize, s, st.name));
      bool can_rfactor = false;
      for (int64_t d : divisors(st.rextents[0])) can_rfactor |= d >= 2 && d <= st.lanes;
      if (can_rfactor) space->slots.push_back(slot(StepKind::RFactor, s, st.name));
      space->slots.push_back(slot(StepKind::Unroll, s, st.name));
      continue;
    }
    bool read_by_reduction = false;
    for (int c : st.consumers) read_by_reduction |= !space->stages[c].rextents.empty();
    if (st.consumers.size() >= 2 || read_by_reduction)
      space->slots.push_back(slot(StepKind::ComputeAt, s, st.name));
  }
}

}  // namespace
}  // namespace space_detail

using namespace space_detail;

TaskSpace build_space(const LoweredTask& task, const HardwareInfo& hw) {
  TLM_CHECK(!task.stages.empty()) << "build_space: task without stages";
  TLM_CHECK(!task.stages.back().has_update) << "build_space: the output stage must be pure";
  TaskSpace space;
  std::map<std::string, int> stage_of;
  for (size_t i = 0; i < task.stages.size(); i++) {
    const Stage& s = task.stages[i];
    SpaceStage st;
    st.name = stable_name(s.func.name());
    st.role = s.role;
    st.extents = s.extents;
    if (s.has_update) st.rextents = s.rextents;
    int bits = s.func.output_types()[0].bits();
    st.lanes = std::max(1, hw.vector_bits / std::max(8, bits));
    stage_of[s.func.name()] = (int)i;
    space.stages.push_back(std::move(st));
  }
  for (size_t i = 0; i < task.stages.size(); i++)
    for (const std::string& callee : callees(task.stages[i].func, false)) {
      auto it = stage_of.find(callee);
      if (it != stage_of.end()) space.stages[it->second].consumers.push_back((int)i);
    }

  if (tiled_anchor(task)) {
    space.rule = SpaceRule::TiledAnchor;
    space.anchor = task.anchor;
    const Node* anchor_node = task.stages[task.anchor].node;
    space.blocked_conv = anchor_node->op == Op::ConvNchwc && anchor_node->i("group", 1) == 1;
    for (const Node& n : task.sub.graph.nodes)
      if (n.op == Op::Slice)
        for (int64_t step : n.ints("steps"))
          if (step > 1) space.strided_input = true;
    // A Transpose among the nodes that compute the anchor's first input: a layout conversion
    // (plain -> channel-blocked) fused into the task as its prologue.
    const Graph& tg = task.sub.graph;
    const std::vector<int> producer = tg.producers();
    std::vector<bool> seen(tg.nodes.size(), false);
    std::vector<ValueId> todo = {anchor_node->inputs.at(0)};
    while (!todo.empty() && !space.converted_input) {
      const int i = producer[todo.back()];
      todo.pop_back();
      if (i < 0 || seen[i]) continue;
      seen[i] = true;
      if (tg.nodes[i].op == Op::Transpose) space.converted_input = true;
      for (ValueId in : tg.nodes[i].inputs)
        if (in != kNoValue) todo.push_back(in);
    }
    for (const std::string& callee : callees(task.stages[task.anchor].func, true)) {
      SpaceOperand op;
      op.name = stable_name(callee);
      const Graph& g = task.sub.graph;
      auto it = stage_of.find(callee);
      if (it != stage_of.end()) op.stage = it->second;
      // An ImageParam is called through its Func ("<name>_im").
      for (size_t j = 0; j < task.inputs.size(); j++)
        if (Halide::Func(task.inputs[j]).name() == callee) {
          op.input = (int)j;
          op.name = g.value(g.inputs.at(j)).name;
        }
      op.index = index_of(task.stages[task.anchor], callee);
      if (op.stage >= 0 || op.input >= 0) space.stages[task.anchor].operands.push_back(op);
    }
    tiled_anchor_slots(&space);
  } else {
    space.rule = SpaceRule::Rows;
    rows_slots(&space);
  }
  space.log10_size = estimate_log10_size(space);
  return space;
}

}  // namespace tlm
