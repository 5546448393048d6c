// Private to the expert programs (expert.cc and its parts): the target a program is written
// towards and the writer that turns it into a valid point of the space.
//
//   Target, Roles     a register block, panel, reduction chunks, level and packing (Target) for
//                     an anchor whose vars play the roles of Roles (vectorized, row, channel block)
//   write_target      the program written slot by slot, each slot the valid option closest to
//                     the target (expert_writer.cc); `accumulators` the register block's vectors
//   nchwc_targets     the channel-blocked convolution's targets (expert_nchwc.cc), pointwise_target
//                     its MLAS pointwise loop order (AVX-512, unit-stride 1x1)
//   write_rows        a Rows task's program (expert_rows.cc)
//   closest, pick, parallel_loops, largest_divisor_upto   the choices every writer shares
//
// expert.cc (its reading guide says which kernel each target follows) holds the matrix-product
// and plain-convolution targets and the public functions of space.h.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {

// The defaults are the GEMM target (GotoBLAS-style, see targets()).
struct Target {
  int a = 2;             // vectors of the vectorized var in the register block
  int r = 6;             // rows (row var) in the register block
  int h = 1;             // convolution: output rows (the var after the width) in the block too
  int64_t acc_bytes = 0;  // convolution, > 0: the S2 tile (the accumulator's at level 2) takes
                          // the most output rows (a divisor of the height) whose accumulators (a
                          // vectors by the width tile written) fit in this many bytes; else 1 row
  int64_t panel = 128;   // vectorized var per S2 tile (S2 x S3), in elements
  int64_t rows = 64;     // row var per S1 tile (S2 x S3)
  int64_t kchunk = 128;  // the innermost reduction dim's R1
  std::vector<int64_t> rchunk;  // if set, per rdom dim: its R1 (0: whole); replaces kchunk
  int level = 2;         // ComputeAt
  int pack_first = kPackNone, pack_last = kPackS2;
  int64_t unroll = 32;
  bool scalar = false;   // no register block along the vectorized var (S3 = 1: nothing vectorized)
  bool pad_to_block = false;  // pad a var by any modulus whose rounded extent the block divides
  // How many outermost loops run fused and parallel: as parallel_loops says (kLoops); the
  // outermost alone when it has a trip per core (kOuterAlone, else kLoops); one loop more than
  // parallel_loops says, when there is one (kOneMore).
  enum Parallel { kLoops, kOuterAlone, kOneMore } parallel = kLoops;
};

struct Roles {
  bool conv = false;
  bool depthwise = false;  // a convolution without a channel reduction (taps only)
  int v = 0;   // vectorized var
  int u = -1;  // row var (-1: none of extent > 1)
  int cb = -1;  // channel-blocked convolution: the channel-block var, Target::a of it in the
                // register block (the vectorized var then holds one vector)
};

// The option closest to `want` on a log scale (the first of equals).
int64_t closest(const std::vector<int64_t>& opts, double want);
// `want` when it is among the options, else the first option.
int64_t pick(const std::vector<int64_t>& opts, int64_t want);
// How many outermost tile loops to fuse and run in parallel: the fewest whose trip counts
// (`trips`, per var, innermost first; vars of extent 1 are skipped) give every core a few
// tasks, all of them if never; none on one core.
int parallel_loops(const std::vector<int64_t>& extents, const std::vector<int64_t>& trips,
                   int cores);
int64_t largest_divisor_upto(int64_t n, int64_t cap);

// The program of `space` closest to target `t` for an anchor whose vars play `roles`; a valid
// point by construction. `accumulators`, if set: the written register block's vectors.
Program write_target(const TaskSpace& space, const HardwareInfo& hw, const Roles& roles,
                     const Target& t, int64_t* accumulators = nullptr);

// Channel-blocked convolution (ConvNchwc): the anchor's vars are (lane, width, height, channel
// block, batch) and the stage is named after the op.
bool is_nchwc(const SpaceStage& st);
Roles nchwc_roles(const SpaceStage& st);
// A dense blocked convolution with kernel taps (3x3, 7x7), not a 1x1 one.
bool nchwc_taps(const SpaceStage& st);
// MLAS's pointwise loop order (false for any task it does not fit; expert_nchwc.cc says which).
bool pointwise_target(const Roles& roles, const SpaceStage& st, Target* out);
std::vector<Target> nchwc_targets(const Roles& roles, const SpaceStage& st);

// Rows tasks (pools, softmax, layer norm, reductions, elementwise).
struct RowsTarget {
  bool whole_row = false;   // the vectorized var's whole extent in one tile (else ~4 vectors)
  int reduce_level = kRowsTile;
  bool rfactor = false;     // reductions rfactored along their innermost dim instead of
                            // vectorized along a pure var
};
Program write_rows(const TaskSpace& space, const HardwareInfo& hw, const RowsTarget& t);

}  // namespace space_detail
}  // namespace tlm
