// The space's contracts: deterministic replay, next_options as the single source of validity
// (never empty along sampled prefixes; is_valid_program accepts samples and rejects tampering),
// the fast hand-written structures are points of the space, and space sizes of zoo tasks.
#include <array>
#include <map>
#include <regex>
#include <set>

#include "fixtures/known_programs.h"
#include "space/space_cases.h"

namespace tlm::testing_space {
namespace {

using V = std::vector<int64_t>;

// The two machine kinds seen so far, as hardware keys: AVX2 (8 lanes) and AVX-512 (16).
const char* const kAvx2AndAvx512[] = {"isa=avx2,cores=2,vec=8,l1=32k,l2=512k,l3=32m",
                                      "isa=avx512,cores=2,vec=16,l1=32k,l2=1m,l3=32m"};

// A Pack slot's value for "a copy per S0 tile" (kPackS0 in space_internal.h).
constexpr int64_t kPackS0 = 2;
// ... for "no copy" and "a copy at root" (kPackNone, kPackRoot).
constexpr int64_t kPackNone = 0;
constexpr int64_t kPackRoot = 1;

// ResNet-18's channel-blocked convolutions on `hw` (blocked by its vector lanes) whose space
// tiles the anchor, each with a name for traces and its subgraph. At 224 its widths are 112, 56,
// 28, 14 and 7.
struct BlockedConv {
  std::string name;
  TaskSpace space;
  Subgraph sub;
};
std::vector<BlockedConv> blocked_convs(const HardwareInfo& hw, const std::string& spec) {
  Graph g = build_zoo_model(spec, 7);
  prepare_graph(g);
  block_channels(g, hw.vector_bits / 32);
  std::vector<BlockedConv> out;
  for (const Task& t : partition_graph(g).tasks) {
    if (family(t.sub.kind) != "conv2d_nchwc") continue;
    TaskSpace space = build_space(lower_subgraph(t.sub), hw);
    if (space.rule == SpaceRule::TiledAnchor)
      out.push_back({t.sub.kind + " " + std::to_string(t.id), std::move(space), t.sub});
  }
  return out;
}

std::vector<BlockedConv> resnet18_blocked_convs(const HardwareInfo& hw, int image = 224) {
  return blocked_convs(hw, "resnet18:image=" + std::to_string(image));
}

// The values program `p` gives the first slot that `match` accepts, or nullptr when none does.
template <class Match>
const int64_t* first_slot(const TaskSpace& space, const Program& p, Match match) {
  size_t at = 0;
  for (const Slot& s : space.slots) {
    if (match(s)) return &p.values[at];
    at += s.arity;
  }
  return nullptr;
}

// The values program `p` gives the anchor's first slot of `kind` on `var` (-1: any var; a Tile
// slot's var indexes the rdom when `reduction`), or nullptr when the anchor has no such slot.
const int64_t* anchor_slot(const TaskSpace& space, const Program& p, StepKind kind, int var = -1,
                           bool reduction = false) {
  return first_slot(space, p, [&](const Slot& s) {
    return s.kind == kind && s.stage == space.anchor && (var < 0 || s.var == var) &&
           s.reduction == reduction;
  });
}

// The value program `p` gives its parallel step (on the output stage, not the anchor), or nullptr.
const int64_t* parallel_slot(const TaskSpace& space, const Program& p) {
  return first_slot(space, p, [](const Slot& s) { return s.kind == StepKind::Parallel; });
}

// The anchor's (S1, S2, S3) tile factors of pure var `var` in program `p` ({0, 0, 0}: no slot).
std::array<int64_t, 3> anchor_tile(const TaskSpace& space, const Program& p, int var) {
  const int64_t* v = anchor_slot(space, p, StepKind::Tile, var);
  if (!v) return {0, 0, 0};
  return {v[0], v[1], v[2]};
}

// Program `p` of `space` (the subgraph's) computes what the reference interpreter does.
void expect_right_answer(const Subgraph& sub, const TaskSpace& space, const Program& p,
                         uint64_t seed) {
  std::vector<Tensor> in = random_inputs(sub, seed);
  Tensor ref = interpret(sub.graph, in).at(0);
  LoweredTask lt = lower_subgraph(sub);
  apply_program(lt, space, p);
  Tensor got = run_task(lt, in);
  ASSERT_EQ(got.shape(), ref.shape());
  EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << program_str(space, p);
}

// Halide appends "$n" to repeated Func names (and the loop-nest printer cuts names at the '$',
// so an rfactor intermediate "f$3_intm" prints as "f"); two lowerings differ only there.
std::string normalized_nest(const LoweredTask& t) {
  return std::regex_replace(loop_nest_str(t), std::regex("([$_][0-9]+)?(_intm)|\\$[0-9]+"), "");
}

TEST(Space, ReplayIsDeterministic) {
  HardwareInfo hw = detect_hardware();
  std::mt19937_64 rng(7);
  int compared = 0;
  for (const TaskCase& c : representative_tasks(hw)) {
    SCOPED_TRACE(c.name);
    LoweredTask probe = lower_subgraph(c.sub);
    TaskSpace space = build_space(probe, hw);
    Program p = sample_program(space, rng), q = sample_program(space, rng);
    LoweredTask t1 = lower_subgraph(c.sub), t2 = lower_subgraph(c.sub), t3 = lower_subgraph(c.sub);
    apply_program(t1, space, p);
    apply_program(t2, space, p);
    std::string n1 = normalized_nest(t1);
    EXPECT_EQ(n1, normalized_nest(t2));
    if (!(p == q)) {
      apply_program(t3, space, q);
      // Not a requirement for every pair, but sampled pairs of rich spaces do differ.
      if (space.log10_size > 3) {
        EXPECT_NE(n1, normalized_nest(t3)) << program_str(space, p);
      }
    }
    // The space itself is a function of the task.
    TaskSpace again = build_space(lower_subgraph(c.sub), hw);
    ASSERT_EQ(again.slots.size(), space.slots.size());
    for (size_t k = 0; k < space.slots.size(); k++)
      EXPECT_EQ(slot_header(again.slots[k]), slot_header(space.slots[k]));
    compared++;
  }
  EXPECT_GE(compared, 18);
}

TEST(Space, NextOptionsIsTheSourceOfValidity) {
  HardwareInfo hw = detect_hardware();
  std::mt19937_64 rng(11);
  std::set<StepKind> kinds;
  for (const TaskCase& c : representative_tasks(hw)) {
    SCOPED_TRACE(c.name);
    TaskSpace space = build_space(lower_subgraph(c.sub), hw);
    ASSERT_FALSE(space.slots.empty());
    size_t n = program_length(space);
    for (int k = 0; k < 20; k++) {
      Program p;
      while (p.values.size() < n) {
        V opts = next_options(space, p.values);
        ASSERT_FALSE(opts.empty()) << "empty options after " << p.values.size() << " values";
        std::set<int64_t> uniq(opts.begin(), opts.end());
        ASSERT_EQ(uniq.size(), opts.size()) << "duplicate options";
        p.values.push_back(opts[rng() % opts.size()]);
      }
      EXPECT_TRUE(next_options(space, p.values).empty());
      EXPECT_TRUE(is_valid_program(space, p));
      // Tampering: one value replaced by something never offered, a value dropped, one added.
      size_t pos = rng() % n;
      Program bad = p;
      bad.values[pos] = 1000003;
      EXPECT_FALSE(is_valid_program(space, bad));
      Program shorter = p;
      shorter.values.pop_back();
      EXPECT_FALSE(is_valid_program(space, shorter));
      Program longer = p;
      longer.values.push_back(1);
      EXPECT_FALSE(is_valid_program(space, longer));
    }
    for (const Slot& s : space.slots) kinds.insert(s.kind);
  }
  EXPECT_EQ((int)kinds.size(), kStepKindCount) << "every step kind is used by some task";
}

TEST(Space, TileFactorsAreDivisorChainsAndOfferTheVectorWidth) {
  HardwareInfo hw = detect_hardware();
  Subgraph sub = matmul_subgraph(64, 48, 96);
  TaskSpace space = build_space(lower_subgraph(sub), hw);
  ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
  ASSERT_EQ(space.slots[0].kind, StepKind::Tile);
  EXPECT_EQ(space.slots[0].extent, 96);  // d0: the columns, innermost
  EXPECT_EQ(next_options(space, {}), (V{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 96}));
  EXPECT_EQ(next_options(space, {2}), (V{1, 2, 3, 4, 6, 8, 12, 16, 24, 48}));
  EXPECT_EQ(next_options(space, {2, 3}), (V{1, 2, 4, 8, 16}));
}

TEST(Space, BadProgramsAndForeignTasksAreUserErrors) {
  HardwareInfo hw = detect_hardware();
  Subgraph sub = matmul_subgraph(16, 8, 32);
  TaskSpace space = build_space(lower_subgraph(sub), hw);
  LoweredTask t = lower_subgraph(sub);
  Program p;
  p.values.assign(program_length(space), 0);
  EXPECT_THROW(apply_program(t, space, p), UserError);
  std::mt19937_64 rng(3);
  Program good = sample_program(space, rng);
  LoweredTask other = lower_subgraph(matmul_subgraph(16, 8, 48));
  EXPECT_THROW(apply_program(other, space, good), UserError);
}

TEST(Space, FastStructuresArePointsOfTheSpace) {
  // The hand-written programs of both ISAs, each on a space built for its machine kind.
  for (const char* key : {"isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m",
                          "isa=avx2,cores=2,vec=8,l1=32k,l2=512k,l3=8m"}) {
    HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const std::vector<int64_t>& mm = known_matmul1024_program(hw.isa);
    TaskSpace space = build_space(lower_subgraph(matmul_subgraph(1024, 1024, 1024)), hw);
    EXPECT_TRUE(is_valid_program(space, Program{mm})) << program_str(space, {mm});
    LoweredTask t = lower_subgraph(matmul_subgraph(1024, 1024, 1024));
    apply_program(t, space, Program{mm});
    std::string nest = normalized_nest(t);
    EXPECT_NE(nest.find("parallel"), std::string::npos) << nest;
    EXPECT_NE(nest.find(hw.isa == "avx512" ? "unrolled d1.d1_w2 in [0, 3]"
                                           : "unrolled d1.d1_w2 in [0, 5]"),
              std::string::npos)
        << nest;
    // B (the weight input w0) packed inside the K chunk loop, per micro-panel.
    size_t acc = nest.find("produce f0_matmul"), ko = nest.find("for r1_k.r0_o"),
           pack = nest.find("produce in1_w0_im");
    EXPECT_NE(pack, std::string::npos) << nest;
    EXPECT_LT(acc, ko) << nest;
    EXPECT_LT(ko, pack) << nest;

    const std::vector<int64_t>& conv = known_conv3x3_program(hw.isa);
    Subgraph sub = resnet50_conv3x3_subgraph();
    TaskSpace cspace = build_space(lower_subgraph(sub), hw);
    ASSERT_TRUE(is_valid_program(cspace, Program{conv})) << program_str(cspace, {conv});
    LoweredTask ct = lower_subgraph(sub);
    apply_program(ct, cspace, Program{conv});
    std::vector<Tensor> inputs = random_inputs(sub, 5);
    Tensor got = run_task(ct, inputs);
    Tensor ref = interpret(sub.graph, inputs).at(0);
    EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0);
  }
}

// Pad slots: extents without useful divisors get rounded-up tile chains whose last tile is
// shifted inwards; every padded program still computes the right answer.
TEST(Space, PaddedTilesComputeTheRightAnswer) {
  HardwareInfo hw = detect_hardware();
  EXPECT_EQ(pad_options(1024), (std::vector<int64_t>{1, 3, 12, 48}));
  EXPECT_EQ(pad_options(7), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(pad_options(768), (std::vector<int64_t>{1}));
  Subgraph sub = matmul_subgraph(56, 24, 50);  // 56 -> 57, 60, 64; 50 -> 51, 52, 54, 56
  TaskSpace space = build_space(lower_subgraph(sub), hw);
  int pads = 0;
  for (const Slot& s : space.slots) pads += s.kind == StepKind::Pad;
  ASSERT_EQ(pads, 2);
  std::vector<Tensor> inputs = random_inputs(sub, 7);
  Tensor ref = interpret(sub.graph, inputs).at(0);
  std::mt19937_64 rng(11);
  int padded = 0;
  for (int i = 0; i < 40 && padded < 6; i++) {
    // Random programs whose pad decisions are forced above 1.
    Program p = build_program(space, [&](const Slot& s, size_t, const std::vector<int64_t>& opts) {
      return s.kind == StepKind::Pad ? opts[1 + rng() % (opts.size() - 1)]
                                     : opts[rng() % opts.size()];
    });
    ASSERT_TRUE(is_valid_program(space, p));
    LoweredTask t = lower_subgraph(sub);
    apply_program(t, space, p);
    Tensor got = run_task(t, inputs);
    EXPECT_LE(max_rel_violation(got, ref, 1e-4, 1e-4), 1.0) << program_str(space, p);
    padded++;
  }
  EXPECT_EQ(padded, 6);
}

// A small extent padded past itself (8 -> 9, 7 -> 8) and tiled whole leaves the output an inner
// loop of the real extent; with 16 lanes the padded tile alone once chose a 9-wide vector for those
// 8 columns, shifted before the output's start (Halide: "accessed at -1"), on AVX-512 machines
// only. Written for 16 lanes whatever this machine has (Halide splits the vectors for it).
TEST(Space, SmallPaddedExtentsWithSixteenLanesComputeTheRightAnswer) {
  HardwareInfo hw = detect_hardware();
  hw.isa = "avx512";
  hw.vector_bits = 512;
  int checked = 0;
  for (int64_t n : {8, 7}) {
    Subgraph sub = matmul_subgraph(n, 24, n);
    SCOPED_TRACE("matmul " + std::to_string(n));
    TaskSpace space = build_space(lower_subgraph(sub), hw);
    std::vector<Tensor> inputs = random_inputs(sub, 5);
    Tensor ref = interpret(sub.graph, inputs).at(0);
    std::mt19937_64 rng(13);
    for (int i = 0; i < 12; i++) {
      // Pads forced above 1 and tiles forced whole (the largest option), the rest at random.
      Program p =
          build_program(space, [&](const Slot& s, size_t j, const std::vector<int64_t>& opts) {
            if (s.kind == StepKind::Pad && opts.size() > 1)
              return opts[1 + rng() % (opts.size() - 1)];
            if (s.kind == StepKind::Tile && j == 1)
              return *std::max_element(opts.begin(), opts.end());
            return opts[rng() % opts.size()];
          });
      ASSERT_TRUE(is_valid_program(space, p));
      Tensor got;
      if (!run_program(sub, space, p, inputs, &got)) continue;
      EXPECT_LE(max_rel_violation(got, ref, 1e-4, 1e-4), 1.0) << program_str(space, p);
      checked++;
    }
  }
  EXPECT_EQ(checked, 24);
}

// A model weight packed whole (at root) is packed once: the lowered task asks for that input in
// the packed layout (activations never), prepare_input makes the copy, and running on the copy,
// or on the dense weight (repacked per call), gives the interpreter's answer. Both layouts occur
// among the expert programs: another dim order, and blocks of the register block's width.
TEST(Space, WeightsPackedAtRootArePackedOnceWhenBound) {
  HardwareInfo hw = detect_hardware();
  int prepacked = 0, blocked = 0, ordered = 0;
  for (const TaskCase& c : representative_tasks(hw)) {
    LoweredTask probe = lower_subgraph(c.sub);
    TaskSpace space = build_space(probe, hw);
    bool seen[2] = {false, false};  // per task: an ordered and a blocked layout checked
    for (const Program& p : expert_programs(space, hw)) {
      LoweredTask t = lower_subgraph(c.sub);
      apply_program(t, space, p);
      bool any = false, any_blocked = false;
      for (const InputLayout& l : t.input_storage) any_blocked = any_blocked || l.block > 0;
      if (seen[any_blocked]) continue;
      for (size_t j = 0; j < t.input_storage.size(); j++) {
        const InputLayout& l = t.input_storage[j];
        if (l.dense()) continue;
        any = true;
        const Value& v = c.sub.graph.value(c.sub.graph.inputs[j]);
        EXPECT_EQ(v.name[0], 'w') << "an activation must never be prepacked: " << v.name;
        if (l.block > 0) {
          EXPECT_EQ(t.inputs[j].dimensions(), (int)v.shape.size() + 1);
          EXPECT_LT(l.block, v.shape[v.shape.size() - 1 - l.block_dim]);
        } else {
          EXPECT_EQ(l.order.size(), v.shape.size());
        }
      }
      if (!any) continue;
      seen[any_blocked] = true;
      (any_blocked ? blocked : ordered)++;
      SCOPED_TRACE(c.name + "\n" + program_str(space, p));
      std::vector<Tensor> inputs = random_inputs(c.sub, 5);
      Tensor ref = interpret(c.sub.graph, inputs).at(0);
      CompiledTask ct = compile_task(t, host_target());
      EXPECT_TRUE(ct.has_prepacked_inputs());
      std::vector<Halide::Buffer<>> dense, bound;
      for (size_t j = 0; j < inputs.size(); j++) {
        dense.push_back(halide_view(inputs[j].dtype(), inputs[j].raw(), inputs[j].shape()));
        bound.push_back(ct.prepare_input(j, dense.back()));
        if (j < t.input_storage.size() && !t.input_storage[j].dense()) {
          const InputLayout& l = t.input_storage[j];
          EXPECT_NE(bound.back().data(), dense.back().data()) << "input " << j << ": no copy";
          EXPECT_EQ(bound.back().dim(l.block > 0 ? 0 : l.order[0]).stride(), 1);
          EXPECT_EQ(bound.back().dimensions(), dense.back().dimensions() + (l.block > 0));
          // Already in its order: the same buffer back.
          EXPECT_EQ(ct.prepare_input(j, bound.back()).data(), bound.back().data());
        } else {
          EXPECT_EQ(bound.back().data(), dense.back().data()) << "input " << j << " copied";
        }
      }
      const Value& ov = c.sub.graph.value(c.sub.graph.outputs[0]);
      for (auto* ins : {&bound, &dense}) {
        Tensor out(ov.dtype, ov.shape);
        Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
        ct.run(*ins, ob);
        EXPECT_LE(max_rel_violation(out, ref, 1e-3, 1e-3), 1.0);
      }
      prepacked++;
      if (seen[0] && seen[1]) break;  // at most two programs per task: compile time
    }
  }
  EXPECT_GE(prepacked, 4) << "the convolutions' expert programs pack their weights at root";
  EXPECT_GE(blocked, 2) << "weights blocked by the register block's width";
  EXPECT_GE(ordered, 1) << "weights packed with another dim order";
}

// A matrix product whose weight fits the last-level cache gets MLAS's own SGEMM loop among its
// expert programs (expert.cc): the accumulator tile in memory (ComputeAt level 2), the reduction
// in chunks of 256 outside the register blocks, and the weight packed once at root in blocks of
// the register block's width (a layout made when the weights are bound, never per call). One of
// them per task is run against the interpreter here (the property test runs them all).
TEST(Space, MatmulExpertsIncludeMlasLoopOverWeightsPackedOnce) {
  HardwareInfo hw = detect_hardware();
  Graph g = build_zoo_model("bert-tiny:seq=16,layers=1", 7);
  prepare_graph(g);
  int dense = 0;
  for (const Task& task : partition_graph(g).tasks) {
    if (task.sub.kind.rfind("dense", 0) != 0) continue;
    SCOPED_TRACE(task.sub.kind);
    dense++;
    TaskSpace space = build_space(lower_subgraph(task.sub), hw);
    ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
    int mlas = 0;
    for (const Program& p : expert_programs(space, hw)) {
      const int64_t* level = anchor_slot(space, p, StepKind::ComputeAt);
      const int64_t* chunk = anchor_slot(space, p, StepKind::Tile, 0, /*reduction=*/true);
      if (!level || !chunk || *level != 2 ||
          *chunk != std::min<int64_t>(256, space.stages[space.anchor].rextents[0]))
        continue;
      LoweredTask t = lower_subgraph(task.sub);
      apply_program(t, space, p);
      bool blocked = false;
      for (const InputLayout& l : t.input_storage) blocked = blocked || l.block > 0;
      if (!blocked) continue;
      if (mlas++ > 0) continue;
      SCOPED_TRACE(program_str(space, p));
      std::vector<Tensor> inputs = random_inputs(task.sub, 3);
      Tensor ref = interpret(task.sub.graph, inputs).at(0);
      EXPECT_LE(max_rel_violation(run_task(t, inputs), ref, 1e-3, 1e-3), 1.0);
    }
    EXPECT_GE(mlas, 1)
        << "no expert with the accumulator tile at level 2 over a weight packed once";
  }
  EXPECT_GE(dense, 2);
}

// A matrix product whose weight is larger than the L2 gets, besides the forms above, experts
// that copy the weight's panel once per S0 tile (Pack level 2, kPackS0 in space_internal.h) and
// read it in long K chunks from every row block (expert.cc; GPT-2's logits); with an L2 that
// holds the weight it gets none of them. They compute the right answer.
TEST(Space, MatmulExpertsStreamWeightsLargerThanTheL2) {
  Graph g = hand_built_graphs().at(2);  // Gemm [24, 40] x [40, 48] + bias: B is 7,680 bytes
  prepare_graph(g);
  Subgraph sub = partition_graph(g).tasks.at(0).sub;
  HardwareInfo hw = detect_hardware();
  TaskSpace space = build_space(lower_subgraph(sub), hw);
  ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
  const int weight = (int)space.stages[space.anchor].operands.size() - 1;
  auto streamed = [&](const Program& p) {
    const int64_t* pack = anchor_slot(space, p, StepKind::Pack, weight);
    const int64_t* level = anchor_slot(space, p, StepKind::ComputeAt);
    return pack && *pack == kPackS0 && level && *level == 2;
  };
  hw.l2_bytes = 1 << 20;
  for (const Program& p : expert_programs(space, hw))
    EXPECT_FALSE(streamed(p)) << program_str(space, p);
  hw.l2_bytes = 4 << 10;
  std::vector<Tensor> inputs = random_inputs(sub, 5);
  Tensor ref = interpret(sub.graph, inputs).at(0);
  int n = 0;
  for (const Program& p : expert_programs(space, hw)) {
    if (!streamed(p)) continue;
    n++;
    SCOPED_TRACE(program_str(space, p));
    EXPECT_EQ(*anchor_slot(space, p, StepKind::Tile, 0, /*reduction=*/true), 40);  // whole K
    Tensor got;
    ASSERT_TRUE(run_program(sub, space, p, inputs, &got));
    EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0);
  }
  EXPECT_GE(n, 1);
}

// A weight larger than the L2 whose column extent no register block divides (GPT-2's 50257
// logits) is still packed once in blocks of the register block's width: the column var padded
// to whole blocks, the blocked copy's last block zero-filled, the output's last tile guarded
// instead of shifted inwards (apply_tiled.cc), so that every block is read as whole vectors.
// Such an expert exists (before session 60 a weight was blocked only when the block divided the
// extent), its weight is blocked past the extent, and it computes the right answer. Written for
// AVX2's 8 lanes whatever this machine has: 50's pads (51, 52, 54, 56) include 56 = 50 rounded
// up to a block of 8 or 24, none rounded up to AVX-512's 16 or 32 (the test failed on an AVX-512
// machine, session 67); Halide splits the vectors for the machine at hand.
TEST(Space, MatmulExpertsBlockWeightsPastAColumnExtentNoBlockDivides) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {8, 16});
  ValueId w = g.add_constant("w0", random_tensor(DType::F32, {16, 50}, 3));
  g.mark_output(g.add(Op::MatMul, {x, w}));
  prepare_graph(g);
  Subgraph sub = partition_graph(g).tasks.at(0).sub;
  HardwareInfo hw = detect_hardware();
  hw.isa = "avx2";
  hw.vector_bits = 256;
  hw.l2_bytes = 1 << 10;
  hw.l3_bytes = 2 << 10;
  TaskSpace space = build_space(lower_subgraph(sub), hw);
  ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
  const int weight = (int)space.stages[space.anchor].operands.size() - 1;
  std::vector<Tensor> inputs = random_inputs(sub, 5);
  Tensor ref = interpret(sub.graph, inputs).at(0);
  int past = 0;
  for (const Program& p : expert_programs(space, hw)) {
    const int64_t* pack = anchor_slot(space, p, StepKind::Pack, weight);
    if (!pack || *pack != kPackRoot) continue;
    LoweredTask t = lower_subgraph(sub);
    apply_program(t, space, p);
    bool blocked_past = false;
    for (const InputLayout& l : t.input_storage) blocked_past |= l.block > 0 && 50 % l.block != 0;
    if (!blocked_past) continue;
    past++;
    SCOPED_TRACE(program_str(space, p));
    EXPECT_LE(max_rel_violation(run_task(t, inputs), ref, 1e-3, 1e-3), 1.0);
  }
  EXPECT_GE(past, 1) << "no expert packs the weight once in blocks past its 50 columns";
  // Those are the streaming experts over the weight packed once (streamed_root_expert, the
  // zero-shot rule's); with a last-level cache that holds the weight there are none.
  int streamed = 0;
  for (const Program& p : expert_programs(space, hw)) {
    const int64_t* pack = anchor_slot(space, p, StepKind::Pack, weight);
    const bool s = streamed_root_expert(space, hw, p);
    streamed += s;
    if (s) EXPECT_EQ(*pack, kPackRoot) << program_str(space, p);
  }
  EXPECT_GE(streamed, 1);
  HardwareInfo big = hw;
  big.l3_bytes = 1 << 20;
  for (const Program& p : expert_programs(space, big))
    EXPECT_FALSE(streamed_root_expert(space, big, p)) << program_str(space, p);
}

// A convolution whose output rows hold a vector gets expert programs that compute it as a matrix
// product along the width (the vectorized var is d0, NCHW's contiguous one), with the width
// padded to a multiple of the column block when it has none (28); they are valid and right.
TEST(Space, ConvolutionExpertsIncludeWidthVectorizedPrograms) {
  HardwareInfo hw = detect_hardware();
  struct Case {
    int64_t ci, co, h, w, k;
  };
  for (Case cs : {Case{12, 20, 3, 28, 1}, Case{6, 8, 4, 20, 3}}) {
    SCOPED_TRACE("conv " + std::to_string(cs.k) + "x" + std::to_string(cs.k) + " width " +
                 std::to_string(cs.w));
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, cs.ci, cs.h, cs.w});
    const int64_t pad = cs.k / 2;
    ValueId w = g.add_constant("w0", random_tensor(DType::F32, {cs.co, cs.ci, cs.k, cs.k}, 3));
    ValueId b = g.add_constant("w1", random_tensor(DType::F32, {cs.co}, 4));
    ValueId y = g.add(Op::Conv, {x, w, b},
                      {{"strides", V{1, 1}},
                       {"dilations", V{1, 1}},
                       {"pads", V{pad, pad, pad, pad}},
                       {"group", int64_t(1)}});
    g.mark_output(g.add(Op::Relu, {y}));
    prepare_graph(g);
    Subgraph sub = partition_graph(g).tasks.at(0).sub;
    TaskSpace space = build_space(lower_subgraph(sub), hw);
    ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
    std::vector<Tensor> inputs = random_inputs(sub, 11);
    Tensor ref = interpret(sub.graph, inputs).at(0);
    int along_width = 0, padded = 0;
    for (const Program& p : expert_programs(space, hw)) {
      const int64_t* vectorized = anchor_slot(space, p, StepKind::Vectorize);
      const int64_t* pad = anchor_slot(space, p, StepKind::Pad, 0);
      const bool width = vectorized && *vectorized == 0, pads = pad && *pad > 1;
      if (!width) continue;
      along_width++;
      padded += pads;
      ASSERT_TRUE(is_valid_program(space, p));
      LoweredTask t = lower_subgraph(sub);
      apply_program(t, space, p);
      Tensor got = run_task(t, inputs);
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << program_str(space, p);
    }
    EXPECT_GE(along_width, 4);
    // 28 has no multiple of a two-vector block (8 lanes or more): padded to 32.
    if (cs.w == 28 && hw.vector_bits >= 256) {
      EXPECT_GE(padded, 1);
    }
  }
}

// A dense channel-blocked convolution's expert programs keep the accumulator per S1 tile in some
// and per register block (ComputeAt level 3) in others (expert.cc, nchwc_targets). Each is valid
// (the property test checks their results).
TEST(Space, BlockedConvolutionExpertsKeepTheAccumulatorAtTwoLevels) {
  HardwareInfo hw = detect_hardware();
  int dense = 0;
  for (const TaskCase& c : representative_tasks(hw)) {
    const std::string fam = family(c.sub.kind);
    if (fam != "conv2d_nchwc" || c.name.find("/plain") != std::string::npos) continue;
    TaskSpace space = build_space(lower_subgraph(c.sub), hw);
    if (space.rule != SpaceRule::TiledAnchor) continue;
    SCOPED_TRACE(c.name);
    dense++;
    std::set<int64_t> levels;
    for (const Program& p : expert_programs(space, hw)) {
      ASSERT_TRUE(is_valid_program(space, p));
      if (const int64_t* level = anchor_slot(space, p, StepKind::ComputeAt)) levels.insert(*level);
    }
    EXPECT_TRUE(levels.count(1)) << "no expert with the accumulator per S1 tile";
    EXPECT_TRUE(levels.count(3)) << "no expert with the accumulator per register block";
  }
  EXPECT_GE(dense, 1);
}

// The register block of a dense blocked convolution's expert program fits the register file (15 ymm
// accumulators with AVX2, 31 zmm with AVX-512: one register left for the broadcast value); on
// AVX2 it keeps at least 6 FMA chains where any of its experts does, and the 56-wide 3x3 layer
// has MLAS's 4 channel blocks x 3 pixels (expert.cc, nchwc_targets). ResNet-18 at 224's
// width of 7 takes no 3-pixel block.
TEST(Space, BlockedConvolutionExpertBlocksFitTheRegisterFile) {
  for (const char* key : kAvx2AndAvx512) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const int64_t most = hw.vector_bits >= 512 ? 31 : 15;
    int convs = 0, mlas = 0;
    for (const BlockedConv& c : resnet18_blocked_convs(hw)) {
      const TaskSpace& space = c.space;
      SCOPED_TRACE(c.name);
      convs++;
      const SpaceStage& st = space.stages[space.anchor];
      std::vector<int64_t> blocks;
      for (const Program& p : expert_programs(space, hw)) {
        // The S3 factor of every output var but the block lane (d0): one accumulator vector each.
        int64_t acc = 1, width = 0, channels = 0;
        size_t at = 0;
        for (const Slot& s : space.slots) {
          if (s.kind == StepKind::Tile && s.stage == space.anchor && !s.reduction && s.var > 0) {
            acc *= p.values[at + 2];
            if (s.var == 1) width = p.values[at + 2];
            if (s.var == 3) channels = p.values[at + 2];
          }
          at += s.arity;
        }
        EXPECT_LE(acc, most) << program_str(space, p);
        blocks.push_back(acc);
        if (st.extents[1] == 56 && channels == 4 && width == 3) mlas++;
      }
      ASSERT_FALSE(blocks.empty());
      const int64_t top = *std::max_element(blocks.begin(), blocks.end());
      if (hw.vector_bits == 256) {
        for (int64_t b : blocks) EXPECT_GE(b, std::min<int64_t>(6, top));
      }
    }
    EXPECT_GE(convs, 10);
    if (hw.vector_bits == 256) {
      EXPECT_GE(mlas, 2);  // the 56-wide 3x3 layers, accumulator at two levels
    }
  }
}

// MLAS's loop order for blocked convolutions with kernel taps (expert.cc): an expert computes
// the accumulator per S1 tile (level 2) of whole output rows -- as many rows as keep it within
// 16 KiB -- sums the input channel blocks one or two at a time outside the register block's walk
// over that tile, and reads a copy of the padded input. The tile is whole rows: a width without a
// multiple of the block (56 by 3) is padded and the tile is the padded width (57), one tile per
// row. AVX2 and AVX-512 alike. 1x1 convolutions get none of these; on AVX-512 they get MLAS's
// pointwise loop order instead: one expert whose 4 x ~6 register blocks walk the whole (padded)
// width at level 2 while the input blocks are summed 8 at a time outside the walk (the block
// lanes whole inside it, nothing copied; unit stride only), and it computes the right answer.
TEST(Space, BlockedConvolutionExpertsSumInputBlocksOutsideTheRowWalk) {
  for (const char* key : kAvx2AndAvx512) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const bool avx2 = hw.vector_bits == 256;
    int with_taps = 0, without = 0;
    bool pointwise_checked = false;
    // ResNet-18's 1x1 layers are all strided: ResNet-50's bottlenecks bring unit-stride ones.
    std::vector<BlockedConv> convs = resnet18_blocked_convs(hw);
    for (BlockedConv& c : blocked_convs(hw, "resnet50:image=64")) convs.push_back(std::move(c));
    for (const BlockedConv& c : convs) {
      const TaskSpace& space = c.space;
      const SpaceStage& st = space.stages[space.anchor];
      if (st.rextents.size() != 4) continue;  // depthwise: taps only
      const bool taps = st.rextents[1] * st.rextents[2] > 1;
      SCOPED_TRACE(c.name);
      (taps ? with_taps : without)++;
      int mlas_order = 0, three_pixels = 0, pointwise = 0;
      for (const Program& p : expert_programs(space, hw)) {
        const int64_t* at_level = anchor_slot(space, p, StepKind::ComputeAt);
        const int64_t* at_pad = anchor_slot(space, p, StepKind::Pad, 1);
        const int64_t* at_copy = anchor_slot(space, p, StepKind::Pack, 0);
        const int64_t* at_chunk = anchor_slot(space, p, StepKind::Tile, 3, /*reduction=*/true);
        const int64_t level = at_level ? *at_level : -1, pad = at_pad ? *at_pad : 1;
        const int64_t input_copy = at_copy ? *at_copy : -1, chunk = at_chunk ? *at_chunk : -1;
        const std::array<int64_t, 3> width = anchor_tile(space, p, 1);
        int64_t tile_bytes = 4 * st.lanes, rows = 1;
        size_t at = 0;
        for (const Slot& s : space.slots) {
          if (s.kind == StepKind::Tile && s.stage == space.anchor && !s.reduction && s.var > 0) {
            tile_bytes *= p.values[at + 1] * p.values[at + 2];  // S2 x S3: the level-2 tile
            if (s.var == 2) rows = p.values[at + 1] * p.values[at + 2];
          }
          at += s.arity;
        }
        // The taps outside the channel reduction (AVX-512's other level-2 form, tested below).
        const int64_t* at_tap = anchor_slot(space, p, StepKind::Tile, 1, /*reduction=*/true);
        if (level != 2 || (taps && at_tap && *at_tap == 1)) continue;
        if (!taps) {
          // A strided layer's twin copying the input once per run: tested by
          // StridedPointwiseExpertsAlsoCopyTheirInputOncePerRun.
          if (space.strided_input && input_copy == kPackRoot) continue;
          pointwise++;
          const int64_t lanes = *anchor_slot(space, p, StepKind::Tile, 0, /*reduction=*/true);
          EXPECT_EQ(lanes, st.rextents[0]) << program_str(space, p);
          EXPECT_EQ(chunk, std::min<int64_t>(8, st.rextents[3])) << program_str(space, p);
          EXPECT_EQ(width[0] * width[1] * width[2], (st.extents[1] + pad - 1) / pad * pad)
              << program_str(space, p);
          // 6 pixels, or the nearest the width offers unpadded (4 or 7 along 28, 7 along 7).
          EXPECT_GE(width[2], 4) << program_str(space, p);
          EXPECT_LE(width[2], 7) << program_str(space, p);
          EXPECT_EQ(anchor_tile(space, p, 3)[2], std::min<int64_t>(4, st.extents[3]))
              << program_str(space, p);
          EXPECT_LE(input_copy, 0) << program_str(space, p);  // nothing copied
          if (!pointwise_checked) {
            pointwise_checked = true;
            expect_right_answer(c.sub, space, p, 7);
          }
          continue;
        }
        mlas_order++;
        three_pixels += width[2] == 3;
        EXPECT_EQ(width[0] * width[1] * width[2], (st.extents[1] + pad - 1) / pad * pad)
            << program_str(space, p);
        EXPECT_TRUE(chunk == 1 || chunk == 2) << program_str(space, p);
        EXPECT_GT(input_copy, 0) << program_str(space, p);  // the padded input copied
        EXPECT_LE(tile_bytes, 16 << 10) << program_str(space, p);
        // More than one row whenever two rows' accumulators fit.
        if (tile_bytes / rows * 2 <= (16 << 10)) {
          EXPECT_GT(rows, 1) << program_str(space, p);
        }
      }
      if (taps) {
        EXPECT_GE(mlas_order, 2);
        // AVX2: MLAS's 4 x 3, padded where the width has no multiple of 3 (7 -> 9 is too much
        // padding)
        if (avx2 && st.extents[1] >= 14) {
          EXPECT_GE(three_pixels, 1);
        }
      } else {
        EXPECT_EQ(mlas_order, 0);
        EXPECT_EQ(pointwise, avx2 || !blocked_conv_unit_stride(c.sub) ? 0 : 1);
      }
    }
    EXPECT_GE(with_taps, 5);
    EXPECT_GE(without, 3);
    EXPECT_EQ(pointwise_checked, !avx2);
  }
}

// AVX2's MLAS kernel order inside the row walk (expert_nchwc.cc): every dense blocked
// convolution with kernel rows gets exactly one expert with the kernel rows (r2) outside the
// register block and the columns and lanes whole inside it, 4 channel blocks x 2 pixels, one input
// block at a time, the accumulator per level-2 tile and the padded input copied once per run; it
// computes the right answer. 1x1 layers (no taps) get none; AVX-512 none of this form.
TEST(Space, Avx2BlockedConvolutionExpertWithKernelRowsOutside) {
  for (const char* key : kAvx2AndAvx512) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const bool avx2 = hw.vector_bits == 256;
    int with_rows = 0;
    bool checked = false;
    for (const BlockedConv& c : resnet18_blocked_convs(hw)) {
      const TaskSpace& space = c.space;
      const SpaceStage& st = space.stages[space.anchor];
      if (st.rextents.size() != 4) continue;  // depthwise: taps only
      SCOPED_TRACE(c.name);
      const bool rows = st.rextents[2] > 1;
      with_rows += rows;
      int found = 0;
      for (const Program& p : expert_programs(space, hw)) {
        const int64_t* r = anchor_slot(space, p, StepKind::Tile, 2, /*reduction=*/true);
        const int64_t* cols = anchor_slot(space, p, StepKind::Tile, 1, /*reduction=*/true);
        const int64_t* lanes = anchor_slot(space, p, StepKind::Tile, 0, /*reduction=*/true);
        const int64_t* inputs = anchor_slot(space, p, StepKind::Tile, 3, /*reduction=*/true);
        const int64_t* copy = anchor_slot(space, p, StepKind::Pack, 0);
        if (!(r && cols && lanes && inputs && copy)) continue;
        if (!(*r == 1 && *cols == st.rextents[1] && *lanes == st.rextents[0] && *inputs == 1 &&
              *copy == kPackRoot))
          continue;
        if (*anchor_slot(space, p, StepKind::ComputeAt) != 2) continue;
        if (anchor_tile(space, p, 3)[2] != std::min<int64_t>(4, st.extents[3])) continue;
        if (anchor_tile(space, p, 1)[2] != 2) continue;
        found++;
        if (!checked) {
          checked = true;
          expect_right_answer(c.sub, space, p, 11);
        }
      }
      EXPECT_EQ(found, avx2 && rows ? 1 : 0);
    }
    EXPECT_GE(with_rows, 5);
    EXPECT_EQ(checked, avx2);
  }
}

// AVX-512's other blocked-conv experts (expert.cc, nchwc_targets): the block lanes' reduction
// in chunks whose loop is unrolled with the register block (accumulators x chunk within the
// unroll limit of 128, the accumulator per register block), one of them with the input blocks
// outside it (R1 of 1); with taps, one tap loop split out of the inner reduction (each such
// program also with one more loop parallel), and the tap loops outside the channel reduction
// (R1 of 1 each, the input blocks whole) with the padded input copied per S0 tile; with taps,
// every chunked form without a tap split also with the padded input copied at root. None on AVX2.
TEST(Space, Avx512BlockedConvExpertsChunkTheBlockLanes) {
  for (const char* key : kAvx2AndAvx512) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const bool avx2 = hw.vector_bits == 256;
    int dense = 0;
    for (const BlockedConv& c : resnet18_blocked_convs(hw)) {
      const TaskSpace& space = c.space;
      const SpaceStage& st = space.stages[space.anchor];
      if (st.rextents.size() != 4) continue;  // depthwise: taps only
      SCOPED_TRACE(c.name);
      dense++;
      const bool taps = st.rextents[1] * st.rextents[2] > 1;
      int chunked = 0, inputs_out = 0, taps_out = 0, tap_split = 0, twins = 0, rooted = 0;
      bool checked = false, twin_checked = false, root_checked = false;
      const std::vector<Program> experts = expert_programs(space, hw);
      std::set<std::vector<int64_t>> all;
      for (const Program& p : experts) all.insert(p.values);
      for (const Program& p : experts) {
        const int64_t level = *anchor_slot(space, p, StepKind::ComputeAt);
        const int64_t lanes = *anchor_slot(space, p, StepKind::Tile, 0, /*reduction=*/true);
        const int64_t* tap = anchor_slot(space, p, StepKind::Tile, 1, /*reduction=*/true);
        const int64_t* inputs = anchor_slot(space, p, StepKind::Tile, 3, /*reduction=*/true);
        int64_t acc = 1;
        for (int var = 1; var <= 3; var++) acc *= std::max<int64_t>(1, anchor_tile(space, p, var)[2]);
        if (lanes < st.rextents[0]) {
          chunked++;
          EXPECT_EQ(level, 3) << program_str(space, p);
          EXPECT_LE(acc * lanes, 128) << program_str(space, p);
          inputs_out += inputs && *inputs == 1 && lanes == 2;
          // One tap loop split out of the inner reduction (the kernel row or the column), not both.
          const int64_t* col = anchor_slot(space, p, StepKind::Tile, 2, /*reduction=*/true);
          const int64_t* pack = anchor_slot(space, p, StepKind::Pack, 0);
          if (taps && pack && *pack == kPackRoot && tap && col && *tap > 1 && *col > 1) {
            // The padded input copied at root: the same program without the copy is an expert too.
            rooted++;
            Program bare = p;
            bare.values[pack - p.values.data()] = kPackNone;
            EXPECT_TRUE(all.count(bare.values)) << program_str(space, p);
            if (!root_checked) {
              root_checked = true;
              expect_right_answer(c.sub, space, p, 7);
            }
          }
          if (taps && tap && col && (*tap == 1) != (*col == 1)) {
            tap_split++;
            if (!checked) {  // and it computes the right answer
              checked = true;
              expect_right_answer(c.sub, space, p, 5);
            }
            // Its twin with one more loop parallel.
            const int64_t* par = parallel_slot(space, p);
            ASSERT_NE(par, nullptr);
            Program twin = p;
            twin.values[par - p.values.data()]++;
            if (all.count(twin.values)) {
              twins++;
              if (!twin_checked) {
                twin_checked = true;
                expect_right_answer(c.sub, space, twin, 6);
              }
            }
          }
        }
        if (taps && level == 2 && tap && *tap == 1) {
          taps_out++;
          EXPECT_EQ(*anchor_slot(space, p, StepKind::Tile, 2, /*reduction=*/true), 1);
          EXPECT_EQ(*inputs, st.rextents[3]) << program_str(space, p);
          EXPECT_EQ(*anchor_slot(space, p, StepKind::Pack, 0), kPackS0) << program_str(space, p);
        }
      }
      if (avx2) {
        EXPECT_EQ(chunked + taps_out, 0);
      } else {
        EXPECT_GE(chunked, 3);
        EXPECT_GE(inputs_out, 1);
        if (taps) {
          EXPECT_GE(taps_out, 1);
          // Every chunked form also with its kernel row and its column split out, each of those
          // also with one more loop parallel where there is one (the twins): chunked = base +
          // 2 base splits + twins + the base copied at root, tap_split = 2 base + twins.
          EXPECT_GE(rooted, 1);
          EXPECT_EQ(tap_split * 3 - (chunked - rooted) * 2, twins);
          EXPECT_EQ(tap_split - twins, 2 * rooted);
          EXPECT_GE(twins, 1);
        }
      }
    }
    EXPECT_GE(dense, 8);
  }
}

// Depthwise blocked convolutions with a channel block per core get experts whose outermost
// loop alone is parallel (each core its own blocks, expert.cc nchwc_targets) beside the fused
// blocks x rows split, and such a program computes the right answer.
TEST(Space, DepthwiseExpertsAlsoGiveEachCoreItsChannelBlocks) {
  const HardwareInfo hw = parse_hardware_key(kAvx2AndAvx512[1]);
  ASSERT_EQ(hw.cores, 2);
  Graph g = build_zoo_model("mobilenet_v2:image=64", 7);
  prepare_graph(g);
  block_channels(g, hw.vector_bits / 32);
  int many = 0, checked = 0;
  for (const Task& t : partition_graph(g).tasks) {
    if (family(t.sub.kind) != "depthwise_conv2d_nchwc") continue;
    TaskSpace space = build_space(lower_subgraph(t.sub), hw);
    if (space.rule != SpaceRule::TiledAnchor) continue;
    const SpaceStage& st = space.stages[space.anchor];
    SCOPED_TRACE(t.sub.kind + " " + std::to_string(t.id));
    std::set<int64_t> parallel;
    for (const Program& p : expert_programs(space, hw)) {
      const int64_t* par = parallel_slot(space, p);
      ASSERT_NE(par, nullptr) << program_str(space, p);
      parallel.insert(*par);
      if (*par == 1 && st.extents[3] >= hw.cores && checked < 2) {
        checked++;
        expect_right_answer(t.sub, space, p, 11);
      }
    }
    if (st.extents[3] >= hw.cores) {  // blocks enough for every core
      many++;
      EXPECT_TRUE(parallel.count(1)) << "no expert with the channel blocks alone parallel";
    }
  }
  EXPECT_GE(many, 4);
  EXPECT_EQ(checked, 2);
}

// ResNet's downsampling shortcuts (a 1x1 convolution over the flattened pixels of a strided Slice,
// session 62): on one core every expert that reads the input where it lies has a twin copying it
// densely once per run (copy_twins), and only those tasks get such copies; on two cores only
// layers of 50 MFLOP or more do, and the copy's outermost loop of several iterations is parallel.
// Twins compute the right answer.
namespace {
struct StridedTwins {
  int strided = 0, plain = 0, twinned_tasks = 0, checked = 0;
};
void check_strided_twins(const HardwareInfo& hw, const std::vector<BlockedConv>& convs,
                         StridedTwins* out) {
  for (const BlockedConv& c : convs) {
    const TaskSpace& space = c.space;
    const SpaceStage& st = space.stages[space.anchor];
    if (st.rextents.size() != 4 || st.rextents[1] * st.rextents[2] > 1) continue;  // 1x1 only
    SCOPED_TRACE(c.name);
    bool slice = false;
    for (const Node& n : c.sub.graph.nodes)
      if (n.op == Op::Slice) slice = true;
    EXPECT_EQ(space.strided_input, slice);
    const std::vector<Program> experts = expert_programs(space, hw);
    int in_place = 0, copied = 0, twinned = 0;
    for (const Program& p : experts) {
      const int64_t* at_copy = anchor_slot(space, p, StepKind::Pack, 0);
      if (!at_copy || *at_copy == kPackNone) {
        in_place++;
        for (const Program& q : experts) twinned += copy_twins(space, p, q);
      } else if (*at_copy == kPackRoot) {
        copied++;
        if (out->checked < 2 && slice) {
          out->checked++;
          expect_right_answer(c.sub, space, p, 5);
          if (hw.cores > 1) {
            LoweredTask lt = lower_subgraph(c.sub);
            apply_program(lt, space, p);
            // The copy (the first producer) loops in parallel before the output does.
            const std::string nest = loop_nest_str(lt);
            const size_t copy = nest.find("produce "), then = nest.find("produce ", copy + 1);
            ASSERT_NE(then, std::string::npos) << nest;
            EXPECT_NE(nest.substr(copy, then - copy).find("parallel"), std::string::npos) << nest;
          }
        }
      }
    }
    double flops = 2;
    for (int64_t e : st.extents) flops *= (double)e;
    for (int64_t e : st.rextents) flops *= (double)e;
    if (slice) {
      out->strided++;
      EXPECT_GE(in_place, 4);
      const bool twins = hw.cores == 1 || flops >= 50e6;
      out->twinned_tasks += twins;
      EXPECT_EQ(twinned, twins ? in_place : 0);
      EXPECT_EQ(copied, twins ? in_place : 0);
    } else {
      out->plain++;
      EXPECT_EQ(copied, 0);
    }
  }
}
}  // namespace

// A blocked convolution whose input is converted from the plain layout inside its task (a
// Transpose prologue: ConvNeXt's depthwise layers read a residual stream kept plain): with
// kernel taps every expert reads the input copied once per run (ConvNeXt-T's 7x7 depthwise layers
// ran 10x slower in place), and computes the right answer; a 1x1 layer's experts read it in place
// (the copy cost EfficientNet-B0 15%). Tasks that read blocked values are not marked.
TEST(Space, ExpertsWithTapsCopyAnInputConvertedInTheTask) {
  const HardwareInfo hw = parse_hardware_key("isa=avx512,cores=1,vec=16,l1=32k,l2=1m,l3=32m");
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 32, 14, 14});
  ValueId y = g.add_input("y", DType::F32, {1, 32, 14, 14});
  auto conv = [&](ValueId in, int64_t k, int64_t group, uint64_t seed) {
    ValueId w = g.add_constant(g.unique_name("w"),
                               random_tensor(DType::F32, {32, 32 / group, k, k}, seed));
    return g.add(Op::Conv, {in, w},
                 {{"strides", std::vector<int64_t>{1, 1}}, {"dilations", std::vector<int64_t>{1, 1}},
                  {"pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2}}, {"group", group}});
  };
  ValueId d = conv(x, 7, 32, 1);                      // depthwise 7x7 of the plain input
  g.mark_output(d);
  g.mark_output(conv(y, 1, 1, 2));                    // 1x1 of the plain input
  g.mark_output(conv(g.add(Op::Relu, {d}), 3, 1, 3));  // 3x3 of a blocked value
  prepare_graph(g);
  block_channels(g, 16);
  int converted_taps = 0, converted_1x1 = 0, blocked = 0;
  for (const Task& t : partition_graph(g).tasks) {
    if (t.sub.kind.find("conv2d_nchwc") == std::string::npos) continue;
    SCOPED_TRACE(t.sub.kind);
    const TaskSpace space = build_space(lower_subgraph(t.sub), hw);
    ASSERT_EQ(space.rule, SpaceRule::TiledAnchor);
    const SpaceStage& st = space.stages[space.anchor];
    int64_t taps = 1;
    for (size_t i = 0; i < st.rextents.size(); i++)
      if (t.sub.kind.find("depthwise") != std::string::npos || i == 1 || i == 2)
        taps *= st.rextents[i];
    const std::vector<Program> experts = expert_programs(space, hw);
    ASSERT_FALSE(experts.empty());
    if (!space.converted_input) {
      blocked++;
      continue;
    }
    (taps > 1 ? converted_taps : converted_1x1)++;
    for (const Program& p : experts) {
      const int64_t* copy = anchor_slot(space, p, StepKind::Pack, 0);
      ASSERT_NE(copy, nullptr);
      if (taps > 1) {
        EXPECT_EQ(*copy, kPackRoot) << program_str(space, p);
      } else {
        EXPECT_NE(*copy, kPackRoot) << program_str(space, p);
      }
    }
    expect_right_answer(t.sub, space, experts.front(), 9);
  }
  EXPECT_EQ(converted_taps, 1);
  EXPECT_EQ(converted_1x1, 1);
  EXPECT_EQ(blocked, 1);
}

TEST(Space, StridedPointwiseExpertsAlsoCopyTheirInputOncePerRun) {
  for (const char* key : {"isa=avx2,cores=1,vec=8,l1=32k,l2=512k,l3=32m",
                          "isa=avx512,cores=1,vec=16,l1=32k,l2=1m,l3=32m"}) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    std::vector<BlockedConv> convs = resnet18_blocked_convs(hw, 64);
    for (BlockedConv& c : blocked_convs(hw, "resnet50:image=64")) convs.push_back(std::move(c));
    StridedTwins n;
    check_strided_twins(hw, convs, &n);
    EXPECT_GE(n.strided, 3);
    EXPECT_EQ(n.twinned_tasks, n.strided);
    EXPECT_GE(n.plain, 3);
    EXPECT_EQ(n.checked, 2);
  }
  // Two cores: ResNet-18's small layers keep reading in place, ResNet-50's at 224 (205 MFLOP)
  // get twins whose copy runs in parallel.
  const HardwareInfo hw = parse_hardware_key(kAvx2AndAvx512[1]);
  ASSERT_EQ(hw.cores, 2);
  StridedTwins small, large;
  check_strided_twins(hw, resnet18_blocked_convs(hw, 64), &small);
  EXPECT_GE(small.strided, 2);
  EXPECT_EQ(small.twinned_tasks, 0);
  check_strided_twins(hw, blocked_convs(hw, "resnet50:image=224"), &large);
  EXPECT_GE(large.strided, 2);
  EXPECT_EQ(large.twinned_tasks, large.strided);
  EXPECT_EQ(large.checked, 2);
}

// A padded width tiled whole (the level-2 experts of widths without a multiple of 3: 8 -> 9,
// 4 -> 6, 2 -> 3 in ResNet-18 @32): the loops walk the real width, the last register block
// partial; every such program computes the right answer.
TEST(Space, PaddedWholeRowTilesComputeTheRightAnswer) {
  const HardwareInfo hw = parse_hardware_key(kAvx2AndAvx512[0]);
  int whole = 0;
  for (const BlockedConv& c : resnet18_blocked_convs(hw, 32)) {
    const TaskSpace& space = c.space;
    const int64_t width = space.stages[space.anchor].extents[1];
    std::vector<Tensor> inputs = random_inputs(c.sub, 3);
    Tensor ref = interpret(c.sub.graph, inputs).at(0);
    for (const Program& p : expert_programs(space, hw)) {
      const std::array<int64_t, 3> tile = anchor_tile(space, p, 1);
      if (tile[0] * tile[1] * tile[2] <= width) continue;
      whole++;
      LoweredTask lt = lower_subgraph(c.sub);
      apply_program(lt, space, p);
      Tensor got = run_task(lt, inputs);
      ASSERT_EQ(got.shape(), ref.shape());
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << program_str(space, p);
    }
  }
  EXPECT_GE(whole, 4);
}

// The kernel benchmark's blocked convolution (bench/kernels.cc) is ResNet-50's 3x3 layer as tlm
// runs it in a model: one ConvNchwc + Relu task from [1, 64/B, 56, 56, B] to the same shape (no
// layout conversion inside), whose expert programs are valid.
TEST(Space, BenchmarkBlockedConvolutionIsTheModelsTask) {
  for (const char* key : kAvx2AndAvx512) {
    const HardwareInfo hw = parse_hardware_key(key);
    SCOPED_TRACE(key);
    const int block = hw.vector_bits / 32;
    Subgraph sub = resnet50_conv3x3_blocked_subgraph(block);
    EXPECT_EQ(family(sub.kind), "conv2d_nchwc");
    const Shape blocked{1, 64 / block, 56, 56, block};
    EXPECT_EQ(sub.graph.value(sub.graph.inputs.at(0)).shape, blocked);
    EXPECT_EQ(sub.graph.value(sub.graph.outputs.at(0)).shape, blocked);
    for (const Node& n : sub.graph.nodes)  // no layout conversion inside the task
      EXPECT_TRUE(n.op == Op::ConvNchwc || n.op == Op::Relu) << op_name(n.op);
    EXPECT_NEAR(sub.flops, 2.0 * 64 * 64 * 9 * 56 * 56, 0.01 * sub.flops);
    TaskSpace space = build_space(lower_subgraph(sub), hw);
    const std::vector<Program> experts = expert_programs(space, hw);
    ASSERT_FALSE(experts.empty());
    EXPECT_TRUE(is_valid_program(space, experts.front()));
  }
}

// Row splits (space.h): among random programs of a blocked convolution, those that split its
// channel blocks between two threads have a row-split variant, which splits rows, stays valid and
// computes the right answer; programs of other kinds (a plain convolution, a depthwise blocked
// one) are never blocked_conv and have none.
TEST(Space, RowSplitVariantsSplitRowsAndComputeTheRightAnswer) {
  HardwareInfo hw = detect_hardware();
  int convs = 0;
  for (const TaskCase& c : representative_tasks(hw)) {
    TaskSpace space = build_space(lower_subgraph(c.sub), hw);
    const bool dense_blocked = family(c.sub.kind) == "conv2d_nchwc" &&
                               space.rule == SpaceRule::TiledAnchor &&
                               c.name.find("/plain") == std::string::npos;
    SCOPED_TRACE(c.name);
    std::mt19937_64 rng(5);
    if (!dense_blocked) {
      EXPECT_FALSE(space.blocked_conv && family(c.sub.kind) != "conv2d_nchwc");
      Program p = sample_program(space, rng), v;
      if (!space.blocked_conv) {
        EXPECT_FALSE(row_split_variant(space, p, 2, &v));
        EXPECT_FALSE(splits_rows(space, p, 2));
      }
      continue;
    }
    convs++;
    ASSERT_TRUE(space.blocked_conv);
    std::vector<Tensor> inputs = random_inputs(c.sub, 3);
    Tensor ref = interpret(c.sub.graph, inputs).at(0);
    int variants = 0;
    for (int i = 0; i < 200 && variants < 4; i++) {
      Program p = sample_program(space, rng), v;
      if (!row_split_variant(space, p, 2, &v)) continue;
      variants++;
      EXPECT_FALSE(splits_rows(space, p, 2)) << program_str(space, p);
      EXPECT_TRUE(splits_rows(space, v, 2)) << program_str(space, v);
      ASSERT_TRUE(is_valid_program(space, v));
      Program again;
      EXPECT_FALSE(row_split_variant(space, v, 2, &again));  // already splits rows
      LoweredTask t = lower_subgraph(c.sub);
      apply_program(t, space, v);
      Tensor got = run_task(t, inputs);
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << program_str(space, v);
    }
    EXPECT_EQ(variants, 4);
  }
  EXPECT_GE(convs, 1);
}

// Random sampling keeps a pad slot's extent with chance 3/4 (uniformly, most random programs were
// padded: slower to compile and to run), the other options uniformly; samples stay valid.
TEST(Space, SamplingPrefersUnpaddedExtents) {
  HardwareInfo hw = detect_hardware();
  TaskSpace space = build_space(lower_subgraph(matmul_subgraph(56, 24, 50)), hw);
  std::mt19937_64 rng(3);
  std::map<int64_t, int> first_pad;  // value of the first pad slot -> count
  int64_t extent = 0;
  const int n = 2000;
  for (int i = 0; i < n; i++) {
    Program p = sample_program(space, rng);
    ASSERT_TRUE(is_valid_program(space, p));
    size_t pos = 0;
    for (const Slot& s : space.slots) {
      if (s.kind == StepKind::Pad) {
        first_pad[p.values[pos]]++;
        extent = s.extent;
        break;
      }
      pos += s.arity;
    }
  }
  const size_t options = pad_options(extent).size();  // 56 or 50: 4 or 5 options
  ASSERT_GE(options, 3u);
  ASSERT_EQ(first_pad.size(), options);  // every option reached
  EXPECT_NEAR(first_pad[1] / double(n), 0.75, 0.04);
  for (const auto& [m, count] : first_pad)
    if (m != 1) {
      EXPECT_NEAR(count / double(n), 0.25 / (options - 1), 0.03) << "pad " << m;
    }
}

TEST(Space, ZooTaskSpacesAreLarge) {
  HardwareInfo hw = detect_hardware();
  for (const char* spec : {"resnet50", "mobilenet_v2", "bert-base:seq=128,layers=1"}) {
    Graph g = build_zoo_model(spec, 1);
    prepare_graph(g);
    Partition part = partition_graph(g);
    double lo = 1e9, hi = 0;
    for (const Task& t : part.tasks) {
      TaskSpace space = build_space(lower_subgraph(t.sub), hw);
      std::printf("[space size] %-12s task %3d %-34s %-5s log10|S| %5.1f  slots %zu\n", spec, t.id,
                  t.sub.kind.c_str(), rule_name(space.rule), space.log10_size, space.slots.size());
      if (space.rule == SpaceRule::TiledAnchor)
        EXPECT_GT(space.log10_size, 3.0) << spec << " task " << t.id << " " << t.sub.kind;
      else
        EXPECT_GT(space.log10_size, 0.0) << spec << " task " << t.id << " " << t.sub.kind;
      lo = std::min(lo, space.log10_size);
      hi = std::max(hi, space.log10_size);
    }
    std::printf("[space size] %s: %zu tasks, log10|S| from %.1f to %.1f\n", spec, part.tasks.size(),
                lo, hi);
  }
}

}  // namespace
}  // namespace tlm::testing_space
