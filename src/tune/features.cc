// program_features: one pass over the slots collects the per-slot features and the tile factors
// of the tiled stage; the derived features come from those factors at the end.
#include "tune/features.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "support/error.h"

namespace tlm {
namespace {

static_assert(kStepKindCount == 8, "program_features: give the new step kind its features");

constexpr int kDerived = 15;  // the derived features appended after the per-slot ones

float lg(double x) { return (float)std::log2(std::max(1.0, x)); }

// Per-slot feature count: a tile's log2 factors plus log2 of the outer extent they leave; one
// number for every other kind.
int slot_width(const Slot& s) { return s.kind == StepKind::Tile ? s.arity + 1 : 1; }

// The stage whose tiles the derived features describe: the anchor (TiledAnchor) or the output.
int tiled_stage(const TaskSpace& space) {
  return space.rule == SpaceRule::TiledAnchor ? space.anchor : (int)space.stages.size() - 1;
}

}  // namespace

size_t feature_count(const TaskSpace& space) {
  size_t n = kDerived;
  for (const Slot& s : space.slots) n += slot_width(s);
  return n;
}

std::vector<float> program_features(const TaskSpace& space, const Program& p) {
  TLM_CHECK(p.values.size() == program_length(space))
      << "program_features: " << p.values.size() << " values";
  const int ts = tiled_stage(space);
  const SpaceStage& tst = space.stages.at(ts);
  // log2 of each level's factor per spatial var (S0 outermost .. S3 innermost) and per rdom dim
  // (R0, R1); untiled dims keep their whole extent at the innermost level.
  std::vector<std::array<float, 4>> lv(tst.extents.size(), {0, 0, 0, 0});
  std::vector<std::array<float, 2>> rlv(tst.rextents.size(), {0, 0});
  for (size_t i = 0; i < tst.extents.size(); i++) lv[i][3] = lg((double)tst.extents[i]);
  for (size_t j = 0; j < tst.rextents.size(); j++) rlv[j][1] = lg((double)tst.rextents[j]);
  int vec_var = -1, parallel = 0, packs = 0;
  int64_t unroll = 0;

  std::vector<float> f;
  f.reserve(feature_count(space));
  size_t k = 0;
  for (const Slot& s : space.slots) {
    const int64_t* v = &p.values[k];
    k += s.arity;
    switch (s.kind) {
      case StepKind::Tile: {
        double rest = (double)s.extent;
        for (int a = 0; a < s.arity; a++) {
          f.push_back(lg((double)v[a]));
          rest /= (double)v[a];
        }
        f.push_back(lg(rest));
        if (s.stage != ts) break;
        if (s.reduction) {
          rlv[s.var] = {lg(rest), lg((double)v[0])};
        } else if (s.arity == 3) {
          lv[s.var] = {lg(rest), lg((double)v[0]), lg((double)v[1]), lg((double)v[2])};
        } else {
          lv[s.var] = {lg(rest), 0, 0, lg((double)v[0])};
        }
        break;
      }
      case StepKind::Vectorize:
        f.push_back((float)v[0]);
        if (s.stage == ts || s.stage + 1 == (int)space.stages.size()) vec_var = (int)v[0];
        break;
      case StepKind::Parallel:
        f.push_back((float)v[0]);
        parallel = (int)v[0];
        break;
      case StepKind::Unroll:
        f.push_back(lg(1.0 + (double)v[0]));
        if (s.stage == ts) unroll = v[0];
        break;
      case StepKind::RFactor:
        f.push_back(lg(1.0 + (double)v[0]));
        break;
      case StepKind::Pack:
        f.push_back((float)v[0]);
        packs += v[0] != 0;
        break;
      case StepKind::ComputeAt:
      case StepKind::Order:
        f.push_back((float)v[0]);
        break;
    }
  }

  float level[4] = {0, 0, 0, 0}, rlevel[2] = {0, 0};
  for (const auto& l : lv)
    for (int i = 0; i < 4; i++) level[i] += l[i];
  for (const auto& l : rlv)
    for (int i = 0; i < 2; i++) rlevel[i] += l[i];
  // Parallel loops: the p outermost S0 loops, outermost = the highest Halide var index among
  // the tiled (extent > 1) vars.
  float par = 0;
  int taken = 0;
  for (int i = (int)tst.extents.size() - 1; i >= 0 && taken < parallel; i--)
    if (tst.extents[i] > 1) {
      par += lv[i][0];
      taken++;
    }
  float vec = 0;
  if (vec_var >= 0 && vec_var < (int)lv.size())
    vec = std::min(lv[vec_var][3], lg((double)tst.lanes));
  const float bytes = 2;  // log2(4): f32 elements
  f.insert(f.end(),
           {level[0], level[1], level[2], level[3], rlevel[0], rlevel[1], par, (float)parallel, vec,
            lg(1.0 + (double)unroll), (float)packs, level[3] + rlevel[1],
            level[1] + level[2] + level[3] + bytes, level[2] + level[3] + bytes, level[3] + bytes});
  TLM_CHECK(f.size() == feature_count(space)) << "feature count " << f.size();
  return f;
}

}  // namespace tlm
