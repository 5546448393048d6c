// Private to src/space: the decoded form of a Program and the helpers the rules, the step table
// and the two emitters share.
//
//   Plan          one StagePlan per stage: what the Program's values mean for it (tile factors,
//                 compute level, vectorized var, ...). decode_plan() fills it slot by slot with
//                 the step table's `record` functions; the emitters read only the Plan.
//   vector_width  how wide a loop of a given extent is vectorized (rules below).
//   StepRow       the step table's row type: one row per StepKind in steps.cc, with columns
//                 implemented in steps.cc (options, record), describe.cc and features.cc.
//   emit_tiled / emit_rows  the two Halide emitters (apply_tiled.cc, apply_rows.cc).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "space/space.h"

namespace tlm {
namespace space_detail {

// Levels of the tiled anchor's ComputeAt slot: the accumulator is computed inside the output's
// tile loops of levels 0..c-1 (c = 1: after S0, 2: after S1, 3: after S2, leaving only the S3
// register block to its own update).
constexpr int kMinAnchorLevel = 1, kMaxAnchorLevel = 3;
// Pack levels (tiled anchor): none, the whole operand once per run (root: a layout change of
// the weights, paid once instead of per tile), or inside the innermost loop of level S0, S1 or
// R0 of the SSRSRS nest, wherever that loop is (the output's loops above the accumulator's
// level, the accumulator's update below it), or inside all S2 loops but the innermost. Packing
// at S0 with a tall S0 tile reuses one packed panel for all the S1 tiles below it; at R0, one
// panel per reduction chunk; at S2, one contiguous micro-panel per row of register blocks
// (GotoBLAS's packed B: no cache-set conflicts between its rows).
enum PackLevel : int {
  kPackNone = 0,
  kPackRoot = 1,
  kPackS0 = 2,
  kPackS1 = 3,
  kPackR0 = 4,
  kPackS2 = 5
};
// ComputeAt levels of the Rows rule. Reductions: root or tile; pure stages: inline, tile, root.
enum RowsLevel : int { kRowsInline = 0, kRowsTile = 1, kRowsRoot = 2 };

// Pad moduli (pad_options() in space.h chooses among them).
extern const std::vector<int64_t> kPadModuli;
inline int64_t round_up(int64_t e, int64_t m) { return (e + m - 1) / m * m; }

// Unroll limits offered by every Unroll slot: the product of unrolled extents never exceeds the
// largest, which keeps a program's unrolled body (and its compile time) bounded.
extern const std::vector<int64_t> kUnrollLimits;

struct StagePlan {
  std::vector<std::array<int64_t, 3>> tiles;  // per pure var: inner factors (f1, f2, f3); Rows:
                                              // only f3 is used (the inner tile extent)
  std::vector<int64_t> rtiles;                // per rdom dim: the inner factor (R1 extent)
  int compute = -1;                           // ComputeAt value (-1: no slot)
  int vec = -1;                               // vectorized var
  int parallel = 0;                           // fused parallel outer loops
  std::vector<int> pack;                      // per operand: PackLevel
  int64_t unroll = 0;                         // unroll limit
  int64_t rfactor = 0;                        // RFactor value
  int s2_inner = -1;                          // Order: the var innermost at level S2 (-1: var 0)
  std::vector<int64_t> padded;                // per pure var: the extent its tile chain divides
                                              // (the extent itself unless a Pad slot rounded it up)
};

struct Plan {
  std::vector<StagePlan> stages;
};

// A Plan with every stage's tiles set to "no split" (f = 1 per level, the full extent inner for
// Rows), ready to be filled by the slots' values.
Plan empty_plan(const TaskSpace& space);

// Fills `plan` from the complete slots of `values` (values.size() may stop inside a slot: the
// partial slot is left out). Returns the index of the first incomplete slot.
size_t decode_plan(const TaskSpace& space, const std::vector<int64_t>& values, Plan* plan);

// log10 of the space's size, estimated from random paths (steps.cc).
double estimate_log10_size(const TaskSpace& space);


// The vector width used for a loop of `extent` iterations: the whole loop when extent <= lanes,
// else the largest of lanes, lanes/2, lanes/4 that divides it (>= 2); 0 when none does.
int64_t vector_width(int64_t extent, int lanes);

// The S3 extent (innermost tile factor) of var v in a TiledAnchor plan.
inline int64_t inner_factor(const StagePlan& sp, int v) { return sp.tiles[v][2]; }

// What program_features (features.cc) accumulates over the slots: the per-slot numbers, and the
// tile factors and choices of the tiled stage the derived features are computed from.
struct FeatureState {
  int tiled_stage = -1;  // the anchor (TiledAnchor) or the output stage
  int stages = 0;
  std::vector<float> f;
  std::vector<std::array<float, 4>> lv;   // per spatial var: log2 S0..S3 factors
  std::vector<std::array<float, 2>> rlv;  // per rdom dim: log2 R0, R1 factors
  int vec_var = -1, parallel = 0, packs = 0;
  int64_t unroll = 0;
};

struct OptionCtx;  // steps.cc: what an options function may look at

// The step table: one row per StepKind (steps.cc), everything a kind knows. Adding a kind is one
// row plus its functions; a missing row or column is a build error (static_asserts in steps.cc).
struct StepRow {
  StepKind kind;
  const char* name;  // the token that starts the slot's header
  // The valid values at a position (the only place validity lives).
  std::vector<int64_t> (*options)(const OptionCtx&);
  // How the slot's values enter the decoded Plan the emitters read.
  void (*record)(const Slot&, const int64_t* values, Plan*);
  // The values in words (`tlm show`), describe.cc.
  std::string (*describe)(const TaskSpace&, const Slot&, const int64_t* values);
  // The cost model's features of the slot (features.cc): how many, and adding them.
  int (*feature_width)(const Slot&);
  void (*features)(const Slot&, const int64_t* values, FeatureState&);
  // Random sampling's prior (sample_program): the chance of the first option, the identity
  // ("no pad"), when a row's other options are mostly slower and slower to compile; 0 = uniform.
  double first_prior = 0;
};
const StepRow& step_row(StepKind k);

// describe.cc
std::string describe_tile(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_compute_at(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_pack(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_vectorize(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_parallel(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_unroll(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_rfactor(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_order(const TaskSpace&, const Slot&, const int64_t*);
std::string describe_pad(const TaskSpace&, const Slot&, const int64_t*);

// features.cc
int tile_feature_width(const Slot&);
int one_feature(const Slot&);
void tile_features(const Slot&, const int64_t*, FeatureState&);
void vectorize_features(const Slot&, const int64_t*, FeatureState&);
void parallel_features(const Slot&, const int64_t*, FeatureState&);
void unroll_features(const Slot&, const int64_t*, FeatureState&);
void rfactor_features(const Slot&, const int64_t*, FeatureState&);
void pack_features(const Slot&, const int64_t*, FeatureState&);
void value_feature(const Slot&, const int64_t*, FeatureState&);  // ComputeAt, Order
void pad_features(const Slot&, const int64_t*, FeatureState&);

// The range one argument of SpaceOperand::index spans when each var and reduction dim covers
// `sizes[v]` consecutive values (vars, then reduction dims): 1 + sum |coefficient| x (size - 1),
// a non-affine one counted as 1. features.cc (tiles) and row_split.cc (whole extents).
int64_t index_span(const std::vector<int64_t>& row, const std::vector<int64_t>& sizes);

void emit_tiled(LoweredTask& task, const TaskSpace& space, const Plan& plan);
void emit_rows(LoweredTask& task, const TaskSpace& space, const Plan& plan);

}  // namespace space_detail
}  // namespace tlm
