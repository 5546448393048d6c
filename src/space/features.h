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

}  // namespace tlm
