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
//                                  accumulator per S1 tile and once per register block
//
// Rows tasks (pools, softmax, layer norm, reductions, elementwise): the output's contiguous var
// vectorized (a few vectors, or the whole row, per tile), enough outer loops parallel, the
// reductions computed in the tile or at root, vectorized along a pure var or rfactored along
// their innermost reduction; pure stages read twice computed per tile, the others inlined.
// Used to seed measurement (the loop's expert pass, `tlm generate --expert`) and as zero-shot
// candidates, never as a claim about speed: every expert program is measured and checked like
// any other.
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {
namespace {

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

double dist(int64_t got, double want) {
  return std::fabs(std::log2((double)std::max<int64_t>(got, 1) / std::max(want, 1.0)));
}

int64_t closest(const std::vector<int64_t>& opts, double want) {
  int64_t best = opts.front();
  for (int64_t o : opts)
    if (dist(o, want) < dist(best, want) - 1e-9) best = o;
  return best;
}

// `want` when it is among the options, else the first option.
int64_t pick(const std::vector<int64_t>& opts, int64_t want) {
  return std::find(opts.begin(), opts.end(), want) != opts.end() ? want : opts.front();
}

// How many outermost tile loops to fuse and run in parallel: the fewest whose trip counts
// (`trips`, per var, innermost first; vars of extent 1 are skipped) give every core a few
// tasks, all of them if never; none on one core.
int parallel_loops(const std::vector<int64_t>& extents, const std::vector<int64_t>& trips,
                   int cores) {
  int64_t prod = 1;
  int p = 0;
  for (int i = (int)extents.size() - 1; i >= 0; i--) {
    if (extents[i] <= 1) continue;
    prod *= std::max<int64_t>(1, trips[i]);
    p++;
    if (prod >= 4 * (int64_t)std::max(1, cores)) break;
  }
  return cores <= 1 ? 0 : p;
}

int64_t largest_divisor_upto(int64_t n, int64_t cap) {
  int64_t best = 1;
  for (int64_t d = 1; d <= std::min(n, cap); d++)
    if (n % d == 0) best = d;
  return best;
}

class Writer {
 public:
  Writer(const TaskSpace& space, const HardwareInfo& hw, const Roles& roles, const Target& t)
      : space_(space), hw_(hw), roles_(roles), t_(t) {}

  // The accumulators of the written program's register block (the S3 factors of the output vars
  // other than the vectorized one: one vector each).
  int64_t accumulators() const {
    int64_t n = 1;
    for (size_t i = 0; i < tiles_.size(); i++)
      if ((int)i != roles_.v) n *= tiles_[i][2];
    return n;
  }

  Program write() {
    const SpaceStage& st = space_.stages[space_.anchor];
    padded_ = st.extents;
    tiles_.assign(st.extents.size(), {1, 1, 1});
    for (const Slot& s : space_.slots) {
      std::vector<int64_t> opts = next_options(space_, p_.values);
      switch (s.kind) {
        case StepKind::Pad: p_.values.push_back(pad(s, opts)); break;
        case StepKind::Tile:
          if (s.reduction) p_.values.push_back(closest(opts, rtile_target(s)));
          else tile(s);
          break;
        case StepKind::Order: p_.values.push_back(pick(opts, roles_.u)); break;
        case StepKind::ComputeAt: p_.values.push_back(closest(opts, t_.level)); break;
        case StepKind::Vectorize: p_.values.push_back(pick(opts, roles_.v)); break;
        case StepKind::Parallel: p_.values.push_back(parallel(opts)); break;
        case StepKind::Pack: {
          const int last = (int)st.operands.size() - 1;
          int want = s.var == last ? t_.pack_last : s.var == 0 ? t_.pack_first : kPackNone;
          p_.values.push_back(pick(opts, want));
          break;
        }
        case StepKind::Unroll: p_.values.push_back(closest(opts, (double)t_.unroll)); break;
        default: p_.values.push_back(opts.front()); break;
      }
    }
    return p_;
  }

 private:
  int64_t block(int var) const {
    const int lanes = space_.stages[space_.anchor].lanes;
    if (roles_.cb >= 0 && var == roles_.v) return lanes;
    if (var == roles_.cb) return t_.a;
    if (var == roles_.v) return t_.scalar ? 1 : (int64_t)t_.a * lanes;
    if (var == roles_.u) return t_.r;
    if (roles_.conv && var == roles_.u + 1 && var != roles_.v) return t_.h;
    return 1;
  }

  // Pad the vectorized and row vars up to a multiple of their register block when the extent
  // has none: the smallest offered modulus that is a multiple of the block, else no pad.
  int64_t pad(const Slot& s, const std::vector<int64_t>& opts) {
    int64_t b = block(s.var), m = 1;
    if (b > 1 && s.extent % b != 0) {
      for (int64_t o : opts)
        if (o % b == 0) {
          m = o;
          break;
        }
      // No multiple of the block offered (a smaller modulus reaches the same rounded extent,
      // 56 -> 64 by 16 for a block of 32): the first whose rounded extent the block divides.
      if (m == 1 && t_.pad_to_block)
        for (int64_t o : opts)
          if (o > 1 && round_up(s.extent, o) % b == 0) {
            m = o;
            break;
          }
    }
    padded_[s.var] = round_up(s.extent, m);
    return m;
  }

  // The (S1, S2, S3) a var wants.
  std::array<double, 3> tile_target(int var) const {
    const int64_t e = padded_[var], b = block(var);
    if (var == roles_.v) {
      double s2 = std::max<double>(1, (double)t_.panel / (double)b);
      // Unblocked: the S0 loop short, so that an operand packed there is copied a few times.
      double s1 = t_.scalar ? std::max<double>(1, (double)e / (8 * s2)) : 1;
      return {s1, s2, (double)b};
    }
    if (roles_.conv && var == roles_.u + 1 && var != roles_.v) {
      int64_t hrows = 1;
      if (t_.acc_bytes > 0) {  // the width's tile is written (d1 before d2)
        const std::array<int64_t, 3>& w = tiles_[roles_.u];
        const int64_t row_bytes = (int64_t)t_.a * block(roles_.v) * 4 * w[0] * w[1] * w[2];
        hrows = largest_divisor_upto(e, std::max<int64_t>(1, t_.acc_bytes / row_bytes));
      }
      return {1, std::max<double>(1, (double)hrows / (double)b), (double)b};
    }
    if (var == roles_.u) {
      double s2 = std::max<double>(1, (double)t_.rows / (double)b);
      // A matmul keeps all its rows in one S0 tile (the S1 tiles walk them); a convolution's
      // width is one S1 tile.
      double s1 = roles_.conv ? 1 : std::max<double>(1, (double)e / (s2 * (double)b));
      return {s1, s2, (double)b};
    }
    return {1, 1, (double)b};
  }

  // The three factors together: every valid chain is scored, the register block (S3) first.
  void tile(const Slot& s) {
    const std::array<double, 3> want = tile_target(s.var);
    const double weight[3] = {1, 2, 4};
    std::vector<int64_t> best;
    double best_score = 1e300;
    std::vector<int64_t> cur = p_.values;
    // A tile of the whole padded extent (larger than the real one) only for the level-2 tiles of
    // whole output rows (MLAS's loop order); elsewhere the tile stays within the real extent, as
    // before the space allowed it (those experts unchanged).
    const bool whole = t_.level == 2 && s.var == roles_.u && t_.rows >= padded_[s.var];
    // A register block of whole vectors where one is wanted: a block a part-vector short (20
    // columns for 3 x 8 lanes, when 48 does not divide the padded extent but 40 does) costs 4x
    // and more (GPT-2's logits on Zen 3: 500 ms against 112), more than any S1/S2 mismatch.
    const int lanes = space_.stages[space_.anchor].lanes;
    const bool whole_vectors = s.var == roles_.v && lanes > 1 && (int64_t)want[2] % lanes == 0;
    std::function<void(int, double, int64_t)> walk = [&](int level, double score, int64_t done) {
      if (score >= best_score) return;
      if (level == 3) {
        best_score = score;
        best.assign(cur.end() - 3, cur.end());
        return;
      }
      for (int64_t o : next_options(space_, cur)) {
        if (!whole && done * o > s.extent) continue;
        cur.push_back(o);
        const double part_vector = level == 2 && whole_vectors && o % lanes != 0 ? 100 : 0;
        walk(level + 1, score + weight[level] * dist(o, want[level]) + part_vector, done * o);
        cur.pop_back();
      }
    };
    walk(0, 0, 1);
    p_.values.insert(p_.values.end(), best.begin(), best.end());
    tiles_[s.var] = {best[0], best[1], best[2]};
  }

  double rtile_target(const Slot& s) const {
    const SpaceStage& st = space_.stages[space_.anchor];
    if (!t_.rchunk.empty()) {
      const int64_t c = t_.rchunk.at(s.var);
      return c > 0 ? (double)c : (double)s.extent;
    }
    // The innermost-stored reduction dim is the last one (ci of a conv, k of a matmul) in rdom
    // order; kernel taps stay whole in R1.
    const bool chunked = s.var + 1 == (int)st.rextents.size();
    return chunked ? (double)t_.kchunk : (double)s.extent;
  }

  // The S0 loops' trip counts decide (parallel_loops).
  int64_t parallel(const std::vector<int64_t>& opts) {
    const SpaceStage& st = space_.stages[space_.anchor];
    std::vector<int64_t> trips(st.extents.size());
    for (size_t i = 0; i < trips.size(); i++)
      trips[i] = padded_[i] / (tiles_[i][0] * tiles_[i][1] * tiles_[i][2]);
    if (t_.parallel == Target::kOuterAlone && hw_.cores > 1)
      for (int i = (int)st.extents.size() - 1; i >= 0; i--)
        if (st.extents[i] > 1) {
          if (trips[i] >= hw_.cores) return pick(opts, 1);
          break;
        }
    const int p = parallel_loops(st.extents, trips, hw_.cores);
    if (t_.parallel == Target::kOneMore && p > 0 &&
        std::find(opts.begin(), opts.end(), p + 1) != opts.end()) {
      // parallel_loops counts the loops of extent > 1: one more exists when it took fewer.
      if (p < std::count_if(st.extents.begin(), st.extents.end(), [](int64_t e) { return e > 1; }))
        return p + 1;
    }
    return pick(opts, p);
  }

  const TaskSpace& space_;
  const HardwareInfo& hw_;
  Roles roles_;
  Target t_;
  Program p_;
  std::vector<int64_t> padded_;
  std::vector<std::array<int64_t, 3>> tiles_;
};

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

// Channel-blocked convolution (ConvNchwc): the anchor's vars are (lane, width, height, channel
// block, batch) and the stage is named after the op.
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
  const bool taps = st.rextents.size() == 4 && st.rextents[1] * st.rextents[2] > 1;
  if (!roles.depthwise && taps && roles.u >= 0)
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

// --- Rows tasks.
struct RowsTarget {
  bool whole_row = false;   // the vectorized var's whole extent in one tile (else ~4 vectors)
  int reduce_level = kRowsTile;
  bool rfactor = false;     // reductions rfactored along their innermost dim instead of
                            // vectorized along a pure var
};

// The var vectorized: the contiguous one (d0) unless it is too short, then the first long one.
int rows_vector_var(const SpaceStage& st) {
  const int n = (int)st.extents.size();
  if (n > 0 && st.extents[0] >= 4) return 0;
  for (int i = 0; i < n; i++)
    if (st.extents[i] >= st.lanes) return i;
  int best = -1;
  for (int i = 0; i < n; i++)
    if (st.extents[i] >= 2 && (best < 0 || st.extents[i] > st.extents[best])) best = i;
  return best;
}

Program write_rows(const TaskSpace& space, const HardwareInfo& hw, const RowsTarget& t) {
  Program p;
  const int out = (int)space.stages.size() - 1;
  const SpaceStage& os = space.stages[out];
  const int v = rows_vector_var(os);
  std::vector<int64_t> inner(os.extents.size(), 1);
  for (const Slot& s : space.slots) {
    const std::vector<int64_t> opts = next_options(space, p.values);
    const SpaceStage& st = space.stages[s.stage];
    int64_t val = opts.front();
    switch (s.kind) {
      case StepKind::Tile:  // Rows output: one inner factor per var
        if (s.var == v) val = t.whole_row ? opts.back() : closest(opts, 4.0 * st.lanes);
        inner[s.var] = val;
        break;
      case StepKind::Vectorize:
        if (s.stage == out) {
          val = pick(opts, v);
        } else {
          val = -1;  // rfactored (or nothing to vectorize)
          if (!t.rfactor) {  // the first var long enough for a vector, else the first of any
            for (int64_t o : opts)
              if (o >= 0 && st.extents[o] >= st.lanes) {
                val = o;
                break;
              }
            for (int64_t o : opts)
              if (val < 0 && o >= 0) val = o;
          }
        }
        break;
      case StepKind::RFactor: val = opts.back(); break;
      case StepKind::Parallel: {
        std::vector<int64_t> trips(os.extents.size());
        for (size_t i = 0; i < trips.size(); i++) trips[i] = os.extents[i] / inner[i];
        val = pick(opts, parallel_loops(os.extents, trips, hw.cores));
        break;
      }
      case StepKind::Unroll: val = closest(opts, s.stage == out ? 8 : 32); break;
      case StepKind::ComputeAt:
        if (!st.rextents.empty()) {
          val = pick(opts, t.reduce_level);
        } else if (st.consumers.size() >= 2) {
          // Read twice (softmax's exp): computed once per tile, or at root.
          val = std::find(opts.begin(), opts.end(), kRowsTile) != opts.end() ? int64_t{kRowsTile}
                                                                              : opts.back();
        } else {
          val = opts.front();  // read by a reduction only: inlined where allowed
        }
        break;
      default: break;
    }
    p.values.push_back(val);
  }
  return p;
}

}  // namespace
}  // namespace space_detail

using namespace space_detail;

bool pointwise_expert(const TaskSpace& space, const HardwareInfo& hw, Program* out) {
  if (space.rule == SpaceRule::Rows || space.anchor < 0) return false;
  const SpaceStage& st = space.stages[space.anchor];
  if (!is_nchwc(st)) return false;
  const Roles roles = nchwc_roles(st);
  Target t;
  if (!pointwise_target(roles, st, &t)) return false;
  *out = Writer(space, hw, roles, t).write();
  return true;
}

bool streamed_root_expert(const TaskSpace& space, const HardwareInfo& hw, const Program& p) {
  if (space.rule == SpaceRule::Rows || space.anchor < 0) return false;
  const SpaceStage& st = space.stages[space.anchor];
  if (is_nchwc(st)) return false;
  const Roles roles = roles_of(space);
  if (roles.conv || weight_bytes(roles, st) <= hw.l3_bytes) return false;
  for (auto [a, r] : register_blocks(st.lanes))
    if (Writer(space, hw, roles, streaming_target(a, r, st.lanes, kPackRoot)).write() == p)
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
    for (const Target& t : nchwc_targets(roles, st)) {
      Writer w(space, hw, roles, t);
      Program p = w.write();
      const int64_t acc = w.accumulators();
      if (dense && acc > max_acc) continue;
      most = std::max(most, acc);
      written.emplace_back(std::move(p), acc);
    }
    for (auto& [p, acc] : written)
      if (acc >= std::min(min_acc, most)) add(std::move(p));
    return out;
  }
  const Roles roles = roles_of(space);
  for (const Target& t : targets(roles, st, hw.l2_bytes, hw.l3_bytes))
    add(Writer(space, hw, roles, t).write());
  if (roles.depthwise && st.extents[0] >= st.lanes)
    for (bool pad : {false, true})
      for (Target t : width_targets()) {
        // Padded: a width without a multiple of the vector (28, 56 for 16 lanes) is computed in
        // whole vectors, the last one shifted inwards, instead of in short ones.
        t.pad_to_block = pad;
        add(Writer(space, hw, width_roles(st), t).write());
      }
  if (roles.conv && !roles.depthwise && st.extents[0] >= st.lanes)
    for (const Target& t : columns_targets(st.lanes))
      add(Writer(space, hw, columns_roles(st), t).write());
  return out;
}

}  // namespace tlm
