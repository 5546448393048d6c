// Sentences: subgraph tokens rebuild the identical task; sentence -> parse -> the same program and
// the same text for programs exercising every StepKind on tasks of every family; parse errors
// name the token; SentenceWriter generates exactly the sentences the printer prints.
#include "language/sentence.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "graph/passes.h"
#include "language/show.h"
#include "language/workloads.h"
#include "space/space_cases.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

HardwareInfo test_hw() {
  return parse_hardware_tokens({"isa=avx2", "cores=2", "vec=8", "l1=32k", "l2=1m", "l3=32m"});
}

// The unique tasks of the models the issue names, built once per process. GPT-2 small with one
// layer has the same unique tasks as with twelve (the layers are identical) and builds in a
// tenth of the time.
const std::vector<Subgraph>& round_trip_tasks() {
  static const std::vector<Subgraph> tasks = [] {
    std::vector<Subgraph> out;
    std::set<std::string> keys;
    for (const char* spec : {"resnet18", "mobilenet_v2", "bert-tiny", "gpt2:layers=1", "dcgan"})
      for (Subgraph& s : workload_tasks(spec))
        if (keys.insert(s.key).second) out.push_back(std::move(s));
    return out;
  }();
  return tasks;
}

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no UserError>";
}

TEST(SubgraphTokens, RebuildsTheIdenticalTaskForEveryTask) {
  const auto& tasks = round_trip_tasks();
  ASSERT_GT(tasks.size(), 50u);
  size_t max_tokens = 0;
  for (const Subgraph& s : tasks) {
    std::vector<std::string> t = subgraph_tokens(s);
    max_tokens = std::max(max_tokens, t.size());
    Subgraph back = subgraph_from_tokens(t);
    EXPECT_EQ(back.key, s.key) << join_tokens(t);
    EXPECT_EQ(back.kind, s.kind);
    EXPECT_DOUBLE_EQ(back.flops, s.flops);
    EXPECT_EQ(subgraph_tokens(back), t);
  }
  std::printf("subgraph tokens over %zu tasks: max %zu\n", tasks.size(), max_tokens);
}

TEST(SubgraphTokens, ConvTaskReadsAsExpected) {
  Graph g = build_zoo_model("resnet18", 0);
  prepare_graph(g);
  Partition p = partition_graph(g);
  // Task 3 of resnet18 is conv2d_add_relu over [1,64,56,56] (see `tlm extract resnet18`).
  const Subgraph* conv = nullptr;
  for (const Task& t : p.tasks)
    if (t.sub.kind == "conv2d_add_relu" && !conv) conv = &t.sub;
  ASSERT_TRUE(conv);
  EXPECT_EQ(join_tokens(subgraph_tokens(*conv)),
            "in0 1 64 56 56 in1 w0 64 64 3 3 w1 64 Conv in0 w0 w1 dilations 1 1 group 1 pads 1 1 "
            "1 1 strides 1 1 Add n0 in1 Relu n1");
}

TEST(SubgraphTokens, InlineScalarsAndTypes) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {4, 8});
  ValueId m = g.add_input("m", DType::Bool, {4, 8});
  ValueId k = g.add_constant("k", Tensor::scalar<float>(0.125f));
  ValueId i = g.add_constant("i", Tensor::from<int64_t>({1}, {3}));
  ValueId d = g.add(Op::Mul, {x, k});
  ValueId c = g.add(Op::Cast, {d}, {{"to", int64_t(1)}});
  ValueId s = g.add(Op::Add, {c, i});
  ValueId y = g.add(Op::Where, {m, s, g.add(Op::Mul, {s, i})});
  FusedGroup grp;
  for (int n = 0; n < (int)g.nodes.size(); n++) grp.nodes.push_back(n);
  grp.output = y;
  std::vector<ValueId> feeds;
  Subgraph sub = make_subgraph(g, grp, &feeds);
  std::vector<std::string> t = subgraph_tokens(sub);
  EXPECT_EQ(join_tokens(t),
            "in0 4 8 in1 bool 4 8 c0 i64 1 = 3 Mul in0 0.125 Cast n0 to 1 -> i64 4 8 Add n1 c0 "
            "Mul n2 c0 Where in1 n2 n3 -> i64 4 8");
  EXPECT_EQ(subgraph_from_tokens(t).key, sub.key);
}

TEST(SubgraphTokens, ErrorsNameTheToken) {
  auto parse = [](const std::string& s) {
    return error_of([&] { subgraph_from_tokens(split_tokens(s)); });
  };
  EXPECT_NE(parse("in0 4 8 Frob in0").find("token 4 ('Frob'): expected an operator"),
            std::string::npos);
  EXPECT_NE(parse("in0 4 8 Relu in1").find("token 5 ('in1'): not declared"), std::string::npos);
  EXPECT_NE(parse("in0 4 8 Relu n0").find("token 5 ('n0'): not computed before"),
            std::string::npos);
  EXPECT_NE(parse("in0 4 0 Relu in0").find("token 3 ('0')"), std::string::npos);
  EXPECT_NE(
      parse("in0 4 8 Relu in0 -> 4 9").find("Relu gives f32[4,8], the sentence says f32[4,9]"),
      std::string::npos);
  EXPECT_NE(parse("in0 4 8 Relu in0 -> 4 8").find("token 6 ('->'): not the canonical spelling"),
            std::string::npos);
  EXPECT_NE(parse("in1 4 8 Relu in1").find("token 1 ('in1'): expected in0"), std::string::npos);
  EXPECT_NE(parse("in0 4 8 Transpose in0 perm").find("perm"), std::string::npos);
  EXPECT_NE(parse("in0 4 8 Softmax in0 axis 1 2").find("axis"), std::string::npos);
  EXPECT_NE(parse("in0 4 8 w0 1 Add in0 w0").find("a weight has more than one element"),
            std::string::npos);
  EXPECT_NE(parse("in0 99999999999 99999999999 Relu in0").find("too large"), std::string::npos);
  EXPECT_NE(parse("").find("no operator"), std::string::npos);
}

// Sentences of sampled programs of every task; which StepKinds they exercised.
TEST(Sentence, RoundTripEveryTaskAndEveryStepKind) {
  HardwareInfo hw = test_hw();
  std::set<StepKind> kinds;
  std::set<std::string> families;
  std::mt19937_64 rng(7);
  for (const Subgraph& s : round_trip_tasks()) {
    LoweredTask lt = lower_subgraph(s);
    TaskSpace space = build_space(lt, hw);
    TaskPrinter printer(s, hw, space);
    for (const Slot& slot : space.slots) kinds.insert(slot.kind);
    families.insert(s.kind.substr(0, s.kind.find('_')));
    for (int i = 0; i < 2; i++) {
      Program p = sample_program(space, rng);
      Sentence sent = printer.sentence(p);
      std::string text = sent.to_text();
      ASSERT_EQ(printer.text(p), text);
      ASSERT_EQ(make_sentence(s, hw, space, p).to_text(), text);
      ASSERT_EQ(sent.size(), printer.sentence_size());
      ParsedSentence back = parse_sentence(text);
      EXPECT_EQ(back.program, p) << text;
      EXPECT_EQ(back.sub.key, s.key);
      EXPECT_EQ(back.sentence.to_text(), text);
      EXPECT_EQ(make_sentence(back.sub, back.hw, back.space, back.program).to_text(), text);
    }
  }
  EXPECT_EQ((int)kinds.size(), kStepKindCount) << "some StepKind never appeared in a space";
  for (const char* f : {"conv2d", "dense", "batch", "max", "global", "softmax", "layer", "elemwise",
                        "injective", "depthwise", "conv2d"})
    EXPECT_TRUE(families.count(f)) << f;
}

// One sentence per step kind whose values are not the first option, so a parse that ignored a
// value would be caught.
TEST(Sentence, RoundTripLastOptions) {
  HardwareInfo hw = test_hw();
  for (const Subgraph& s : round_trip_tasks()) {
    LoweredTask lt = lower_subgraph(s);
    TaskSpace space = build_space(lt, hw);
    std::vector<int64_t> v;
    while (v.size() < program_length(space)) v.push_back(next_options(space, v).back());
    Program p{v};
    ParsedSentence back = parse_sentence(make_sentence(s, hw, space, p).to_text());
    EXPECT_EQ(back.program, p);
  }
}

TEST(Sentence, DecisionErrorsNameTheToken) {
  const Subgraph& s = round_trip_tasks()[2];  // a conv of resnet18
  HardwareInfo hw = test_hw();
  LoweredTask lt = lower_subgraph(s);
  TaskSpace space = build_space(lt, hw);
  ASSERT_FALSE(space.slots.empty());
  std::mt19937_64 rng(1);
  Sentence sent = make_sentence(s, hw, space, sample_program(space, rng));
  std::vector<std::string> t = sent.to_tokens();
  size_t first_value =
      sent.subgraph.size() + sent.hardware.size() + slot_header_tokens(space.slots[0]).size();
  // A value outside the options.
  std::vector<std::string> bad = t;
  bad[first_value] = "999999";
  std::string e = error_of([&] { parse_sentence(join_tokens(bad)); });
  EXPECT_NE(e.find("token " + std::to_string(first_value + 1) + " ('999999'): not a valid value"),
            std::string::npos)
      << e;
  // A wrong header.
  bad = t;
  bad[sent.subgraph.size() + sent.hardware.size()] = "unroll";
  e = error_of([&] { parse_sentence(join_tokens(bad)); });
  EXPECT_NE(e.find("expected '" + t[sent.subgraph.size() + sent.hardware.size()] + "'"),
            std::string::npos)
      << e;
  // Cut short, and too long.
  bad.assign(t.begin(), t.end() - 1);
  e = error_of([&] { parse_sentence(join_tokens(bad)); });
  EXPECT_NE(e.find("('<end>')"), std::string::npos) << e;
  bad = t;
  bad.push_back("7");
  e = error_of([&] { parse_sentence(join_tokens(bad)); });
  EXPECT_NE(e.find("goes on after its last decision"), std::string::npos) << e;
  // No hardware, bad hardware.
  e = error_of([&] { parse_sentence(join_tokens(sent.subgraph)); });
  EXPECT_NE(e.find("no hardware tokens"), std::string::npos) << e;
  bad = t;
  bad[sent.subgraph.size() + 1] = "cores=two";
  e = error_of([&] { parse_sentence(join_tokens(bad)); });
  EXPECT_NE(e.find("cores=two"), std::string::npos) << e;
  // Extra spaces are not part of a sentence's identity: the canonical text is single-spaced.
  ParsedSentence ps = parse_sentence("  " + join_tokens(t) + "  ");
  EXPECT_EQ(ps.sentence.to_text(), join_tokens(t));
}

// A value above 999 is one token ("/1" = the whole 1024-wide reduction): a sentence that spells
// it in decimal is refused, and the message lists the valid values as a sentence spells them.
TEST(Sentence, ErrorsSpellTheValidValuesAsSentencesDo) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {4, 1024});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {1024, 8}, 1));
  g.mark_output(g.add(Op::MatMul, {a, w}));
  Subgraph s = partition_graph(g).tasks.at(0).sub;
  HardwareInfo hw = test_hw();
  LoweredTask lt = lower_subgraph(s);
  TaskSpace space = build_space(lt, hw);
  std::mt19937_64 rng(2);
  Sentence sent = make_sentence(s, hw, space, sample_program(space, rng));
  std::vector<std::string> t = sent.to_tokens();
  size_t pos = sent.subgraph.size() + sent.hardware.size();
  bool found = false;
  for (const Slot& slot : space.slots) {
    pos += slot_header_tokens(slot).size();
    if (slot.kind == StepKind::Tile && slot.reduction && slot.extent == 1024) {
      found = true;
      break;
    }
    pos += (size_t)slot.arity;
  }
  ASSERT_TRUE(found) << "no 1024-wide reduction tile in " << sent.to_text();
  t[pos] = "1024";
  std::string e = error_of([&] { parse_sentence(join_tokens(t)); });
  EXPECT_NE(e.find("not a valid value"), std::string::npos) << e;
  ASSERT_NE(e.find("valid: "), std::string::npos) << e;
  const std::string valid = e.substr(e.find("valid: "));
  EXPECT_NE(valid.find(" /1"), std::string::npos) << e;
  EXPECT_EQ(valid.find("1024"), std::string::npos) << e;
}

// Hostile sentences: mutated tokens (replaced, dropped, duplicated, swapped, numbers changed)
// either parse or raise a UserError; never a crash or an internal error.
TEST(Sentence, MutatedSentencesAreUserErrorsOrValid) {
  HardwareInfo hw = test_hw();
  std::mt19937_64 rng(99);
  const std::vector<std::string> pool = {
      "0",      "1", "-1",  "7",    "65536", "99999999999", "in0",  "w0",   "c0",      "n0",
      "n5",     "_", "->",  "Conv", "Add",   "Reshape",     "axis", "perm", "i64",     "bool",
      "scalar", "=", "inf", "nan",  "tile",  "pads",        "1e30", "-0",   "isa=sse4"};
  int parsed = 0, rejected = 0;
  const auto& tasks = round_trip_tasks();
  for (size_t i = 0; i < tasks.size(); i += 3) {
    const Subgraph& s = tasks[i];
    LoweredTask lt = lower_subgraph(s);
    TaskSpace space = build_space(lt, hw);
    std::vector<std::string> t =
        make_sentence(s, hw, space, sample_program(space, rng)).to_tokens();
    for (int k = 0; k < 40; k++) {
      std::vector<std::string> m = t;
      size_t at = rng() % m.size();
      switch (rng() % 5) {
        case 0:
          m[at] = pool[rng() % pool.size()];
          break;
        case 1:
          m.erase(m.begin() + at);
          break;
        case 2:
          m.insert(m.begin() + at, m[rng() % m.size()]);
          break;
        case 3:
          std::swap(m[at], m[rng() % m.size()]);
          break;
        case 4:
          m[at] = std::to_string((int64_t)(rng() % 300) - 2);
          break;
      }
      try {
        ParsedSentence ps = parse_sentence(join_tokens(m));
        EXPECT_EQ(ps.sentence.to_tokens(), m);
        parsed++;
      } catch (const UserError&) {
        rejected++;
      }
    }
  }
  EXPECT_GT(rejected, 100);
  std::printf("mutated sentences: %d rejected, %d still valid\n", rejected, parsed);
}

TEST(SentenceWriter, GeneratesThePrintedSentence) {
  HardwareInfo hw = test_hw();
  std::mt19937_64 rng(3);
  for (size_t i = 0; i < round_trip_tasks().size(); i += 7) {
    const Subgraph& s = round_trip_tasks()[i];
    LoweredTask lt = lower_subgraph(s);
    TaskSpace space = build_space(lt, hw);
    TaskPrinter printer(s, hw, space);
    SentenceWriter w(space, printer.prompt());
    while (!w.done()) {
      // The prompt ends with a header's "->" or with a value of the current slot.
      const std::string& last = w.tokens().back();
      if (w.position_in_slot() == 0) {
        EXPECT_EQ(last, kArrow);
      }
      std::vector<std::string> allowed = w.allowed_tokens();
      ASSERT_FALSE(allowed.empty());
      EXPECT_NE(error_of([&] { w.choose("nonsense"); }).find("not valid for"), std::string::npos);
      w.choose(allowed[rng() % allowed.size()]);
    }
    Program p = w.program();
    EXPECT_TRUE(is_valid_program(space, p));
    EXPECT_EQ(join_tokens(w.tokens()), printer.text(p));
    EXPECT_NE(error_of([&] { w.choose_value(1); }).find("complete"), std::string::npos);
  }
}

TEST(Show, RendersEveryDecision) {
  HardwareInfo hw = test_hw();
  const Subgraph& s = round_trip_tasks()[2];
  LoweredTask lt = lower_subgraph(s);
  TaskSpace space = build_space(lt, hw);
  std::mt19937_64 rng(5);
  ParsedSentence ps =
      parse_sentence(make_sentence(s, hw, space, sample_program(space, rng)).to_text());
  std::string text = render_sentence(ps, true);
  EXPECT_NE(text.find("task " + s.kind), std::string::npos) << text;
  EXPECT_NE(text.find("hardware avx2, 2 core(s), 8 floats per vector"), std::string::npos);
  EXPECT_NE(text.find("[outer "), std::string::npos) << text;
  EXPECT_NE(text.find("loop nest"), std::string::npos);
  size_t lines = 0;
  for (char c : text) lines += c == '\n';
  EXPECT_GT(lines, space.slots.size() + s.graph.nodes.size());
}

}  // namespace
}  // namespace tlm

namespace tlm::testing_space {
namespace {

// The program that found it (MobileNet-V2's 576 -> 96 at 14 x 14 + add, tuned at 224): the
// pixel var padded to 200 and tiled 2 x 50, its shifted last tile inside the fused parallel loop.
TEST(SentenceRegression, AShiftedTileInAFusedParallelLoopPassesTheBoundsChecks) {
  ParsedSentence ps = parse_sentence(
      "in0 1 36 14 14 16 in1 1 6 1 196 16 w0 6 36 1 1 16 16 w1 6 16 Reshape in0 shape 1 36 1 196 "
      "16 -> 1 36 1 196 16 ConvNchwc n0 w0 w1 dilations 1 1 group 1 pads 0 0 0 0 strides 1 1 -> "
      "1 6 1 196 16 Add in1 n1 isa=avx512 cores=2 vec=16 l1=32k l2=2m l3=256m pad "
      "f1_convnchwc.d0 -> 1 tile f1_convnchwc.d0 16 -> 1 4 1 pad f1_convnchwc.d1 -> 8 tile "
      "f1_convnchwc.d1 196 -> 2 50 1 tile f1_convnchwc.d3 6 -> 1 1 1 tile f1_convnchwc.r0 16 -> 2 "
      "tile f1_convnchwc.r3 36 -> 9 order f1_convnchwc.s2 -> 3 compute_at f1_convnchwc -> 2 "
      "vectorize f1_convnchwc -> -1 parallel f4_add -> 3 pack f1_convnchwc.pack.f0_reshape -> 0 "
      "pack f1_convnchwc.pack.w0 -> 1 unroll f1_convnchwc -> 0");
  ASSERT_EQ(ps.program.values.size(), program_length(ps.space));
  std::vector<Tensor> inputs = random_inputs(ps.sub, 3);
  Tensor ref = interpret(ps.sub.graph, inputs).at(0);
  apply_program(ps.task, ps.space, ps.program);
  Tensor got = run_task(ps.task, inputs);
  EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0);
}

}  // namespace
}  // namespace tlm::testing_space
