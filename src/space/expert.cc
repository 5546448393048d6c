// Expert programs: a handful of points of a task's space written from what fast CPU kernels do
// (GotoBLAS / MLAS register blocking for tiled anchors; the usual vectorized loops for the rest),
// without measuring.
//
// Tiled anchors. A target is a register block -- `a` vectors of the vectorized var by `r` rows of
// the row var, a*r accumulators that fit the register file -- plus a panel size, a reduction
// chunk, the accumulator's level and where each operand is packed. The program is written slot by
// slot, and at each slot the valid option closest to the target is taken (a tile's three factors
// are chosen together among every valid chain), so every expert program is a valid point by
// construction: next_options() is the only source of values, as for sampling and the model.
//
// Roles of the anchor's vars (Halide order, innermost first):
//   matmul / gemm / batch matmul   vectorized var d0 (output columns), row var d1, the rest batch
//   convolution (N C spatial...)   vectorized var = channels (index rank-2), row var d0 (width),
//                                  the other spatial vars and the batch in outer tiles
//   depthwise convolution          also: vectorized var d0 (width, contiguous in NCHW: no packed
//                                  copy needed), row var d1 (height), the channels outside; the
//                                  width padded to whole vectors or not
//   other convolutions, rows of    also as a matrix product along the width: vectorized var d0,
//   at least a vector              the register block's rows are output channels, the width
//                                  padded to the column block (MobileNet's pointwise layers)
//   channel-blocked convolution    (ConvNchwc, [N, C/B, H, W, B]) MLAS's NCHWc kernel: vectorized
//                                  var d0 (the block lane, one whole vector), row var d1 (width),
//                                  a register block of channel blocks (d3) x pixels (x rows), the
//                                  whole reduction inside it, nothing packed (input and weights
//                                  are stored as the kernel reads them); each block once with the
//                                  accumulator per S1 tile and once per register block; a strided
//                                  1x1's also over its input copied densely once per run
//
// Rows tasks (pools, softmax, layer norm, reductions, elementwise): the output's contiguous var
// vectorized (a few vectors, or the whole row, per tile), enough outer loops parallel, the
// reductions computed in the tile or at root, vectorized along a pure var or rfactored along
// their innermost reduction; pure stages read twice computed per tile, the others inlined.
// Used to seed measurement (the loop's expert pass, `tlm generate --expert`) and as zero-shot
// candidates, never as a claim about speed: every expert program is measured and checked like
// any other.
//
// Files: this one holds the matrix-product and plain-convolution targets and space.h's expert
// functions; expert_nchwc.cc the channel-blocked convolution's targets, expert_rows.cc the Rows
// tasks' programs, expert_writer.cc the writer (a Target to a program), expert_internal.h what
// they share.
#include <algorithm>
#include <set>

#include "space/expert_internal.h"

namespace tlm {
namespace space_detail {
namespace {

Roles roles_of(const TaskSpace& space) {
  const SpaceStage& st = space.stages[space.anchor];
  Roles r;
  const int n = (int)st.extents.size();
  r.conv = st.name.find("conv") != std::string::npos && n >= 3;
  r.v = r.conv && st.extents[n - 2] >= 2 ? n - 2 : 0;
  for (int i = 0; i < n; i++)
    if (i != r.v && st.extents[i] > 1) {
      r.u = i;
      break;
    }
  if (st.extents[r.v] < 2)
    for (int i = 0; i < n; i++)
      if (i != r.u && st.extents[i] >= 2) r.v = i;
  // Depthwise: the input-channel reduction (the last rdom dim) has one channel per group.
  r.depthwise = r.conv && !st.rextents.empty() && st.rextents.back() == 1;
  return r;
}

// A convolution as a matrix product along the width (NCHW's contiguous var): vectorized var d0
// (output columns), the rows of the register block are output channels, each input value a
// vector of columns loaded where it lies and each weight a broadcast. The output is written
// along its contiguous var, so no channels-innermost accumulator is transposed on the way out.
Roles columns_roles(const SpaceStage& st) {
  Roles r;
  r.conv = true;
  r.v = 0;
  const int n = (int)st.extents.size();
  r.u = n >= 3 && st.extents[n - 2] > 1 ? n - 2 : -1;
  return r;
}

// Depthwise convolution along the width: vectorized var d0, rows d1, the channels outside.
Roles width_roles(const SpaceStage& st) {
  Roles r;
  r.conv = true;
  r.depthwise = true;
  r.v = 0;
  r.u = st.extents.size() > 1 && st.extents[1] > 1 ? 1 : -1;
  return r;
}

// Channels-innermost register blocks over output columns; the padded input packed per S0 tile,
// the weights once (a layout change paid once per run); the taps unrolled.
Target conv_target(int a, int r, int lanes) {
  Target t;
  t.a = a;
  t.r = r;
  t.level = 1;
  t.panel = (int64_t)a * lanes * 2;
  t.rows = (int64_t)r * 4;
  t.kchunk = 64;
  t.pack_first = kPackS0;
  t.pack_last = kPackRoot;
  t.unroll = 128;
  return t;
}

// `l2_bytes`, `l3_bytes`: the machine's per-core L2 and last-level cache (which B matrices count
// as large).
// The size of a matrix product's B per batch, in bytes: the reduction by the vectorized var's
// extent, 4-byte floats.
int64_t weight_bytes(const Roles& roles, const SpaceStage& st) {
  int64_t b_bytes = 4 * st.extents[roles.v];
  for (int64_t r : st.rextents) b_bytes *= r;
  return b_bytes;
}

// Register blocks by vector width: a*r accumulators leave room for the broadcast row values
// and the B vectors (32 zmm registers for AVX-512, 16 ymm for AVX2, 16 xmm for SSE).
std::vector<std::pair<int, int>> register_blocks(int lanes) {
  return lanes >= 16 ? std::vector<std::pair<int, int>>{{4, 4}, {2, 8}, {2, 6}, {1, 8}}
                     : std::vector<std::pair<int, int>>{{2, 6}, {2, 4}, {1, 8}, {3, 4}};
}

// B larger than the L2: B's micro-panel pair (2 a vectors wide) copied once per S0 tile
// (kPackS0) and read, K in long chunks (512, or the closest divisor: 384 of 768), by every row
// block of the tile (rows: 8 register blocks, the S1 tiles walking all the rows), so each element
// of B comes from memory once and then from L1/L2 -- the form of an 80-trial search's best
// program for GPT-2's 768 x 50257 logits on Intel (session 41). In one sitting there
// (BENCHMARKS.md, session 42): 36 ms against the other forms' 47 on those logits, 1.13-1.36x
// faster on every training LM head, slower on the 2-9 MB layers of BERT, GPT-2 and LLaMA (the
// ranker leaves it there). With kPackRoot: the same over B packed once when the model loads,
// blocked by the register block's width (apply_tiled.cc: blocked past the extent, the last block
// zero-filled), each micro-panel contiguous and no copy per run.
Target streaming_target(int a, int r, int lanes, int pack) {
  Target t;
  t.a = a;
  t.r = r;
  t.level = 2;
  t.pack_last = pack;
  t.kchunk = 512;
  t.panel = (int64_t)a * lanes * 2;
  t.rows = (int64_t)r * 8;
  t.unroll = 128;
  t.pad_to_block = true;  // 50257 columns: padded to whole blocks of 2 or 4 vectors too
  return t;
}

std::vector<Target> targets(const Roles& roles, const SpaceStage& st, int64_t l2_bytes,
                            int64_t l3_bytes) {
  const int64_t b_bytes = weight_bytes(roles, st);
  std::vector<Target> out;
  for (auto [a, r] : register_blocks(st.lanes)) {
    if (roles.conv) {
      Target t = conv_target(a, r, st.lanes);
      out.push_back(t);
      // Nothing packed: repacking the weights every run costs as much as the arithmetic when
      // the feature map is small and the weights are large.
      t.pack_first = kPackNone;
      t.pack_last = kPackNone;
      t.kchunk = 32;
      out.push_back(t);
    } else {
      // GotoBLAS (Target's defaults): K chunks outside the register blocks, B packed per
      // micro-panel at S2 (stays in L1 while the blocks walk down the rows), or per K chunk.
      Target t;
      t.a = a;
      t.r = r;
      out.push_back(t);
      t.level = 1;
      t.pack_last = kPackR0;
      t.kchunk = 256;
      t.panel = 256;
      out.push_back(t);
      // MLAS's SGEMM with a constant B: B packed once (a constant operand packed at root is
      // packed when the model loads), each register block summing the whole reduction (level 3)
      // over a panel of 8 row blocks. The long searches' best program of every BERT-base and
      // GPT-2 dense task on Zen 5 has this form (BENCHMARKS.md, session 27), 15-20% ahead of
      // the two forms above. A B larger than the last-level cache (GPT-2's 768 x 50257 logits)
      // is packed per S0 panel instead, as the search's best program for it is: the panel is
      // copied into L2 once and read by every row block, where the whole packed B would stream
      // from memory at each one.
      t.level = 3;
      t.pack_last = b_bytes > l3_bytes ? kPackS0 : kPackRoot;
      t.kchunk = 64;
      t.panel = (int64_t)a * st.lanes * 4;
      t.rows = (int64_t)r * 8;
      t.unroll = 128;
      out.push_back(t);
      // MLAS's SGEMM loop itself, with B packed once: K in chunks of 256 outside the register
      // blocks, the accumulator tile of one micro-panel's rows in memory (level 2), so the
      // micro-panel's chunk (256 x a vectors, 16-24 KiB, contiguous in the copy packed when the
      // model loads) stays in L1 while the register blocks walk down the rows. Where the
      // reduction is long the level-3 form streams its micro-panel from L2 at every block
      // (GPT-2's 3072 -> 768 layer: 8-10% faster this way inside the model at one thread on
      // Zen 3, BENCHMARKS.md, session 40). Not for a B larger than the last-level cache.
      if (b_bytes <= l3_bytes) {
        t.level = 2;
        t.pack_last = kPackRoot;
        t.kchunk = 256;
        t.panel = (int64_t)a * st.lanes;  // rows as the level-3 form's: 8 register blocks
        t.unroll = 32;
        out.push_back(t);
      }
      // B larger than the L2: the streaming form (streaming_target); over B packed once too
      // where B is larger than the last-level cache (GPT-2's logits at one thread on Zen 3:
      // 111-114 ms against 120-124 for the search's best copying form; BENCHMARKS.md, session
      // 60). The 2-9 MB layers have MLAS's loop over a root-packed B above.
      if (b_bytes > l2_bytes) out.push_back(streaming_target(a, r, st.lanes, kPackS0));
      if (b_bytes > l3_bytes) out.push_back(streaming_target(a, r, st.lanes, kPackRoot));
    }
  }
  // A matrix-vector product (one row, e.g. a classifier on a pooled vector): besides the blocks
  // above, two output columns per step and the reduction innermost in unit steps, not
  // vectorized -- a weight matrix stored [N, K] is then read along K, where it is contiguous;
  // the vector packed once per S0 tile (8 of them).
  if (!roles.conv && roles.u < 0) {
    Target t;
    t.scalar = true;
    t.panel = 2;
    t.kchunk = 1;
    t.level = 3;
    t.pack_first = kPackS0;
    t.pack_last = kPackNone;
    t.unroll = 0;
    out.push_back(t);
  }
  // Convolutions whose width has no multiple of the block (7, 14, 28): an exact row of width
  // (a divisor) times up to two output rows, so small late-stage feature maps fill the
  // registers without padding; the weights packed once or not at all.
  if (roles.conv && roles.u >= 0 && st.extents[roles.u] % 8 != 0) {
    const int64_t regs = st.lanes >= 16 ? 24 : 12;
    for (int a : {1, 2}) {
      const int r = (int)largest_divisor_upto(st.extents[roles.u], 8);
      Target t = conv_target(a, r, st.lanes);
      t.h = (int)std::max<int64_t>(1, std::min<int64_t>(2, regs / (a * r)));
      t.rows = r;
      out.push_back(t);
      t.pack_last = kPackNone;
      out.push_back(t);
    }
  }
  // Depthwise: few multiply-adds per loaded value, so a small block of one channel vector by
  // a row (a divisor of the width) by two output rows, whose 3x3 windows overlap.
  if (roles.depthwise && roles.u >= 0) {
    const int r = (int)largest_divisor_upto(st.extents[roles.u], 8);
    Target t = conv_target(1, r, st.lanes);
    t.h = 2;
    t.panel = st.lanes;
    t.rows = r;
    out.push_back(t);
    t.pack_last = kPackNone;
    out.push_back(t);
  }
  return out;
}

// Depthwise along the width (width_roles): one vector of output columns by 4 or 8 rows, the
// whole width in one tile, nothing packed (the input rows are read where they lie), the taps
// unrolled.
std::vector<Target> width_targets() {
  std::vector<Target> out;
  for (int r : {4, 8}) {
    Target t;
    t.a = 1;
    t.r = r;
    t.level = 1;
    t.panel = int64_t{1} << 20;
    t.rows = r;
    t.pack_first = kPackNone;
    t.pack_last = kPackNone;
    t.unroll = 128;
    out.push_back(t);
  }
  return out;
}

// Along the width (columns_roles): conv_target's blocks, a vectors of output columns by r output
// channels, with one block of columns per panel, the channel reduction in chunks of 128, the
// input unpacked and the weights packed once or not at all.
std::vector<Target> columns_targets(int lanes) {
  std::vector<Target> out;
  const std::vector<std::pair<int, int>> blocks =
      lanes >= 16 ? std::vector<std::pair<int, int>>{{2, 12}, {2, 8}, {1, 16}, {4, 6}}
                  : std::vector<std::pair<int, int>>{{2, 6}, {2, 4}, {1, 12}};
  for (auto [a, r] : blocks) {
    Target t = conv_target(a, r, lanes);
    t.panel = (int64_t)a * lanes;
    t.kchunk = 128;
    t.pack_first = kPackNone;  // the input is read where it lies
    t.pad_to_block = true;
    out.push_back(t);
    t.pack_last = kPackNone;
    out.push_back(t);
  }
  return out;
}

}  // namespace
}  // namespace space_detail

using namespace space_detail;

using namespace space_detail;

bool pointwise_expert(const TaskSpace& space, const HardwareInfo& hw, Program* out) {
  if (space.rule == SpaceRule::Rows || space.anchor < 0) return false;
  const SpaceStage& st = space.stages[space.anchor];
  if (!is_nchwc(st)) return false;
  const Roles roles = nchwc_roles(st);
  Target t;
  if (!pointwise_target(roles, st, &t)) return false;
  *out = write_target(space, hw, roles, t);
  return true;
}

bool streamed_root_expert(const TaskSpace& space, const HardwareInfo& hw, const Program& p) {
  if (space.rule == SpaceRule::Rows || space.anchor < 0) return false;
  const SpaceStage& st = space.stages[space.anchor];
  if (is_nchwc(st)) return false;
  const Roles roles = roles_of(space);
  if (roles.conv || weight_bytes(roles, st) <= hw.l3_bytes) return false;
  for (auto [a, r] : register_blocks(st.lanes))
    if (write_target(space, hw, roles, streaming_target(a, r, st.lanes, kPackRoot)) == p)
      return true;
  return false;
}

bool copy_twins(const TaskSpace& space, const Program& a, const Program& b) {
  if (a.values.size() != b.values.size()) return false;
  size_t pos = 0;
  int diffs = 0;
  bool pack = false;
  for (const Slot& s : space.slots)
    for (int k = 0; k < s.arity && pos < a.values.size(); k++, pos++) {
      if (a.values[pos] == b.values[pos]) continue;
      if (++diffs > 1) return false;
      const int64_t lo = std::min(a.values[pos], b.values[pos]);
      const int64_t hi = std::max(a.values[pos], b.values[pos]);
      pack = s.kind == StepKind::Pack && lo == kPackNone && hi == kPackRoot;
    }
  return diffs == 1 && pack;
}

std::vector<Program> expert_programs(const TaskSpace& space, const HardwareInfo& hw) {
  std::vector<Program> out;
  std::set<std::vector<int64_t>> seen;
  auto add = [&](Program p) {
    if (seen.insert(p.values).second) out.push_back(std::move(p));
  };
  if (space.rule == SpaceRule::Rows) {
    if (program_length(space) == 0) return out;  // one program only: nothing to choose
    for (bool whole : {false, true})
      for (int level : {kRowsTile, kRowsRoot})
        for (bool rf : {false, true}) add(write_rows(space, hw, {whole, level, rf}));
    return out;
  }
  if (space.anchor < 0) return out;
  const SpaceStage& st = space.stages[space.anchor];
  if (is_nchwc(st)) {
    const Roles roles = nchwc_roles(st);
    // A block the extents cannot take (no 3 pixels in a width of 7, no 4 channel blocks among 5)
    // is written with the closest factors, which can overflow the register file (4 x 7 = 28
    // ymm accumulators: a spill at every step) or, on AVX2, leave too few chains to hide the
    // FMA latency (4 x 1: two FMA pipes x 4 cycles want 8; on GoogLeNet's 7-wide layers 4 x 1
    // ran 1.04-1.9x slower than 1 x 7): both are left out, the short ones (below 6) only when a
    // block of at least 6 exists. (Not on AVX-512: among the Zen 5 expert records a dense block
    // of fewer than 8 was the fastest in 3 of 428 tasks.) Dense convolutions only: a
    // depthwise block reads its weights as it goes, and 16 ymm accumulators (1 x 8 x 2) were the
    // fastest expert of 3 depthwise tasks on Zen 3.
    const bool dense = !roles.depthwise;
    const int64_t max_acc = st.lanes >= 16 ? 31 : 15;
    const int64_t min_acc = dense && st.lanes < 16 ? 6 : 1;
    std::vector<std::pair<Program, int64_t>> written;  // with its accumulators
    int64_t most = 0;
    // A strided 1x1 convolution (space.strided_input: ResNet's downsampling shortcuts over the
    // flattened pixels of every other input pixel) -- each form also over its input copied
    // densely once per run: the register block's broadcasts then read consecutive pixels instead
    // of every other cache line. On Intel (model 167) at one thread the copy made the held-out
    // ResNet-50's 512 -> 1024 shortcut's program 1.62-1.72 -> 1.22-1.24 ms, and the best expert
    // faster on 7 of the 8 strided layers of the blocked training ResNets (geomean 1.05x, up to
    // 1.20x). On several cores the copy's own parallel loop costs what small layers gain: at two
    // threads the copy was 0.6-0.8x on all four of ResNet-18's (13 MFLOP or less), 0.94-1.18x on
    // ResNet-50's at 128 and 192 (67 and 151 MFLOP), 1.14-1.2x inside the model on the held-out
    // ResNet-50's (205 MFLOP) (BENCHMARKS.md, session 70): there only from 50 MFLOP on.
    double flops = 2;
    for (int64_t e : st.extents) flops *= (double)e;
    for (int64_t e : st.rextents) flops *= (double)e;
    const bool copy_strided =
        space.strided_input && dense && !nchwc_taps(st) && (hw.cores <= 1 || flops >= 50e6);
    bool taps = dense && nchwc_taps(st);
    if (roles.depthwise)
      for (int64_t e : st.rextents) taps = taps || e > 1;
    const bool copy_converted = space.converted_input && taps;
    for (Target form : nchwc_targets(roles, st)) {
      // An input converted from the plain layout inside the task (space.converted_input) is
      // copied at root when the kernel has taps: read in place, every tap of the register block
      // gathers its lanes from the plain tensor (16 channel planes apart) again. ConvNeXt-T's 7x7
      // depthwise layers ran 10x slower than tlm's default schedule with the in-place experts;
      // a 1x1 layer reads each input once per output tile, and there the copy's extra pass cost
      // EfficientNet-B0 15% end to end (BENCHMARKS.md, session 71).
      if (copy_converted && form.pack_first == kPackNone) form.pack_first = kPackRoot;
      std::vector<Target> forms = {form};
      if (copy_strided && form.pack_first == kPackNone) {
        forms.push_back(form);
        forms.back().pack_first = kPackRoot;
      }
      for (const Target& t : forms) {
        int64_t acc = 0;
        Program p = write_target(space, hw, roles, t, &acc);
        if (dense && acc > max_acc) continue;
        most = std::max(most, acc);
        written.emplace_back(std::move(p), acc);
      }
    }
    for (auto& [p, acc] : written)
      if (acc >= std::min(min_acc, most)) add(std::move(p));
    return out;
  }
  const Roles roles = roles_of(space);
  for (const Target& t : targets(roles, st, hw.l2_bytes, hw.l3_bytes))
    add(write_target(space, hw, roles, t));
  if (roles.depthwise && st.extents[0] >= st.lanes)
    for (bool pad : {false, true})
      for (Target t : width_targets()) {
        // Padded: a width without a multiple of the vector (28, 56 for 16 lanes) is computed in
        // whole vectors, the last one shifted inwards, instead of in short ones.
        t.pad_to_block = pad;
        add(write_target(space, hw, width_roles(st), t));
      }
  if (roles.conv && !roles.depthwise && st.extents[0] >= st.lanes)
    for (const Target& t : columns_targets(st.lanes))
      add(write_target(space, hw, columns_roles(st), t));
  return out;
}

}  // namespace tlm
