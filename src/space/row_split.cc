// Row splits of blocked convolutions (space.h, "Row splits"): which programs split the output's
// rows between threads, and the row-split variant of one that splits its channel blocks.
//
// A ConvNchwc output is [n, C/B, H, W, B]; in Halide order var 0 is the block B, 1 the width,
// 2 the rows, 3 the channel blocks. The TiledAnchor emitter (apply_tiled.cc) orders the S0 loops
// outermost-first by descending var and fuses the p outermost into the parallel loop, so the
// channel blocks' S0 loop is outermost and the thread pool's contiguous shares (spin_pool.h) give
// each thread a range of channel blocks unless that loop has extent 1 and the rows are fused in.
#include "space/space_internal.h"

namespace tlm {

using namespace space_detail;

namespace {

constexpr int kRowsVar = 2;
constexpr int kBlocksVar = 3;

// Where a slot's values start in a flattened program.
struct Positions {
  int blocks_tile = -1, blocks_pad = -1, parallel = -1;
};

Positions positions(const TaskSpace& space) {
  Positions at;
  int pos = 0;
  for (const Slot& s : space.slots) {
    if (s.stage == space.anchor && !s.reduction && s.var == kBlocksVar) {
      if (s.kind == StepKind::Tile) at.blocks_tile = pos;
      if (s.kind == StepKind::Pad) at.blocks_pad = pos;
    }
    if (s.kind == StepKind::Parallel) at.parallel = pos;
    pos += s.arity;
  }
  return at;
}

// The S0 extent of anchor var v under `plan`: what the three inner factors leave of its
// (possibly padded) extent.
int64_t s0_extent(const Plan& plan, int anchor, int v) {
  const StagePlan& sp = plan.stages[anchor];
  return sp.padded[v] / (sp.tiles[v][0] * sp.tiles[v][1] * sp.tiles[v][2]);
}

bool applies(const TaskSpace& space, const Program& p) {
  return space.blocked_conv && space.rule == SpaceRule::TiledAnchor &&
         space.stages[space.anchor].extents.size() == 5 && p.values.size() == program_length(space);
}

}  // namespace

bool splits_rows(const TaskSpace& space, const Program& p, int threads) {
  if (!applies(space, p)) return false;
  Plan plan;
  decode_plan(space, p.values, &plan);
  const int par = plan.stages.back().parallel;
  const auto& ext = space.stages[space.anchor].extents;
  if (ext[kRowsVar] <= 1 || s0_extent(plan, space.anchor, kRowsVar) < threads) return false;
  // With one channel block its loop is not tiled and the rows' S0 loop is the outermost.
  if (ext[kBlocksVar] <= 1) return par >= 1;
  return s0_extent(plan, space.anchor, kBlocksVar) == 1 && par >= 2;
}

bool row_split_variant(const TaskSpace& space, const Program& p, int threads, Program* out) {
  if (!applies(space, p) || splits_rows(space, p, threads)) return false;
  const Positions at = positions(space);
  if (at.blocks_tile < 0 || at.parallel < 0) return false;
  const int64_t extent = space.stages[space.anchor].extents[kBlocksVar];
  Program v = p;
  int64_t* f = v.values.data() + at.blocks_tile;  // f1 f2 f3: S1, S2, S3 factors
  if (extent % (f[1] * f[2])) return false;
  if (at.blocks_pad >= 0) v.values[at.blocks_pad] = 1;
  f[0] = extent / (f[1] * f[2]);
  int64_t& par = v.values[at.parallel];
  par = std::max<int64_t>(par, 2);
  if (!is_valid_program(space, v) || !splits_rows(space, v, threads)) return false;
  *out = v;
  return true;
}

int64_t row_split_shared_bytes(const TaskSpace& space) {
  if (!space.blocked_conv) return 0;
  const SpaceStage& st = space.stages.at(space.anchor);
  std::vector<int64_t> extents = st.extents;  // every var and reduction dim whole
  extents.insert(extents.end(), st.rextents.begin(), st.rextents.end());
  int64_t bytes = 0;
  for (const SpaceOperand& op : st.operands) {
    bool by_rows = false;
    int64_t elems = 1;
    for (const std::vector<int64_t>& row : op.index) {
      by_rows = by_rows || (row.size() > (size_t)kRowsVar && row[kRowsVar] != 0);
      elems *= index_span(row, extents);
    }
    if (!by_rows) bytes += 4 * elems;
  }
  return bytes;
}

namespace space_detail {

int64_t index_span(const std::vector<int64_t>& row, const std::vector<int64_t>& sizes) {
  int64_t span = 1;
  for (size_t v = 0; v < row.size() && v < sizes.size(); v++)
    span += (row[v] == kNotAffine ? 1 : row[v]) * (sizes[v] - 1);
  return span;
}

}  // namespace space_detail

}  // namespace tlm
