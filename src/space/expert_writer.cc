// The expert writer (expert_internal.h): a Target turned into a valid program, slot by slot, each
// slot's value the option next_options() offers that is closest to the target (a tile's three
// factors chosen together among every valid chain). Targets live in expert.cc and
// expert_nchwc.cc.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>

#include "space/expert_internal.h"

namespace tlm {
namespace space_detail {
namespace {

double dist(int64_t got, double want) {
  return std::fabs(std::log2((double)std::max<int64_t>(got, 1) / std::max(want, 1.0)));
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

}  // namespace

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

Program write_target(const TaskSpace& space, const HardwareInfo& hw, const Roles& roles,
                     const Target& t, int64_t* accumulators) {
  Writer w(space, hw, roles, t);
  Program p = w.write();
  if (accumulators) *accumulators = w.accumulators();
  return p;
}

}  // namespace space_detail
}  // namespace tlm
