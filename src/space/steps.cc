// The step table: one row per StepKind with its name token, the values it offers at each
// position (the only place validity lives: next_options, sampling and is_valid_program all go
// through it), how its values enter the decoded Plan that the emitters read, how they read in
// words (describe.cc) and what they add to the cost model's features (features.cc). Plus the walks
// over a space: next_options, sampling, validity, the size estimate, printing.
//
// Values print as plain integers, in slot order; a sentence is slot headers plus values.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {

const std::vector<int64_t> kUnrollLimits = {0, 8, 32, 128};

using Values = std::vector<int64_t>;

// Everything an options function may look at: the slot, the values of earlier slots (decoded)
// and the values of this slot chosen so far.
struct OptionCtx {
  const TaskSpace& space;
  const Slot& slot;
  const Plan& plan;
  const Values& partial;
  const SpaceStage& stage() const { return space.stages[slot.stage]; }
  const StagePlan& sp() const { return plan.stages[slot.stage]; }
  bool rows_output() const { return slot.stage + 1 == (int)space.stages.size(); }
};

namespace {

int64_t product(const Values& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Output vars of extent > 1: the loops the tile, parallel and compute levels talk about.
int tiled_output_vars(const TaskSpace& space) {
  int n = 0;
  for (int64_t e : space.stages.back().extents) n += e > 1;
  return n;
}

// --- Tile: a divisor chain. Each factor divides what the earlier factors of the slot left of
// the extent, so every split is exact and no loop needs a tail. After a Pad slot rounded the
// extent up, the chain divides the padded extent instead, but the tile it makes stays within the
// real extent (the output's outermost split shifts its last tile inwards, which needs a tile no
// larger than the extent) or is the whole padded extent (one tile: the loops walk the real
// extent, the last register block partial, apply_tiled.cc; e.g. MLAS's 3-pixel block along a
// whole row of 56, 18 blocks and one of 2), and every factor stays a plain value
// (<= kPlainTileValue: the sentence's "/k" spelling of larger factors is relative to the
// unpadded extent).
constexpr int64_t kPlainTileValue = 999;
// Pad slots sample "no pad" with this chance: uniformly, a conv's three pad slots padded 89% of
// random programs, which were slower to compile (median 0.43 vs 0.31 s) and to run.
constexpr double kPadFirstPrior = 0.75;

Values tile_options(const OptionCtx& c) {
  const int64_t done = product(c.partial);
  if (c.slot.reduction) return divisors(c.slot.extent / done);
  const int64_t padded = c.sp().padded.at(c.slot.var);
  if (padded == c.slot.extent) return divisors(c.slot.extent / done);
  Values v;
  for (int64_t d : divisors(padded / done))
    if (d <= kPlainTileValue && (done * d <= c.slot.extent || done * d == padded)) v.push_back(d);
  return v;
}
void tile_record(const Slot& s, const int64_t* v, Plan* plan) {
  StagePlan& sp = plan->stages[s.stage];
  if (s.reduction)
    sp.rtiles[s.var] = v[0];
  else if (s.arity == 3)
    sp.tiles[s.var] = {v[0], v[1], v[2]};
  else
    sp.tiles[s.var] = {1, 1, v[0]};
}

// True when stage `c` runs inside the output's tile loops: it is the output, is computed at the
// tile, or is inlined into consumers that all are.
bool inside_tile(const TaskSpace& space, const Plan& plan, int c) {
  if (c + 1 == (int)space.stages.size()) return true;
  int level = plan.stages[c].compute;
  if (level == kRowsTile) return true;
  if (level == kRowsRoot || !space.stages[c].rextents.empty()) return false;
  for (int d : space.stages[c].consumers)
    if (!inside_tile(space, plan, d)) return false;
  return true;
}

// --- ComputeAt. TiledAnchor: the accumulator's level 1..3. Rows: a reduction is computed at
// root or in the output tile; a pure stage is inlined, computed in the tile or at root. A stage
// can go into the tile only when all its consumers run there (slots are in reverse topological
// order, so the consumers have decided already).
Values compute_options(const OptionCtx& c) {
  if (c.space.rule == SpaceRule::TiledAnchor) {
    Values v;
    for (int l = kMinAnchorLevel; l <= kMaxAnchorLevel; l++) v.push_back(l);
    return v;
  }
  bool tile_ok = tiled_output_vars(c.space) > 0;
  for (int d : c.stage().consumers) tile_ok = tile_ok && inside_tile(c.space, c.plan, d);
  Values v;
  if (c.stage().rextents.empty()) v.push_back(kRowsInline);
  if (tile_ok) v.push_back(kRowsTile);
  v.push_back(kRowsRoot);
  return v;
}
void compute_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].compute = (int)v[0];
}

// --- Vectorize. TiledAnchor: a var whose S3 factor can be vectorized. Rows output: a var whose
// inner tile can. Rows reductions: none, or any var of extent >= 2 (vectorized with a guard).
Values vectorize_options(const OptionCtx& c) {
  const SpaceStage& st = c.stage();
  Values v;
  bool reduction_stage = c.space.rule == SpaceRule::Rows && !c.rows_output();
  if (reduction_stage) v.push_back(-1);
  for (int i = 0; i < (int)st.extents.size(); i++) {
    if (st.extents[i] < 2) continue;
    if (reduction_stage || vector_width(inner_factor(c.sp(), i), st.lanes) >= 2) v.push_back(i);
  }
  if (v.empty()) v.push_back(-1);
  return v;
}
void vectorize_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].vec = (int)v[0];
}

// --- Parallel: 0..n outermost tile loops fused.
Values parallel_options(const OptionCtx& c) {
  Values v;
  for (int p = 0; p <= tiled_output_vars(c.space); p++) v.push_back(p);
  return v;
}
void parallel_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].parallel = (int)v[0];
}

// --- Pack: every level exists whatever the accumulator's level.
Values pack_options(const OptionCtx&) {
  return {kPackNone, kPackRoot, kPackS0, kPackS1, kPackR0, kPackS2};
}
void pack_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].pack[s.var] = (int)v[0];
}

Values unroll_options(const OptionCtx&) { return kUnrollLimits; }
void unroll_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].unroll = v[0];
}

// --- RFactor: only for a reduction not vectorized over a pure var; f divides the innermost
// reduction extent and fits one vector.
Values rfactor_options(const OptionCtx& c) {
  Values v = {0};
  if (c.sp().vec >= 0) return v;
  for (int64_t d : divisors(c.stage().rextents.at(0)))
    if (d >= 2 && d <= c.stage().lanes) v.push_back(d);
  return v;
}
void rfactor_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].rfactor = v[0];
}

// --- Order: any tiled var may be the innermost loop of level S2 (the register blocks' loop
// order decides which operand's micro-panel stays in L1).
Values order_options(const OptionCtx& c) {
  Values v;
  for (int i = 0; i < (int)c.stage().extents.size(); i++)
    if (c.stage().extents[i] > 1) v.push_back(i);
  return v;
}
void order_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].s2_inner = (int)v[0];
}

// --- Pad: pad_options() (below) of the var's extent; rules.cc makes the slot only when there is
// more than m = 1.
Values pad_slot_options(const OptionCtx& c) { return pad_options(c.slot.extent); }
void pad_record(const Slot& s, const int64_t* v, Plan* plan) {
  plan->stages[s.stage].padded[s.var] = round_up(s.extent, v[0]);
}

constexpr StepRow kSteps[] = {
    {StepKind::Tile, "tile", tile_options, tile_record, describe_tile, tile_feature_width,
     tile_features},
    {StepKind::ComputeAt, "compute_at", compute_options, compute_record, describe_compute_at,
     one_feature, value_feature},
    {StepKind::Pack, "pack", pack_options, pack_record, describe_pack, one_feature, pack_features},
    {StepKind::Vectorize, "vectorize", vectorize_options, vectorize_record, describe_vectorize,
     one_feature, vectorize_features},
    {StepKind::Parallel, "parallel", parallel_options, parallel_record, describe_parallel,
     one_feature, parallel_features},
    {StepKind::Unroll, "unroll", unroll_options, unroll_record, describe_unroll, one_feature,
     unroll_features},
    {StepKind::RFactor, "rfactor", rfactor_options, rfactor_record, describe_rfactor, one_feature,
     rfactor_features},
    {StepKind::Order, "order", order_options, order_record, describe_order, one_feature,
     value_feature},
    {StepKind::Pad, "pad", pad_slot_options, pad_record, describe_pad, one_feature, pad_features,
     kPadFirstPrior},
};
static_assert(sizeof(kSteps) / sizeof(kSteps[0]) == kStepKindCount, "one row per StepKind");

constexpr bool rows_complete() {
  for (int k = 0; k < kStepKindCount; k++) {
    const StepRow& r = kSteps[k];
    if ((int)r.kind != k || !r.name || !r.options || !r.record || !r.describe || !r.feature_width ||
        !r.features)
      return false;
  }
  return true;
}
static_assert(rows_complete(), "the step table is in StepKind order and every column is filled");

}  // namespace

const StepRow& step_row(StepKind k) { return kSteps[(int)k]; }

Plan empty_plan(const TaskSpace& space) {
  Plan plan;
  for (const SpaceStage& st : space.stages) {
    StagePlan sp;
    // "No split": factors 1 above, the whole extent in the innermost level.
    for (int64_t e : st.extents) sp.tiles.push_back({1, 1, e});
    sp.rtiles = st.rextents;
    sp.padded = st.extents;
    sp.pack.assign(st.operands.size(), kPackNone);
    plan.stages.push_back(std::move(sp));
  }
  return plan;
}

size_t decode_plan(const TaskSpace& space, const std::vector<int64_t>& values, Plan* plan) {
  *plan = empty_plan(space);
  size_t pos = 0, k = 0;
  for (; k < space.slots.size(); k++) {
    const Slot& s = space.slots[k];
    if (pos + s.arity > values.size()) break;
    step_row(s.kind).record(s, values.data() + pos, plan);
    pos += s.arity;
  }
  return k;
}

const std::vector<int64_t> kPadModuli = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};

int64_t vector_width(int64_t extent, int lanes) {
  if (extent <= lanes) return extent;
  for (int64_t w : {(int64_t)lanes, (int64_t)lanes / 2, (int64_t)lanes / 4})
    if (w >= 2 && extent % w == 0) return w;
  return 0;
}

}  // namespace space_detail

using namespace space_detail;

std::vector<int64_t> divisors(int64_t n) {
  TLM_CHECK(n >= 1) << "divisors of " << n;
  std::vector<int64_t> lo, hi;
  for (int64_t d = 1; d * d <= n; d++) {
    if (n % d) continue;
    lo.push_back(d);
    if (d != n / d) hi.push_back(n / d);
  }
  lo.insert(lo.end(), hi.rbegin(), hi.rend());
  return lo;
}

std::vector<int64_t> pad_options(int64_t extent) {
  std::vector<int64_t> v = {1}, seen = {extent};
  for (int64_t m : kPadModuli) {
    int64_t e = round_up(extent, m);
    if (std::find(seen.begin(), seen.end(), e) != seen.end() || 7 * (e - extent) > extent) continue;
    seen.push_back(e);
    v.push_back(m);
  }
  return v;
}

std::vector<int64_t> next_options(const TaskSpace& space, const std::vector<int64_t>& prefix) {
  Plan plan;
  size_t k = decode_plan(space, prefix, &plan);
  if (k == space.slots.size()) return {};
  size_t start = 0;
  for (size_t i = 0; i < k; i++) start += space.slots[i].arity;
  std::vector<int64_t> partial(prefix.begin() + start, prefix.end());
  OptionCtx ctx{space, space.slots[k], plan, partial};
  std::vector<int64_t> v = step_row(space.slots[k].kind).options(ctx);
  TLM_CHECK(!v.empty()) << "no options for slot " << slot_header(space.slots[k]);
  return v;
}

size_t program_length(const TaskSpace& space) {
  size_t n = 0;
  for (const Slot& s : space.slots) n += s.arity;
  return n;
}

Program sample_program(const TaskSpace& space, std::mt19937_64& rng) {
  Program p;
  for (const Slot& slot : space.slots) {
    double first = step_row(slot.kind).first_prior;
    for (int a = 0; a < slot.arity; a++) {
      std::vector<int64_t> opts = next_options(space, p.values);
      size_t k = rng() % opts.size();
      if (first > 0 && opts.size() > 1) {  // the first option with chance `first`, else uniform
        double u = std::uniform_real_distribution<double>(0, 1)(rng);
        k = u < first ? 0 : 1 + rng() % (opts.size() - 1);
      }
      p.values.push_back(opts[k]);
    }
  }
  TLM_CHECK(p.values.size() == program_length(space)) << "sample_program: slot arities disagree";
  return p;
}

int64_t parallel_loops(const TaskSpace& space, const Program& p) {
  int64_t most = 0;
  size_t pos = 0;
  for (const Slot& s : space.slots) {
    if (s.kind == StepKind::Parallel && pos < p.values.size()) most = std::max(most, p.values[pos]);
    pos += (size_t)s.arity;
  }
  return most;
}

double largest_stage_work(const TaskSpace& space) {
  double most = 0;
  for (const SpaceStage& st : space.stages) {
    double w = 1;
    for (int64_t e : st.extents) w *= (double)e;
    for (int64_t e : st.rextents) w *= (double)e;
    most = std::max(most, w);
  }
  return most;
}

bool is_valid_program(const TaskSpace& space, const Program& p) {
  if (p.values.size() != program_length(space)) return false;
  std::vector<int64_t> prefix;
  for (int64_t v : p.values) {
    std::vector<int64_t> opts = next_options(space, prefix);
    if (std::find(opts.begin(), opts.end(), v) == opts.end()) return false;
    prefix.push_back(v);
  }
  return true;
}

namespace space_detail {
// Knuth's estimator: along a uniformly random path, the product of the branching factors is an
// unbiased estimate of the number of leaves. Averaged over a fixed-seed set of paths.
double estimate_log10_size(const TaskSpace& space) {
  std::mt19937_64 rng(12345);
  const int kPaths = 64;
  std::vector<double> logs;  // natural log of each path's product
  size_t n = program_length(space);
  for (int i = 0; i < kPaths; i++) {
    std::vector<int64_t> prefix;
    double lg = 0;
    while (prefix.size() < n) {
      std::vector<int64_t> opts = next_options(space, prefix);
      lg += std::log((double)opts.size());
      prefix.push_back(opts[rng() % opts.size()]);
    }
    logs.push_back(lg);
  }
  double mx = *std::max_element(logs.begin(), logs.end());
  double sum = 0;
  for (double l : logs) sum += std::exp(l - mx);
  return (mx + std::log(sum / kPaths)) / std::log(10.0);
}
}  // namespace space_detail

const char* step_kind_name(StepKind k) { return step_row(k).name; }

std::string describe_decision(const TaskSpace& space, const Slot& slot, const int64_t* values) {
  return step_row(slot.kind).describe(space, slot, values);
}

std::string slot_header(const Slot& s) {
  std::ostringstream os;
  os << step_kind_name(s.kind) << " " << s.subject;
  if (s.kind == StepKind::Tile) os << " " << s.extent;
  return os.str();
}

std::string program_str(const TaskSpace& space, const Program& p) {
  std::ostringstream os;
  size_t pos = 0;
  for (const Slot& s : space.slots) {
    os << slot_header(s) << " =";
    for (int i = 0; i < s.arity && pos < p.values.size(); i++) os << " " << p.values[pos++];
    os << "\n";
  }
  return os.str();
}

}  // namespace tlm
