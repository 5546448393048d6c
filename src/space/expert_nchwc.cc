// Expert targets of the channel-blocked convolution (ConvNchwc, [N, C/B, H, W, B];
// expert_internal.h): MLAS's NCHWc kernel shapes, its loop orders over whole output rows, and the
// forms long searches found on AVX-512 (and one on AVX2). Which measurement chose each is said
// where it is made.
#include <vector>

#include "space/expert_internal.h"

namespace tlm {
namespace space_detail {

bool is_nchwc(const SpaceStage& st) {
  return st.name.find("convnchwc") != std::string::npos && st.extents.size() == 5;
}

Roles nchwc_roles(const SpaceStage& st) {
  Roles r;
  r.conv = true;
  r.v = 0;
  r.u = st.extents[1] > 1 ? 1 : -1;
  r.cb = st.extents[3] > 1 ? 3 : -1;
  r.depthwise = st.rextents.size() == 2;  // taps only (no input-channel dims)
  return r;
}

bool nchwc_taps(const SpaceStage& st) {
  return st.rextents.size() == 4 && st.rextents[1] * st.rextents[2] > 1;
}

namespace {

struct Block {
  int a, r, h;  // channel blocks x pixels x rows
};

// A register block of b's channel blocks x pixels (x rows) with the accumulator per S1 tile
// (level 1), the whole reduction inside it, nothing packed, unrolled up to 128.
Target block_target(const Block& b, const SpaceStage& st) {
  Target t;
  t.a = b.a;
  t.r = b.r;
  t.h = b.h;
  t.level = 1;
  t.panel = st.lanes;
  t.rows = (int64_t)b.r * 8;
  t.kchunk = int64_t{1} << 20;
  t.pack_first = kPackNone;
  t.pack_last = kPackNone;
  t.unroll = 128;
  return t;
}

// A level-2 target whose register blocks walk an accumulator tile of whole output rows (as many
// as keep it within 16 KiB), nothing packed yet (MLAS's loop order and the taps-outside form).
Target row_walk_target(int a, int r, const Roles& roles, const SpaceStage& st) {
  Target t;
  t.a = a;
  t.r = r;
  t.level = 2;
  t.panel = st.lanes;
  t.rows = round_up(st.extents[roles.u], r);
  t.acc_bytes = 16 << 10;
  t.pack_first = kPackNone;
  t.pack_last = kPackNone;
  t.unroll = 128;
  return t;
}

}  // namespace

// MLAS's pointwise loop order for a dense blocked 1x1 convolution of unit stride on AVX-512
// (false for any other task): the input blocks summed 8 at a time (128 channels) outside the walk
// of 4 x 6 register blocks over a tile of whole output rows, so that a chunk's weights (4 blocks x
// 128 x 16, 32 KiB) stay in L1 for every pixel of the tile, and the weights of a channel-block
// group are read from L2 (or, inside a model, from memory) once per tile instead of once per
// register block. On ResNet-50's flattened 1x1 1024 -> 256 @ 14x14 (1 MiB of weights; Intel, two
// threads) it ran alone in 0.32 ms against the picked block program's 0.34, and inside the model in
// 0.36-0.37 against 0.48-0.50; on the training CNNs' 139 1x1 layers (hot, every expert in one
// sitting, the strided ones still among them) it was the fastest expert of 20 at two threads and
// 26 at one, mostly those with many input blocks (BENCHMARKS.md, session 46). 4 x 7 was slower
// than 4 x 6 on all of ResNet-50's 1x1 layers but one.
bool pointwise_target(const Roles& roles, const SpaceStage& st, Target* out) {
  if (roles.depthwise || st.lanes < 16 || st.rextents.size() != 4 || roles.u < 0) return false;
  if (st.rextents[1] * st.rextents[2] > 1) return false;  // kernel taps
  // Unit stride only: strided, the walk's pixels read every other input pixel; ResNet-50's two
  // stride-2 1x1 layers ran 11% and 23% slower this way inside the model at one thread.
  for (const SpaceOperand& op : st.operands)
    for (const std::vector<int64_t>& row : op.index)
      if (row.size() > (size_t)roles.u && row[roles.u] > 1) return false;
  Target t = row_walk_target(4, 6, roles, st);
  t.rows = int64_t{1} << 20;  // the whole width, however it is padded
  t.rchunk = {0, 0, 0, 8};
  *out = t;
  return true;
}

// Register blocks of a channel blocks x r pixels (x h rows for depthwise, whose windows overlap
// along the height too): a*r*h accumulators within the register file (32 zmm, 16 ymm) beside
// the broadcast input values and the weight vectors; r = 7 and 14 divide every width of the
// usual CNNs (112, 56, 28, 14, 7). The reduction whole inside the block (block lanes, taps,
// input blocks), unrolled up to the largest limit offered (128); depthwise blocks also unrolled to
// 32, dense ones also with the accumulator at the register block.
// AVX2: MLAS's NCHWc kernel shape first, 4 channel blocks x 3 pixels (each broadcast input value
// feeds 4 FMAs, each weight vector 3), then 4 x 2: on Zen 3 the better of the two ran eight
// dense convolutions of the training ResNet-50 @192 1.02-1.67x faster than the 2 x 6 block
// (1.3x or more on seven), 4 x 2 best on the stem (3 input channels, 7 x 7 stride 2 at 96 x 96)
// (BENCHMARKS.md, "MLAS's block on AVX2");
// 2 x 7 keeps an exact block for the widths of 7, and 1 x 12 becomes 1 x 7 there, the fastest
// block of GoogLeNet's four 7-wide dense layers (1.04-1.9x ahead of 2 x 7 and 4 x 1).
std::vector<Target> nchwc_targets(const Roles& roles, const SpaceStage& st) {
  std::vector<Block> blocks;
  if (roles.depthwise)
    blocks = {{1, 7, 2}, {1, 14, 1}, {2, 7, 1}, {1, 8, 2}};
  else if (st.lanes >= 16)
    blocks = {{4, 6, 1}, {4, 7, 1}, {2, 12, 1}, {2, 14, 1}, {3, 8, 1}, {1, 14, 1}};
  else
    blocks = {{4, 3, 1}, {4, 2, 1}, {2, 6, 1}, {2, 7, 1}, {1, 12, 1}};
  std::vector<Target> out;
  for (const Block& b : blocks) {
    Target t = block_target(b, st);
    out.push_back(t);
    if (roles.depthwise) {
      t.unroll = 32;
      out.push_back(t);
      // Each core its own channel blocks (the outermost loop alone parallel): the outer two
      // loops fused (blocks x rows, parallel_loops' choice for few blocks) give each parallel
      // iteration a tile of 1-2 rows, whose padded input stage then recomputes the kernel's
      // halo rows every time. On Intel (two threads) the language model's greedy program with the
      // blocks alone parallel ran MobileNet-V2's 32-channel 3x3 depthwise layers 1.3-1.8x faster
      // than every expert, with the same tile 1.3x (BENCHMARKS.md, session 44).
      t.parallel = Target::kOuterAlone;
      out.push_back(t);
      t.unroll = 128;  // pushed below: the blocks alone parallel, unrolled to 128
    } else {
      // The same block with the accumulator at the register block (level 3): bias, residual and
      // activation applied as each block is stored, not in a second pass over an S1 tile (up to
      // 15% faster at two threads on the training ResNets' 56x56 and 48x48 layers, BENCHMARKS.md
      // "Inside the model at two threads"; the unroll limit, 32 or 128, made no difference).
      t.level = 3;
    }
    out.push_back(t);
  }
  // Dense with kernel taps (3x3, 7x7): MLAS's loop order as well. The accumulators of a
  // tile of whole output rows (the register block walking it) live in L1 while the input channel
  // blocks are summed one or two at a time outside the walk, so each chunk of weights (4 blocks x
  // 9 taps x 8 x 8, 9 KiB) stays in L1 for every pixel of the tile instead of streaming from L2
  // for every register block; the tile's rows are the most (a divisor of the height) that keep
  // its accumulators within 16 KiB. The padded input is copied (one input block's rows per
  // chunk, or all of it once per run), so the block's loads carry no boundary test: read where
  // it lies through the padding, every broadcast input value is a clamped load and a select. On
  // Zen 3 the best of these ran 17 of the 18 3x3 convolutions of the training ResNet-18 @224 and
  // ResNet-50 @192 faster than the best of the blocks above (1.28x geomean, up to 1.9x), with
  // 4 x 3, 4 x 2 or 1 x 7 (BENCHMARKS.md, "MLAS's loop order"); 1x1 convolutions (nothing to
  // pad, few weights) ran 7-12% slower without the copy, so they are left out. On AVX-512 (4
  // blocks x 9 taps x 16 x 16: 36 KiB of weights per input block, still an L1's worth on Intel)
  // the best of these beat the best of the other experts on 34 of 47 such tasks of the training
  // CNNs at two threads on an Intel Xeon (geomean 1.05x, up to 1.32x) and on 41 of 47 at one
  // (1.09x, up to 1.38x), measured in one sitting (BENCHMARKS.md, session 42).
  const bool taps = nchwc_taps(st);
  if (!roles.depthwise && taps && roles.u >= 0) {
    for (const Block& b : blocks) {
      if (b.a == 2) continue;  // 2 x 6 and 2 x 7: never the fastest of these (18 tasks)
      for (int64_t chunk : {1, 2}) {
        // Without the copy the best of these ran 1.33x slower on a 28x28 layer.
        Target t = row_walk_target(b.a, b.r, roles, st);
        t.kchunk = chunk;
        t.pack_first = chunk == 1 ? kPackR0 : kPackRoot;
        out.push_back(t);
      }
    }
    // AVX2: MLAS's kernel order inside the walk as well -- the kernel rows (r2) outside the
    // register block, each row's taps and lanes inside it --, 4 x 2, one input block at a time,
    // the padded input copied once per run. A 1,056-measurement search of ResNet-50's weakest
    // one-thread layers on Zen 3 found this form on the 3x3 512 @ 7x7 (2.50-2.54 ms against the
    // best expert's 2.83-2.96, the same sitting). Among 8 such variants (4 x 3 and 4 x 2; the
    // kernel rows or columns outside; the copy once per run or per input block) on the 27 dense
    // 3x3 layers of the training ResNet-18 @224 and ResNet-50 @192 and @256 (Zen 3, every expert
    // of those tasks measured in one sitting), this one was the fastest expert on 14 at one thread;
    // alone it makes the best expert 1.012x faster in the geometric mean at one thread (up to
    // 1.054x, the 7x7 layers), 1.004x at two (BENCHMARKS.md, session 66).
    if (st.lanes < 16 && st.rextents[2] > 1) {
      Target t = row_walk_target(4, 2, roles, st);
      t.rchunk = {0, 0, 1, 1};
      t.pack_first = kPackRoot;
      out.push_back(t);
    }
  }
  // AVX-512, dense: the block lanes' reduction (16 input channels of a block) in chunks, so
  // that the chunk's loop is unrolled with the register block (S3 x R1 within the unroll limit
  // of 128: 4 x 6 x 16 is not, 4 x 6 x 4 is) and each weight vector and broadcast input is a
  // constant offset. 64-trial searches of ResNet-50's losing layers on Intel found programs
  // 8-20% faster than every other expert with this form (BENCHMARKS.md, session 42, "A short
  // search finds what the experts lack"): 2 x 7 with chunks of 8 on the 3x3 256 @ 14x14,
  // 1 x 14 with 4 or 8 on the flattened 1x1 256 -> 1024, 4 x 6 with 2 and the input blocks
  // outside the block on the flattened 1x1 1024 -> 256. The accumulator per register block.
  // On the dense blocked convolutions of the nine blocked training CNNs (204 tasks, every
  // expert measured in one sitting on Intel, BENCHMARKS.md session 43) one of these was the
  // fastest expert of 125 at two threads and 129 at one; adding them makes the best expert
  // 3-4% faster in the geometric mean, up to 1.25x.
  if (!roles.depthwise && st.lanes >= 16 && st.rextents.size() == 4) {
    const int64_t lanes = st.rextents[0];
    std::vector<Block> cblocks = blocks;
    cblocks.push_back({2, 7, 1});
    cblocks.push_back({4, 4, 1});
    for (const Block& b : cblocks) {
      int64_t c = 1;
      while (c * 2 < lanes && lanes % (c * 2) == 0 && b.a * b.r * c * 2 <= 128) c *= 2;
      if (c <= 1) continue;
      Target t = block_target(b, st);
      t.level = 3;
      std::vector<std::vector<int64_t>> chunks = {{c, 0, 0, 0}};
      if (b.a == 4 && b.r == 6)  // the 1x1 1024 -> 256's form: input blocks outside, chunks of 2
        chunks.push_back({2, 0, 0, 1});
      for (const std::vector<int64_t>& ch : chunks) {
        t.rchunk = ch;
        out.push_back(t);
        // With taps, also with the padded input copied once per run (root): read where it
        // lies, the taps' boundary tests split the block's loops into versions and its
        // accumulators go to the stack between them; from the copy the whole tap x lane chunk
        // runs inside the register block with none. On ResNet-50's 3x3 256 @ 14x14 at one
        // thread on Intel (model 167) the root copy took the best program (2 x 7, chunks of 8)
        // from 1.53-1.56 ms to 1.39-1.43, below ORT's 1.45 (a copy inside the S0 tile or R0 loop
        // gained 1-6%; BENCHMARKS.md, session 56).
        if (taps) {
          Target r = t;
          r.pack_first = kPackRoot;
          out.push_back(r);
        }
        // With taps, also one tap loop (kernel row or column) split out of the inner reduction:
        // the form of session 42's search winner on ResNet-50's 3x3 256 @ 14x14 (2 x 7, chunks
        // of 8, 0.591 ms against the best expert's 0.72). As variants on the 53 3x3 layers of
        // the blocked training ResNets and GoogLeNet (Intel, two threads, one run) one of these
        // was the fastest on 26, by more than 3% on 13, up to 1.24x; the row split fastest on
        // 10, the column split on 16 (BENCHMARKS.md, session 43, "The 14x14 winner's other half").
        // Each also with one more loop parallel (the channel blocks x rows where the blocks
        // alone would do): ResNet-50's 3x3 256 @ 14x14 column-split 2 x 7 ran 0.73 ms instead of
        // 0.85 (Intel, two threads); on the 53 training 3x3 layers the variant was slower for
        // half the programs but made the best tap-split program faster on 14 tasks, by more
        // than 3% on 12, up to 1.17x (BENCHMARKS.md, session 44); with every expert measured
        // in one sitting, a twin was the fastest expert on 22 of the 53, the best expert 2.1%
        // faster in the geometric mean, up to 1.14x (session 45).
        for (int d : {1, 2}) {
          if (st.rextents[d] < 2) continue;
          t.rchunk[d] = 1;
          out.push_back(t);
          t.parallel = Target::kOneMore;
          out.push_back(t);
          t.parallel = Target::kLoops;
          t.rchunk[d] = ch[d];
        }
      }
    }
    Target pw;
    if (pointwise_target(roles, st, &pw)) out.push_back(pw);
    // With taps: the tap loops outside the channel reduction and the register blocks walking
    // the accumulator tile of whole rows (as MLAS's loop order above, but each tap's weights of
    // all input blocks per walk), the padded input copied per S0 tile: the 3x3 128 @ 28x28's
    // best program at two threads (4 x 4). (With the lanes in chunks of 2 as well, its best
    // form at one thread, it was never the fastest on the training ResNets.)
    if (taps && roles.u >= 0)
      for (const Block& b : std::vector<Block>{{4, 4, 1}, {4, 6, 1}}) {
        Target t = row_walk_target(b.a, b.r, roles, st);
        t.rchunk = {0, 1, 1, 0};
        t.pack_first = kPackS0;
        out.push_back(t);
      }
  }
  return out;
}

}  // namespace space_detail
}  // namespace tlm
