// The TiledAnchor emitter: turns a Plan into Halide schedule calls on the output (the fused
// epilogue) and the anchor (the accumulator), following rules.cc's SSRSRS structure.
//
//   output  each tiled var split into levels S0..S(c-1) plus an inner remainder; loops ordered
//           [inner | S(c-1) | ... | S0], the p outermost S0 loops fused and parallel; the inner
//           remainder vectorized along var 0 when wide enough, else along the anchor's vector var.
//           (Within a level, loops follow var order, except S2's chosen innermost var.)
//   anchor  computed at the innermost level-(c-1) loop of the output. Its storage puts the
//           vector var innermost. Its update splits the remaining levels and the reduction
//           (R0, R1) and is ordered [S3 | R1 | S2 | R0 | S1] (inner first), S3's vector part
//           vectorized, and S3/R1 loops unrolled innermost-first while the product of their
//           extents stays within the unroll limit.
//   packs   operand.in(anchor) computed at root, inside the innermost loop of S0, S1 or R0, or
//           inside all S2 loops but the innermost (a micro-panel for a row of register blocks);
//           stored and copied with the dim the vector var indexes innermost, copy vectorized;
//           a task input indexed by a padded var is not copied inside the update (read where it
//           lies: indexes_padded_var).
//           A model weight packed at root is packed once instead: the task input itself takes
//           that layout and its binder passes a packed copy (lower.h, prepacked constants);
//           blocked by the register block's width when the vector var indexes it (the task is
//           lowered again with that input blocked, blocked_weights()).
// Every split is exact (tile factors are divisor chains), so no loop has a tail; except the
// output's level-0 split of a padded var, whose last tile is shifted inwards (ShiftInwards), or
// guarded (GuardWithIf) when a weight is blocked past the extent along it, and a padded var tiled
// whole, whose loops walk the real extent with a partial last register block.
#include <algorithm>
#include <cstdlib>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;
using Halide::Internal::Call;

std::string nm(const std::string& base, int i, const std::string& tag) {
  return base + std::to_string(i) + "_" + tag;
}

// Arguments of the first call to `callee` in the update definition of `f`.
class FirstCall : public Halide::Internal::IRVisitor {
 public:
  explicit FirstCall(std::string name) : name_(std::move(name)) {}
  std::vector<Halide::Expr> args;
  bool found = false;

 protected:
  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (!found && op->name == name_ && op->call_type == Call::Halide) {
      args = op->args;
      found = true;
    }
    IRVisitor::visit(op);
  }

 private:
  std::string name_;
};

std::vector<Halide::Expr> call_args(const Func& f, const std::string& callee) {
  FirstCall fc(callee);
  for (const Halide::Internal::Definition& d : f.function().updates())
    for (const Halide::Expr& e : d.values()) e.accept(&fc);
  TLM_CHECK(fc.found) << f.name() << " does not call " << callee;
  return fc.args;
}

// Extent of one level-(L-1) iteration of var i: the product of its factors at levels L..3.
int64_t span(const StagePlan& sp, const SpaceStage& st, int i, int level) {
  const auto& f = sp.tiles[i];
  int64_t inner = f[0] * f[1] * f[2];
  switch (level) {
    case 0:
      return st.extents[i];
    case 1:
      return inner;
    case 2:
      return f[1] * f[2];
    default:
      return f[2];
  }
}

// Everything the steps of emit_tiled share: the task, the plan of the anchor, and the loops each
// step creates for the later ones.
struct TiledEmit {
  LoweredTask& t;
  const TaskSpace& space;
  const Plan& plan;
  const int a, o;  // anchor and output stage
  Stage& A;
  Stage& O;
  const SpaceStage& as;
  const StagePlan& ap;
  const int n, c, v;  // anchor vars, compute level, vectorized var
  Func out, acc;
  std::vector<int> tiled;     // vars of extent > 1, innermost first
  std::vector<int> tiled_s2;  // the S2 level's order: the chosen var innermost, the others in order
  std::vector<std::vector<Var>> lv;  // output: per var, its S0..S(c-1) loops
  std::vector<int64_t> tile;         // output: per tiled var, its loop inside S(c-1) (the
                                     // accumulator's extent), after any clamp to the real extent
  int p = 0;                         // fused parallel loops
  Var par;                           // the fused parallel loop (p >= 1)
  bool rooted = false;               // nothing tiled: the anchor is computed at root
  int64_t w = 0;                     // the anchor's vector width
  std::vector<std::vector<Var>> al;  // update: per var, its S(c)..S2 loops
  std::vector<Var> s3;               // update: per var, its S3 loop
  std::vector<RVar> r0, r1;          // update: reduction chunks and their insides
  std::vector<int64_t> r1_ext;

  TiledEmit(LoweredTask& task, const TaskSpace& sp, const Plan& pl)
      : t(task),
        space(sp),
        plan(pl),
        a(sp.anchor),
        o((int)task.stages.size() - 1),
        A(task.stages[a]),
        O(task.stages[o]),
        as(sp.stages[a]),
        ap(pl.stages[a]),
        n((int)A.vars.size()),
        c(ap.compute),
        v(ap.vec),
        out(O.func),
        acc(A.func) {
    for (int i = 0; i < n; i++)
      if (as.extents[i] > 1) tiled.push_back(i);
    tiled_s2 = tiled;
    auto it = std::find(tiled_s2.begin(), tiled_s2.end(), ap.s2_inner);
    if (it != tiled_s2.end()) std::rotate(tiled_s2.begin(), it, it + 1);
    lv.resize(n);
    al.assign(n, std::vector<Var>(3));
    rooted = tiled.empty();
  }
  const std::vector<int>& level_vars(int l) const { return l == 2 ? tiled_s2 : tiled; }
  // A weight packed once is stored blocked along the vector var, whose extent the block does not
  // divide (a padded var): the blocked copy's last block is padded with zeros.
  bool blocked_past_extent() const {
    if (v < 0) return false;
    for (const InputLayout& l : t.input_storage)
      if (l.block > 0 && as.extents[v] % l.block != 0) return true;
    return false;
  }
};

// Step 1: the output's levels S0..S(c-1), then the inner remainder, vectorized and reordered.
void tile_output(TiledEmit& e) {
  const SpaceStage& as = e.as;
  std::vector<Var> inner(e.O.vars.begin(), e.O.vars.end());
  e.tile.assign(e.n, 1);
  for (int i : e.tiled) {
    const bool padded = e.ap.padded[i] != as.extents[i];
    int64_t parent = as.extents[i];
    for (int l = 0; l < e.c; l++) {
      Var outer(nm("d", i, "s" + std::to_string(l))), in(nm("d", i, "i" + std::to_string(l)));
      // A padded var: the tile need not divide the extent; the last one is shifted inwards (it
      // recomputes part of its neighbour), so the accumulator's tile is constant. A tile as large
      // as the padded extent (one tile) walks the real extent: the accumulator's region is the
      // real one, and its update's splits (GuardWithIf, split_update) leave the last register
      // block partial, a tail Halide's loop partitioning peels off the steady-state loop (no
      // read beyond an input's extent, no wasted work). Exact splits keep Halide's default.
      int64_t f = span(e.ap, as, i, l + 1);
      if (padded) f = std::min(f, as.extents[i]);
      const bool shifted = padded && (l == 0 || parent % f != 0);
      // Along a weight blocked past the real extent (blocked_weights): the last tile is guarded,
      // not shifted, so that every tile starts at a multiple of the block and reads whole
      // blocks; the accumulator's tile then runs into the weight's zero padding.
      TailStrategy tail = TailStrategy::Auto;
      if (shifted)
        tail = i == e.v && e.blocked_past_extent() ? TailStrategy::GuardWithIf
                                                   : TailStrategy::ShiftInwards;
      e.out.split(inner[i], outer, in, (int)f, tail);
      e.lv[i].push_back(outer);
      inner[i] = in;
      parent = f;
    }
    e.tile[i] = parent;
  }
  const int lanes_out = e.space.stages[e.o].lanes;
  int ov = -1;
  int64_t ow = 0;
  auto try_vec = [&](int i, int64_t min_width) {
    if (ov >= 0 || i < 0 || as.extents[i] < 2) return;
    int64_t w = vector_width(span(e.ap, as, i, e.c), lanes_out);
    // A padded var's inner loop can be shorter than its padded tile (the splits above clamp to
    // the real extent): a vector wider than that loop would shift its one tile before the
    // output's start (a tile of 9 over 8 columns with 16 lanes: AVX-512 only); vectorize by what
    // the loop holds.
    if (w > e.tile[i]) w = vector_width(e.tile[i], lanes_out);
    if (w >= min_width) ov = i, ow = w;
  };
  try_vec(0, 4);
  try_vec(e.v, 2);
  std::vector<VarOrRVar> order;
  if (ov >= 0) {
    Var vo(nm("d", ov, "vo")), vi(nm("d", ov, "vi"));
    e.out.split(inner[ov], vo, vi, (int)ow);
    e.out.vectorize(vi);
    order.push_back(vi);
    order.push_back(vo);
  }
  for (int i : e.tiled)
    if (i != ov) order.push_back(inner[i]);
  for (int l = e.c - 1; l >= 0; l--)
    for (int i : e.level_vars(l)) order.push_back(e.lv[i][l]);
  for (int i = 0; i < e.n; i++)
    if (as.extents[i] <= 1) order.push_back(e.O.vars[i]);
  e.out.reorder(order);
}

// Step 2: fuse the p outermost S0 loops and run them in parallel.
void parallelize_output(TiledEmit& e) {
  std::vector<Var> s0;  // outermost first
  for (auto it = e.tiled.rbegin(); it != e.tiled.rend(); ++it) s0.push_back(e.lv[*it][0]);
  e.p = e.plan.stages[e.o].parallel;
  if (e.p < 1) return;
  e.par = s0[0];
  for (int k = 1; k < e.p; k++) {
    Var fused("par" + std::to_string(k));
    e.out.fuse(s0[k], e.par, fused);
    e.par = fused;
  }
  e.out.parallel(e.par);
}

// Step 3: the anchor computed in the innermost loop of level c-1, its storage and initialization
// with the vector var innermost.
void place_anchor(TiledEmit& e) {
  if (e.rooted) {
    e.acc.compute_root();
  } else {
    Var at = (e.c == 1 && e.p == (int)e.tiled.size())
                 ? e.par
                 : e.lv[e.level_vars(e.c - 1).front()][e.c - 1];
    e.acc.compute_at(e.out, at);
    // The accumulator's region is one output tile. Said outright: Halide's bounds of the tile a
    // shifted-inwards split leaves inside a fused parallel loop are loose (min(x, y) - min(x, y)
    // bounded as if independent), and the input region it infers from them can exceed the input
    // (a flattened 196-pixel map "read" up to pixel 341: with assertions on, a correct program
    // that cannot run).
    for (int i : e.tiled) e.acc.bound_extent(e.A.vars[i], (int)e.tile[i]);
  }
  e.w = e.v >= 0 ? vector_width(inner_factor(e.ap, e.v), e.as.lanes) : 0;
  if (e.v < 0) return;
  std::vector<Var> storage = {e.A.vars[e.v]};
  for (int i = 0; i < e.n; i++)
    if (i != e.v) storage.push_back(e.A.vars[i]);
  e.acc.reorder_storage(storage);
  // The initialization too runs with the vector innermost.
  Var vo(nm("d", e.v, "vo")), vi(nm("d", e.v, "vi"));
  e.acc.split(e.A.vars[e.v], vo, vi, (int)e.w, TailStrategy::GuardWithIf).vectorize(vi);
  std::vector<VarOrRVar> init_order = {vi};
  for (int i = 0; i < e.n; i++) init_order.push_back(i == e.v ? vo : e.A.vars[i]);
  e.acc.reorder(init_order);
}

// Step 4: the update's remaining spatial levels S(c)..S3 and the reduction's R0, R1.
void split_update(TiledEmit& e) {
  Halide::Stage u = e.acc.update();
  e.s3.assign(e.A.vars.begin(), e.A.vars.end());
  for (int i : e.tiled)
    for (int l = e.c; l <= 2; l++) {
      Var outer(nm("d", i, "u" + std::to_string(l))), in(nm("d", i, "w" + std::to_string(l)));
      u.split(e.s3[i], outer, in, (int)span(e.ap, e.as, i, l + 1), TailStrategy::GuardWithIf);
      e.al[i][l] = outer;
      e.s3[i] = in;
    }
  for (int j = 0; j < (int)e.as.rextents.size(); j++) {
    if (e.as.rextents[j] <= 1) {
      e.r0.push_back(e.A.rdom[j]);
      continue;
    }
    RVar ro(nm("r", j, "o")), ri(nm("r", j, "i"));
    u.split(e.A.rdom[j], ro, ri, (int)e.ap.rtiles[j], TailStrategy::GuardWithIf);
    e.r0.push_back(ro);
    e.r1.push_back(ri);
    e.r1_ext.push_back(e.ap.rtiles[j]);
  }
}

// Step 5: the update ordered [S3 | R1 | S2 | R0 | S1] (inner first), S3's vector part vectorized,
// S3/R1 loops unrolled innermost-first while their extents' product stays within the limit.
void order_update(TiledEmit& e) {
  Halide::Stage u = e.acc.update();
  std::vector<VarOrRVar> order;
  std::vector<std::pair<VarOrRVar, int64_t>> unroll_candidates;  // innermost first
  Var vo(nm("d", e.v, "uvo")), vi(nm("d", e.v, "uvi"));
  if (e.v >= 0) {
    u.split(e.s3[e.v], vo, vi, (int)e.w, TailStrategy::GuardWithIf);
    order.push_back(vi);
    order.push_back(vo);
    unroll_candidates.push_back({vo, inner_factor(e.ap, e.v) / e.w});
  }
  for (int i : e.tiled)
    if (i != e.v) {
      order.push_back(e.s3[i]);
      unroll_candidates.push_back({e.s3[i], inner_factor(e.ap, i)});
    }
  for (size_t j = 0; j < e.r1.size(); j++) {
    order.push_back(e.r1[j]);
    unroll_candidates.push_back({e.r1[j], e.r1_ext[j]});
  }
  if (e.c <= 2)
    for (int i : e.tiled_s2) order.push_back(e.al[i][2]);
  for (const RVar& r : e.r0) order.push_back(r);
  if (e.c <= 1)
    for (int i : e.tiled) order.push_back(e.al[i][1]);
  for (int i = 0; i < e.n; i++)
    if (e.as.extents[i] <= 1) order.push_back(e.A.vars[i]);
  u.reorder(order);
  if (e.v >= 0) u.vectorize(vi);
  int64_t unrolled = 1;
  for (const auto& [loop, extent] : unroll_candidates) {
    if (extent <= 1) continue;
    if (unrolled * extent > e.ap.unroll) break;
    unrolled *= extent;
    u.unroll(loop);
  }
}

// The storage order a packed copy of `name` gets: the dim indexed by the vector var innermost,
// the others in Halide order.
std::vector<int> packed_storage_order(const TiledEmit& e, const std::string& name, int rank) {
  int inner_dim = 0;
  if (e.v >= 0) {
    std::vector<Halide::Expr> cargs = call_args(e.acc, name);
    for (size_t d = 0; d < cargs.size() && (int)d < rank; d++)
      if (Halide::Internal::expr_uses_var(cargs[d], e.A.vars[e.v].name())) {
        inner_dim = (int)d;
        break;
      }
  }
  std::vector<int> order = {inner_dim};
  for (int d = 0; d < rank; d++)
    if (d != inner_dim) order.push_back(d);
  return order;
}

// Task inputs named "w<k>" are the model's constants (partition/subgraph.cc names them).
bool constant_input(const LoweredTask& t, int input) {
  const Graph& g = t.sub.graph;
  const std::string& name = g.value(g.inputs.at(input)).name;
  return !name.empty() && name[0] == 'w';
}

// A constant operand packed whole (at root) is packed once, not on every run: the input itself is
// declared in the packed layout, and whoever binds the weight passes a copy in that layout
// (CompiledTask::prepare_input). Blocked when blocked_weights() chose it (emit_tiled lowered the
// input that way: nothing left to do), else the dim the vector var indexes innermost. The loops
// read exactly what they would read from the root copy.
void prepack_input(TiledEmit& e, int input) {
  e.t.input_storage.resize(e.t.inputs.size());
  if (e.t.input_storage[input].block > 0) return;
  Halide::ImageParam& ip = e.t.inputs.at(input);
  const int rank = ip.dimensions();
  if (rank == 0) return;
  InputLayout layout;
  layout.order = packed_storage_order(e, Halide::Func(ip).name(), rank);
  const Graph& g = e.t.sub.graph;
  const Shape& shape = g.value(g.inputs.at(input)).shape;
  const std::vector<halide_dimension_t> dims = storage_dims(shape, layout);
  // Already stored in that order (a matmul's B with its columns vectorized): nothing to pack,
  // the input stays dense.
  const std::vector<halide_dimension_t> natural = storage_dims(shape, InputLayout{});
  bool same = true;
  for (int d = 0; d < rank; d++) same = same && dims[d].stride == natural[d].stride;
  if (same) return;
  for (int d = 0; d < rank; d++) ip.dim(d).set_stride(dims[d].stride);
  e.t.input_storage[input] = layout;
}

// True when operand k of the anchor is a model weight packed once (prepack_input).
bool prepacked(const TiledEmit& e, size_t k) {
  const int level = e.ap.pack[k];
  const SpaceOperand& operand = e.as.operands[k];
  return level != kPackNone && operand.input >= 0 && (e.rooted || level == kPackRoot) &&
         constant_input(e.t, operand.input);
}

// The weights packed once that are better stored blocked (InputLayout): those whose dim the
// vector var indexes directly, when the register block along the vector var (its S3 factor B)
// is narrower than that dim and every block starts at a multiple of B, so that the program reads
// (i % B, ..., i / B) as whole vectors: B divides the extent (then a padded var's last tile,
// shifted inwards to end at the extent, starts at a multiple of B too; Halide's alignment
// analysis sees it through the min()), or the var is padded to the extent rounded up to B (the
// last block zero-filled, the last tile guarded: tile_output). A register block then streams its
// B-wide column of the weight contiguously through the reduction, where the order layout strides
// by the full dim (a new page per step on a large layer). Empty: nothing to block.
// TLM_WEIGHT_BLOCKS=0 turns it off (to measure what it buys).
std::vector<InputLayout> blocked_weights(const TiledEmit& e) {
  std::vector<InputLayout> out;
  static const bool enabled = [] {
    const char* env = std::getenv("TLM_WEIGHT_BLOCKS");
    return !env || std::string(env) != "0";
  }();
  if (!enabled || e.v < 0 || e.rooted) return out;
  const int64_t B = inner_factor(e.ap, e.v);
  if (B < 2 || B % vector_width(B, e.as.lanes) != 0) return out;
  // B divides the extent, or the padded extent is the extent rounded up to B: the blocked copy
  // (storage_dims: whole blocks, the last one zero-filled) then holds every column the padded
  // tiles compute, and the output's last tile is guarded, not shifted inwards (tile_output).
  const int64_t extent = e.as.extents[e.v];
  if (extent % B != 0 && e.ap.padded[e.v] != round_up(extent, B)) return out;
  const std::string var = e.A.vars[e.v].name();
  for (size_t k = 0; k < e.as.operands.size(); k++) {
    if (!prepacked(e, k)) continue;
    const int input = e.as.operands[k].input;
    const Halide::ImageParam& ip = e.t.inputs.at(input);
    std::vector<Halide::Expr> args = call_args(e.acc, Halide::Func(ip).name());
    for (size_t d = 0; d < args.size(); d++) {
      const Halide::Internal::Variable* x = args[d].as<Halide::Internal::Variable>();
      if (!x || x->name != var) continue;
      const Graph& g = e.t.sub.graph;
      const Shape& shape = g.value(g.inputs.at(input)).shape;
      if (B >= shape[shape.size() - 1 - d]) break;
      out.resize(e.t.inputs.size());
      out[input].block_dim = (int)d;
      out[input].block = (int)B;
      break;
    }
  }
  return out;
}

// True when the anchor reads `callee` through a padded var. A copy of such an operand made inside
// the update is not always what the update reads: Halide 14 sizes it from the update's tiles along
// that var, the last of which is guarded (a tile as large as the padded extent) or shifted
// inwards, with loose bounds. Seen (session 67, property test): a matmul's A copied per K chunk
// along its padded rows computed nothing (every output 0), its B copied along padded, vectorized
// columns gave wrong values, and a convolution's weight copied per row of register blocks was
// "accessed at 17" of its 16 output channels (padded to 18). Such an operand is read where it
// lies instead: a Pack value inside the update then means no copy, and the program stays valid
// (SpaceProperty.OperandsPackedInsideAPaddedUpdatePassTheBoundsChecks). Only task inputs: a stage
// of the task (a convolution's padded input) is defined everywhere, so its copy may cover more
// than the update reads (the AVX-512 experts copy the padded input per input-block chunk along
// padded rows); weights packed once (prepacked) are not copies and keep their layout.
bool indexes_padded_var(const TiledEmit& e, const std::string& callee) {
  std::vector<Halide::Expr> args = call_args(e.acc, callee);
  for (int i : e.tiled) {
    if (e.ap.padded[i] == e.as.extents[i]) continue;
    for (const Halide::Expr& a : args)
      if (Halide::Internal::expr_uses_var(a, e.A.vars[i].name())) return true;
  }
  return false;
}

// Step 6: packed operands. The innermost loop of a level: in the output above the accumulator's
// level (the fused parallel loop when it swallowed S0), in the update below it. S2 is special:
// the copy goes inside every S2 loop but the innermost, so that one micro-panel (e.g. 32 columns
// of B over the R1 chunk, contiguous) serves a whole row of register blocks.
void pack_operands(TiledEmit& e) {
  struct Site {
    LoopLevel at;
    bool in_update;  // a loop of the accumulator's update, not of the output
  };
  auto loop_site = [&](int l, int var) -> Site {
    if (l >= e.c) return {LoopLevel(e.acc, e.al[var][l]), true};
    if (l == 0 && e.p == (int)e.tiled.size()) return {LoopLevel(e.out, e.par), false};
    return {LoopLevel(e.out, e.lv[var][l]), false};
  };
  auto pack_site = [&](int level) -> Site {
    if (level == kPackR0) return {LoopLevel(e.acc, e.r0.front()), true};
    if (level == kPackS0) return loop_site(0, e.level_vars(0).front());
    if (level == kPackS1) return loop_site(1, e.level_vars(1).front());
    if (e.tiled_s2.size() >= 2) return loop_site(2, e.tiled_s2[1]);
    // One S2 loop: just outside it (R0 inside the update, or S1 when S2 is in the output).
    if (e.c <= 2) return {LoopLevel(e.acc, e.r0.front()), true};
    return loop_site(1, e.level_vars(1).front());
  };
  for (size_t k = 0; k < e.as.operands.size(); k++) {
    int level = e.ap.pack[k];
    if (level == kPackNone) continue;
    const SpaceOperand& operand = e.as.operands[k];
    if (prepacked(e, k)) {
      prepack_input(e, operand.input);
      continue;
    }
    // The operand as a Func (an ImageParam's is the same handle its in() wraps).
    Func source = operand.stage >= 0 ? e.t.stages.at(operand.stage).func
                                     : Func(e.t.inputs.at(operand.input));
    const std::string name = source.name();
    const bool root = e.rooted || level == kPackRoot;
    const Site site = root ? Site{LoopLevel::root(), false} : pack_site(level);
    if (operand.input >= 0 && site.in_update && indexes_padded_var(e, name))
      continue;  // read where it lies: see indexes_padded_var
    Func wrapper = source.in(e.acc);
    if (root)
      wrapper.compute_root();
    else
      wrapper.compute_at(site.at);
    // Storage and copy order: the dim indexed by the vector var innermost.
    std::vector<Var> args = wrapper.args();
    if (args.empty()) continue;
    const std::vector<int> order = packed_storage_order(e, name, (int)args.size());
    std::vector<Var> st;
    for (int d : order) st.push_back(args[d]);
    wrapper.reorder_storage(st);
    std::vector<VarOrRVar> loops(st.begin(), st.end());
    wrapper.reorder(loops);
    int lanes = std::max(2, e.space.stages[e.a].lanes);
    Var po(nm("p", (int)k, "o")), pi(nm("p", (int)k, "i"));
    wrapper.split(st[0], po, pi, lanes, TailStrategy::GuardWithIf).vectorize(pi);
    // A copy once per run in a parallel program: its outermost loop of two or more iterations
    // parallel too. Serial, it is Amdahl's share of the run: at two threads on Intel a strided
    // 1x1 convolution's root copy made the best program 1.1-1.8x slower than reading in place on 7
    // of 8 training layers (BENCHMARKS.md, session 70).
    if (root && e.p >= 1) {
      std::vector<int64_t> extents;  // of the copied region: the source's, Halide order
      if (operand.stage >= 0) {
        extents = e.t.stages.at(operand.stage).extents;
      } else {
        const Graph& g = e.t.sub.graph;
        const Shape& shape = g.value(g.inputs.at(operand.input)).shape;
        for (auto it = shape.rbegin(); it != shape.rend(); ++it) extents.push_back(*it);
      }
      for (int j = (int)order.size() - 1; j >= 1; j--) {
        const int d = order[j];
        if (d < (int)extents.size() && extents[d] >= 2) {
          wrapper.parallel(args[d]);
          break;
        }
      }
    }
  }
}

}  // namespace

void emit_tiled(LoweredTask& t, const TaskSpace& space, const Plan& plan) {
  {  // weights the plan packs blocked: lower the task again with those inputs blocked
    TiledEmit probe(t, space, plan);
    std::vector<InputLayout> blocked = blocked_weights(probe);
    if (!blocked.empty()) t = lower_subgraph(t.sub, blocked);
  }
  TiledEmit e(t, space, plan);
  tile_output(e);
  parallelize_output(e);
  place_anchor(e);
  split_update(e);
  order_update(e);
  pack_operands(e);
}

}  // namespace space_detail
}  // namespace tlm
