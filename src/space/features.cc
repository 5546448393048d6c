// program_features: one pass over the slots, each adding what its step kind's Features row says
// (the per-slot numbers and the tile factors of the tiled stage); the derived features come from
// those factors at the end.
#include "space/features.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "space/space_internal.h"
#include "support/error.h"

namespace tlm {
namespace space_detail {

float lg(double x) { return (float)std::log2(std::max(1.0, x)); }

// --- The Features column of the step table (steps.cc): per kind, how many numbers a slot adds,
// and what it adds to the vector and to the derived quantities.
int tile_feature_width(const Slot& s) { return s.arity + 1; }
int one_feature(const Slot&) { return 1; }

// log2 of each factor and of the outer extent they leave; the tiled stage's levels.
void tile_features(const Slot& s, const int64_t* v, FeatureState& st) {
  double rest = (double)s.extent;
  for (int a = 0; a < s.arity; a++) {
    st.f.push_back(lg((double)v[a]));
    rest /= (double)v[a];
  }
  st.f.push_back(lg(rest));
  if (s.stage != st.tiled_stage) return;
  if (s.reduction)
    st.rlv[s.var] = {lg(rest), lg((double)v[0])};
  else if (s.arity == 3)
    st.lv[s.var] = {lg(rest), lg((double)v[0]), lg((double)v[1]), lg((double)v[2])};
  else
    st.lv[s.var] = {lg(rest), 0, 0, lg((double)v[0])};
}
void vectorize_features(const Slot& s, const int64_t* v, FeatureState& st) {
  st.f.push_back((float)v[0]);
  if (s.stage == st.tiled_stage || s.stage + 1 == st.stages) st.vec_var = (int)v[0];
}
void parallel_features(const Slot&, const int64_t* v, FeatureState& st) {
  st.f.push_back((float)v[0]);
  st.parallel = (int)v[0];
}
void unroll_features(const Slot& s, const int64_t* v, FeatureState& st) {
  st.f.push_back(lg(1.0 + (double)v[0]));
  if (s.stage == st.tiled_stage) st.unroll = v[0];
}
void rfactor_features(const Slot&, const int64_t* v, FeatureState& st) {
  st.f.push_back(lg(1.0 + (double)v[0]));
}
void pack_features(const Slot&, const int64_t* v, FeatureState& st) {
  st.f.push_back((float)v[0]);
  st.packs += v[0] != 0;
}
// The fraction of the extent the padding adds (what the shifted last tile may recompute).
void pad_features(const Slot& s, const int64_t* v, FeatureState& st) {
  st.f.push_back((float)(round_up(s.extent, v[0]) - s.extent) / (float)s.extent);
}
// ComputeAt, Order: the value itself.
void value_feature(const Slot&, const int64_t* v, FeatureState& st) { st.f.push_back((float)v[0]); }

}  // namespace space_detail

namespace {

using namespace space_detail;

constexpr int kDerived = 15;  // the derived features appended after the per-slot ones

// The stage whose tiles the derived features describe: the anchor (TiledAnchor) or the output.
int tiled_stage(const TaskSpace& space) {
  return space.rule == SpaceRule::TiledAnchor ? space.anchor : (int)space.stages.size() - 1;
}

// The register block's operand traffic (TiledAnchor; zeros otherwise), from the tiles and
// SpaceOperand::index: per operand (the first kCrossTaskOperands) how its innermost dim meets
// the vectorized var (0 broadcast, 1 contiguous, 2 strided or in an outer dim, 3 not affine),
// log2 of the vector loads one reduction step of the S3 block issues (contiguous: a vector per
// `lanes` elements of the innermost dim; otherwise one per distinct element) and log2 of its elements
// over the S2 x S3 tiles and one R1 tile (what the R1 loop keeps in L1); then the block's
// loads per accumulator vector per step, its accumulator vectors and their share of the
// vector registers (32 with AVX-512, else 16).
void append_traffic(const TaskSpace& space, const FeatureState& st, const HardwareInfo& hw,
                    std::vector<float>* f) {
  const size_t begin = f->size(), n = 3 * kCrossTaskOperands + 3;
  f->resize(begin + n, 0.f);
  if (space.rule != SpaceRule::TiledAnchor) return;
  const SpaceStage& tst = space.stages.at(st.tiled_stage);
  const int nv = (int)tst.extents.size(), nr = (int)tst.rextents.size();
  const auto factor = [](float lg2) { return (int64_t)std::llround(std::exp2((double)lg2)); };
  std::vector<int64_t> block(nv + nr, 1), l1(nv + nr, 1);  // tile per var, then per rdim
  double outputs = 1;
  for (int i = 0; i < nv; i++) {
    block[i] = factor(st.lv[i][3]);
    l1[i] = block[i] * factor(st.lv[i][2]);
    outputs *= (double)block[i];
  }
  for (int j = 0; j < nr; j++) l1[nv + j] = factor(st.rlv[j][1]);
  const double lanes = std::max(1, tst.lanes);
  const double acc = std::max(1.0, outputs / lanes);
  double loads = 0;
  for (size_t k = 0; k < tst.operands.size(); k++) {
    const std::vector<std::vector<int64_t>>& index = tst.operands[k].index;
    double elems = 1, inner = 1, l1_elems = 1;
    int meets = 0;  // broadcast
    for (size_t d = 0; d < index.size(); d++) {
      const double sp = (double)index_span(index[d], block);
      elems *= sp;
      l1_elems *= (double)index_span(index[d], l1);
      if (d == 0) inner = sp;
      const int64_t c = st.vec_var >= 0 && st.vec_var < (int)index[d].size() ? index[d][st.vec_var] : 0;
      if (c == kNotAffine) meets = 3;
      else if (c != 0 && meets < 3) meets = d == 0 && c == 1 && meets == 0 ? 1 : 2;
    }
    // Broadcast or gathered: one load per distinct element, at most one per point of the tiles
    // of the vars and reduction dims that index it (a stride-2 row of 7 is 7 loads, not 13).
    double points = 1;
    for (int v = 0; v < nv + nr; v++)
      for (const std::vector<int64_t>& row : index)
        if (v < (int)row.size() && row[v] != 0) {
          points *= v < nv ? (double)block[v] : 1.0;  // one reduction step
          break;
        }
    const double vloads =
        meets == 1 ? std::ceil(inner / lanes) * (elems / inner) : std::min(elems, points);
    loads += vloads;
    if (k < (size_t)kCrossTaskOperands) {
      (*f)[begin + 3 * k] = (float)meets;
      (*f)[begin + 3 * k + 1] = lg(vloads);
      (*f)[begin + 3 * k + 2] = lg(l1_elems);
    }
  }
  const double registers = hw.isa == "avx512" ? 32 : 16;
  (*f)[begin + 3 * kCrossTaskOperands] = (float)(loads / acc);
  (*f)[begin + 3 * kCrossTaskOperands + 1] = (float)acc;
  (*f)[begin + 3 * kCrossTaskOperands + 2] = (float)(acc / registers);
}

}  // namespace

size_t feature_count(const TaskSpace& space) {
  size_t n = kDerived;
  for (const Slot& s : space.slots) n += step_row(s.kind).feature_width(s);
  return n;
}

namespace {

// The slot pass: every slot's row adds its numbers; lv/rlv hold the tiled stage's levels.
FeatureState walk_slots(const TaskSpace& space, const Program& p) {
  TLM_CHECK(p.values.size() == program_length(space))
      << "program_features: " << p.values.size() << " values";
  FeatureState st;
  st.tiled_stage = tiled_stage(space);
  st.stages = (int)space.stages.size();
  const SpaceStage& tst = space.stages.at(st.tiled_stage);
  // log2 of each level's factor per spatial var (S0 outermost .. S3 innermost) and per rdom dim
  // (R0, R1); untiled dims keep their whole extent at the innermost level.
  st.lv.assign(tst.extents.size(), {0, 0, 0, 0});
  st.rlv.assign(tst.rextents.size(), {0, 0});
  for (size_t i = 0; i < tst.extents.size(); i++) st.lv[i][3] = lg((double)tst.extents[i]);
  for (size_t j = 0; j < tst.rextents.size(); j++) st.rlv[j][1] = lg((double)tst.rextents[j]);
  st.f.reserve(feature_count(space));
  size_t k = 0;
  for (const Slot& s : space.slots) {
    step_row(s.kind).features(s, &p.values[k], st);
    k += s.arity;
  }
  return st;
}

// The kDerived quantities of the tiled stage's tiling, appended to *f.
void append_derived(const TaskSpace& space, const FeatureState& st, std::vector<float>* f) {
  const SpaceStage& tst = space.stages.at(st.tiled_stage);
  float level[4] = {0, 0, 0, 0}, rlevel[2] = {0, 0};
  for (const auto& l : st.lv)
    for (int i = 0; i < 4; i++) level[i] += l[i];
  for (const auto& l : st.rlv)
    for (int i = 0; i < 2; i++) rlevel[i] += l[i];
  // Parallel loops: the p outermost S0 loops, outermost = the highest Halide var index among
  // the tiled (extent > 1) vars.
  float par = 0;
  int taken = 0;
  for (int i = (int)tst.extents.size() - 1; i >= 0 && taken < st.parallel; i--)
    if (tst.extents[i] > 1) {
      par += st.lv[i][0];
      taken++;
    }
  float vec = 0;
  if (st.vec_var >= 0 && st.vec_var < (int)st.lv.size())
    vec = std::min(st.lv[st.vec_var][3], lg((double)tst.lanes));
  const float bytes = 2;  // log2(4): f32 elements
  f->insert(f->end(),
            {level[0], level[1], level[2], level[3], rlevel[0], rlevel[1], par,
             (float)st.parallel, vec, lg(1.0 + (double)st.unroll), (float)st.packs,
             level[3] + rlevel[1], level[1] + level[2] + level[3] + bytes,
             level[2] + level[3] + bytes, level[3] + bytes});
}

}  // namespace

std::vector<float> program_features(const TaskSpace& space, const Program& p) {
  FeatureState st = walk_slots(space, p);
  append_derived(space, st, &st.f);
  TLM_CHECK(st.f.size() == feature_count(space)) << "feature count " << st.f.size();
  return std::move(st.f);
}

std::vector<float> cross_task_features(const TaskSpace& space, const Program& p,
                                       const HardwareInfo& hw) {
  const FeatureState st = walk_slots(space, p);
  const SpaceStage& tst = space.stages.at(st.tiled_stage);
  std::vector<float> f;
  f.reserve(kCrossTaskFeatures);
  // The machine.
  f.insert(f.end(), {lg((double)tst.lanes), (float)hw.cores, hw.isa == "avx512" ? 1.f : 0.f});
  // The task.
  double spatial = 1, reduction = 1;
  for (int64_t e : tst.extents) spatial *= (double)e;
  for (int64_t e : tst.rextents) reduction *= (double)e;
  const int epilogue = space.rule == SpaceRule::TiledAnchor ? st.stages - 1 - space.anchor : 0;
  const int operands = space.rule == SpaceRule::TiledAnchor ? (int)tst.operands.size() : 0;
  f.insert(f.end(), {space.rule == SpaceRule::TiledAnchor ? 1.f : 0.f, (float)st.stages,
                     (float)tst.extents.size(), (float)tst.rextents.size(), lg(spatial),
                     lg(reduction), lg(spatial) + lg(reduction), (float)epilogue,
                     (float)operands});
  // Per var of the tiled stage (Halide order, innermost first): its extent and its levels;
  // per reduction dim: its extent and its two levels. Missing dims are zeros.
  for (int i = 0; i < kCrossTaskVars; i++) {
    if (i < (int)tst.extents.size()) {
      f.push_back(lg((double)tst.extents[i]));
      f.insert(f.end(), st.lv[i].begin(), st.lv[i].end());
    } else {
      f.insert(f.end(), {0, 0, 0, 0, 0});
    }
  }
  for (int j = 0; j < kCrossTaskRdims; j++) {
    if (j < (int)tst.rextents.size()) {
      f.push_back(lg((double)tst.rextents[j]));
      f.insert(f.end(), st.rlv[j].begin(), st.rlv[j].end());
    } else {
      f.insert(f.end(), {0, 0, 0});
    }
  }
  append_derived(space, st, &f);
  // One pass over the decisions. The tiled stage's categorical ones: where its accumulator is
  // computed, its loop order, its first three operands' packing; then the padding waste, the
  // largest rfactor, the vector var. The other stages' (a Rows task's reductions and shared
  // producers, a tiled task's epilogue): where they are computed (a histogram of their levels),
  // whether their reductions are vectorized or rfactored, their largest unroll.
  float compute_at = -1, order = -1, pad_waste = 0, rfactor = 0;
  float packs[3] = {0, 0, 0};
  int npack = 0;
  float levels[4] = {0, 0, 0, 0}, vectorized = 0, scalar = 0, rfactored = 0, unroll = 0;
  size_t k = 0;
  for (const Slot& s : space.slots) {
    const int64_t v = p.values[k];
    k += s.arity;
    if (s.kind == StepKind::Pad) pad_waste += (float)(round_up(s.extent, v) - s.extent) / (float)s.extent;
    if (s.kind == StepKind::RFactor) rfactor = std::max(rfactor, lg(1.0 + (double)v));
    if (s.stage == st.tiled_stage) {
      if (s.kind == StepKind::ComputeAt && compute_at < 0) compute_at = (float)v;
      if (s.kind == StepKind::Order && order < 0) order = (float)v;
      if (s.kind == StepKind::Pack && npack < 3) packs[npack++] = (float)v;
      continue;
    }
    if (s.kind == StepKind::ComputeAt) levels[std::min<int64_t>(std::max<int64_t>(v, 0), 3)] += 1;
    if (s.kind == StepKind::Vectorize) (v >= 0 ? vectorized : scalar) += 1;
    if (s.kind == StepKind::RFactor) rfactored += v > 0;
    if (s.kind == StepKind::Unroll) unroll = std::max(unroll, lg(1.0 + (double)v));
  }
  // The other stages' reductions: their number and largest size.
  float reductions = 0, largest = 0;
  for (int i = 0; i < st.stages; i++) {
    const SpaceStage& ss = space.stages[i];
    if (i == st.tiled_stage || ss.rextents.empty()) continue;
    double r = 1;
    for (int64_t e : ss.rextents) r *= (double)e;
    reductions += 1;
    largest = std::max(largest, lg(r));
  }
  f.insert(f.end(), {compute_at, order, packs[0], packs[1], packs[2], pad_waste, rfactor,
                     (float)st.vec_var});
  f.insert(f.end(), {levels[0], levels[1], levels[2], levels[3], vectorized, scalar, rfactored,
                     unroll, reductions, largest});
  append_traffic(space, st, hw, &f);
  TLM_CHECK(f.size() == (size_t)kCrossTaskFeatures) << "cross-task features " << f.size();
  return f;
}

}  // namespace tlm
