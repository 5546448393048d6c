// Features of a program for the learned cost model (tune/cost_model.h); what each step kind adds
// is its row of the step table (steps.cc). The model is trained per
// task, so every program of a task maps to a vector of the same length; nothing here needs Halide.
//
//   program_features(space, p)  per slot, the values in a scale-free form (log2 of tile factors
//                               and of the outer loop extent they leave, the small categorical
//                               values as numbers), then derived quantities the schedule's speed
//                               depends on: log2 tile products per level (S0..S3, R0, R1), the
//                               parallel extent, the vector width, the unroll limit, the register
//                               block's multiply-adds (S3 x R1) and the output tile footprints
//                               of levels 1..3 in bytes.
//   feature_count(space)        their number (constant per task)
//   cross_task_features(space, p, hw)  a vector of the same length for every task and machine
//                               (kCrossTaskFeatures), for a model trained across tasks (the
//                               zero-shot ranker, tune/ranker.h): the machine (vector lanes,
//                               cores, AVX-512), the task's shape (rule, stages, log2 extents of
//                               the tiled stage's vars and reduction dims, the epilogue), the
//                               program's levels per var and per reduction dim, the derived
//                               quantities above and the tiled stage's categorical decisions
//                               (compute level, loop order, packing, padding waste, rfactor),
//                               and the other stages' (where reductions and shared producers
//                               are computed, vectorized or rfactored reductions, their sizes);
//                               then the register block's traffic (SpaceOperand::index): per
//                               operand how it meets the vector (broadcast, contiguous, strided)
//                               and the vector loads one reduction step of the block issues,
//                               its L1 tile, and the block's loads per multiply-add and
//                               accumulators (what a 1 x 14 block pays against a 3 x 7 one).
//
// Ansor (and TenSet) featurize the lowered loop nest instead; the decisions determine that nest,
// so their values plus these few products carry the same information for a per-task model.
#pragma once

#include <vector>

#include "space/space.h"

namespace tlm {

// Bump when a feature changes meaning (saved cost models would misread vectors).
constexpr int kFeaturesVersion = 1;

std::vector<float> program_features(const TaskSpace& space, const Program& p);
size_t feature_count(const TaskSpace& space);

// Vars and reduction dims of the tiled stage the cross-task vector describes (more are left
// out; no task of the zoo has more); its length.
constexpr int kCrossTaskVars = 6, kCrossTaskRdims = 4;
// Bump when a cross-task feature changes meaning: saved rankers record it and are refused.
// 2: the other stages' decisions; 3: the register block's operand traffic.
constexpr int kCrossTaskFeaturesVersion = 3;
constexpr int kCrossTaskOperands = 3;  // operands whose traffic is described (in update order)
constexpr int kCrossTaskFeatures =
    3 + 9 + 5 * kCrossTaskVars + 3 * kCrossTaskRdims + 15 + 8 + 10 + 3 * kCrossTaskOperands + 3;
std::vector<float> cross_task_features(const TaskSpace& space, const Program& p,
                                       const HardwareInfo& hw);

}  // namespace tlm
