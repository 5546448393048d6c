// Constrained generation: every generated program is valid (a property over tasks of every family,
// the held-out workloads' tasks and both machine kinds, with an untrained model whose unconstrained
// choices are mostly invalid); sampling is deterministic for a seed and de-duplicates; a beam as
// wide as a small space finds exactly its most likely program, with the log-probability that full
// recomputation gives; score_programs sees valid mass in [0, 1]; pre-training data marks exactly
// the values.
#include "model/generate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <set>

#include "language/workloads.h"
#include "fixtures/tiny_base.h"
#include "model/data.h"

namespace tlm {
namespace {

HardwareInfo avx2() { return parse_hardware_key("isa=avx2,cores=2,vec=8,l1=32k,l2=512k,l3=8m"); }
HardwareInfo avx512() {
  return parse_hardware_key("isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m");
}

struct Fixture {
  Tokenizer tok;
  std::unique_ptr<LanguageModel> lm;
};

const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture f;
    f.tok = TokenizerBuilder().build();  // the grammar's words only
    f.lm = std::make_unique<LanguageModel>(tiny_config(f.tok), 7);
    return f;
  }();
  return f;
}

struct TaskCase {
  Subgraph sub;
  HardwareInfo hw;
  LoweredTask lt;
  TaskSpace space;
  std::unique_ptr<TaskPrinter> printer;
};

std::unique_ptr<TaskCase> task_case(const Subgraph& s, const HardwareInfo& hw) {
  auto c = std::make_unique<TaskCase>();
  c->sub = s;
  c->hw = hw;
  c->lt = lower_subgraph(s);
  c->space = build_space(c->lt, hw);
  c->printer = std::make_unique<TaskPrinter>(c->sub, hw, c->space);
  return c;
}

TEST(Generate, EveryProgramIsValidOnEveryTaskKind) {
  const Fixture& f = fixture();
  std::set<std::string> kinds;
  int programs = 0;
  for (const char* spec : {"resnet18:image=32", "mobilenet_v2:image=32", "bert-tiny:seq=16",
                           "gpt2:layers=1,seq=16", "dcgan:image=32"})
    for (const Subgraph& s : workload_tasks(spec)) {
      if (!kinds.insert(s.kind).second) continue;
      for (const HardwareInfo& hw : {avx2(), avx512()}) {
        auto c = task_case(s, hw);
        GenerateOptions o;
        o.n = 3;
        o.batch = 3;
        o.seed = programs;
        GenerateStats st;
        std::vector<GeneratedProgram> ps = generate_programs(*f.lm, f.tok, *c->printer, o, &st);
        ASSERT_FALSE(ps.empty()) << s.kind;
        for (const GeneratedProgram& g : ps) {
          ASSERT_TRUE(is_valid_program(c->space, g.program)) << s.kind;
          ParsedSentence back = parse_sentence(c->printer->text(g.program));
          ASSERT_EQ(back.program, g.program);
          programs++;
        }
      }
    }
  EXPECT_GE(kinds.size(), 15u);
  EXPECT_GT(programs, 60);
}

// The held-out workloads' tasks (never in training data) at their real shapes: sentences of up to
// ~250 model tokens, tile extents above 999 (GPT-2's 50257-wide logits), 3-D convolutions.
TEST(Generate, EveryProgramIsValidOnHeldOutTasks) {
  const Fixture& f = fixture();
  int programs = 0;
  for (const std::string& spec : heldout_workloads()) {
    std::vector<Subgraph> tasks = workload_tasks(spec);
    for (size_t i : {size_t(0), tasks.size() / 2, tasks.size() - 1}) {
      auto c = task_case(tasks[i], avx512());
      GenerateOptions o;
      o.n = 2;
      o.batch = 2;
      for (const GeneratedProgram& g : generate_programs(*f.lm, f.tok, *c->printer, o)) {
        ASSERT_TRUE(is_valid_program(c->space, g.program)) << spec << " " << tasks[i].kind;
        EXPECT_EQ(parse_sentence(c->printer->text(g.program)).program, g.program);
        programs++;
      }
    }
  }
  EXPECT_GE(programs, 20);
}

TEST(Generate, SamplingIsDeterministicAndDistinct) {
  const Fixture& f = fixture();
  auto c = task_case(workload_tasks("resnet18:image=32")[2], avx2());
  GenerateOptions o;
  o.n = 8;
  o.batch = 4;
  o.seed = 3;
  std::vector<GeneratedProgram> a = generate_programs(*f.lm, f.tok, *c->printer, o);
  std::vector<GeneratedProgram> b = generate_programs(*f.lm, f.tok, *c->printer, o);
  ASSERT_EQ(a.size(), 8u);
  std::set<std::vector<int64_t>> distinct;
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i].program, b[i].program);
    distinct.insert(a[i].program.values);
  }
  EXPECT_EQ(distinct.size(), a.size());
  o.seed = 4;
  std::vector<GeneratedProgram> d = generate_programs(*f.lm, f.tok, *c->printer, o);
  EXPECT_NE(d[0].program, a[0].program);
}

// Given starts (tlm-evolutionary's mutated parents) are followed while their values stay valid,
// and the model completes them into valid programs.
TEST(Generate, PrefixesAreFollowedWhileValid) {
  const Fixture& f = fixture();
  auto c = task_case(workload_tasks("resnet18:image=32")[2], avx2());
  std::mt19937_64 rng(5);
  Program p = sample_program(c->space, rng);
  const size_t half = p.values.size() / 2;
  std::vector<int64_t> good(p.values.begin(), p.values.begin() + half);
  std::vector<int64_t> bad(p.values.begin(), p.values.begin() + 3);
  bad.push_back(-12345);  // never an option: the start is cut here
  bad.push_back(p.values[4]);
  GenerateOptions o;
  o.n = 2;
  o.batch = 2;
  o.max_rounds = 1;
  o.seed = 9;
  o.prefixes = {good, bad};
  std::vector<GeneratedProgram> out = generate_programs(*f.lm, f.tok, *c->printer, o);
  ASSERT_EQ(out.size(), 2u);
  for (const GeneratedProgram& g : out) EXPECT_TRUE(is_valid_program(c->space, g.program));
  EXPECT_EQ(std::vector<int64_t>(out[0].program.values.begin(),
                                 out[0].program.values.begin() + half),
            good);
  EXPECT_EQ(std::vector<int64_t>(out[1].program.values.begin(),
                                 out[1].program.values.begin() + 3),
            std::vector<int64_t>(bad.begin(), bad.begin() + 3));
  // Without starts, the same seed writes other programs (the starts were not a coincidence).
  o.prefixes.clear();
  std::vector<GeneratedProgram> free = generate_programs(*f.lm, f.tok, *c->printer, o);
  EXPECT_NE(free[0].program, out[0].program);
}

// The renormalized log-probability of a program, from one full recomputation of its sentence.
double full_logprob(const Fixture& f, const TaskCase& c, const Program& p) {
  std::vector<int> ids = {kBosId};
  for (const std::string& t : c.printer->prompt()) f.tok.encode_token(t, &ids);
  std::vector<size_t> at;  // where each value's id sits
  size_t v = 0;
  for (size_t k = 0; k < c.space.slots.size(); k++) {
    const Slot& slot = c.space.slots[k];
    for (const std::string& t : c.printer->header(k)) f.tok.encode_token(t, &ids);
    for (int a = 0; a < slot.arity; a++, v++) {
      at.push_back(ids.size());
      ids.push_back(f.tok.value_id(value_token(slot, &p.values[v - a], a, p.values[v])));
    }
  }
  const int V = f.lm->config().vocab_size;
  std::vector<float> lp = f.lm->next_token_logprobs(ids);
  double total = 0;
  std::vector<int64_t> prefix;
  v = 0;
  for (size_t k = 0; k < c.space.slots.size(); k++) {
    const Slot& slot = c.space.slots[k];
    for (int a = 0; a < slot.arity; a++, v++) {
      const float* row = lp.data() + (at[v] - 1) * V;
      double mx = -1e30, sum = 0;
      std::vector<int> opt_ids;
      for (int64_t o : next_options(c.space, prefix)) {
        opt_ids.push_back(
            f.tok.value_id(value_token(slot, prefix.data() + prefix.size() - a, a, o)));
        mx = std::max(mx, (double)row[opt_ids.back()]);
      }
      for (int id : opt_ids) sum += std::exp(row[id] - mx);
      total += row[ids[at[v]]] - mx - std::log(sum);
      prefix.push_back(p.values[v]);
    }
  }
  return total;
}

TEST(Generate, FullBeamFindsTheMostLikelyProgram) {
  const Fixture& f = fixture();
  // The smallest space with a choice to make among the tasks of a few tiny models.
  std::unique_ptr<TaskCase> c;
  for (const char* spec : {"bert-tiny:seq=16", "resnet18:image=32", "dcgan:image=32"})
    for (const Subgraph& s : workload_tasks(spec)) {
      auto tc = task_case(s, avx2());
      if (tc->space.log10_size > 0.5 && (!c || tc->space.log10_size < c->space.log10_size))
        c = std::move(tc);
    }
  ASSERT_TRUE(c) << "no task with a small space";
  // Enumerate the space.
  std::vector<Program> all;
  std::function<void(std::vector<int64_t>&)> walk = [&](std::vector<int64_t>& prefix) {
    if (prefix.size() == program_length(c->space)) {
      all.push_back(Program{prefix});
      return;
    }
    for (int64_t o : next_options(c->space, prefix)) {
      prefix.push_back(o);
      walk(prefix);
      prefix.pop_back();
    }
  };
  std::vector<int64_t> empty;
  walk(empty);
  ASSERT_LE(all.size(), 3000u);
  double best = -1e30;
  Program best_p;
  for (const Program& p : all) {
    double lp = full_logprob(f, *c, p);
    if (lp > best) best = lp, best_p = p;
  }
  GenerateOptions o;
  o.n = 1;
  o.beam = (int)all.size();
  std::vector<GeneratedProgram> g = generate_programs(*f.lm, f.tok, *c->printer, o);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].program, best_p);
  EXPECT_NEAR(g[0].logprob, best, 1e-3);
  // The sampled programs' log-probabilities are the recomputed ones too (KV cache == full).
  GenerateOptions so;
  so.n = 3;
  so.batch = 3;
  for (const GeneratedProgram& s : generate_programs(*f.lm, f.tok, *c->printer, so))
    EXPECT_NEAR(s.logprob, full_logprob(f, *c, s.program), 1e-3);
}

// At two or more cores a large task always gets a parallel loop (GenerateOptions::serial_work):
// sampled and greedy, with log-probabilities renormalized as score_programs does; at one core, or
// with the guard off, the untrained model leaves it out of some programs.
TEST(Generate, LargeTasksGetAParallelLoopAtTwoCores) {
  const Fixture& f = fixture();
  const Subgraph* large = nullptr;
  std::vector<Subgraph> tasks = workload_tasks("resnet18:image=64");
  for (const Subgraph& s : tasks) {
    auto c = task_case(s, avx2());
    if (c->space.rule == SpaceRule::TiledAnchor && largest_stage_work(c->space) >= kParallelWork) {
      large = &s;
      break;
    }
  }
  ASSERT_TRUE(large) << "no large tiled task";
  const HardwareInfo one = parse_hardware_key("isa=avx2,cores=1,vec=8,l1=32k,l2=512k,l3=8m");
  auto serial_count = [&](const HardwareInfo& hw, double serial_work, bool check_logprob) {
    auto c = task_case(*large, hw);
    GenerateOptions o;
    o.n = 24;
    o.batch = 8;
    o.seed = 5;
    o.serial_work = serial_work;
    std::vector<GeneratedProgram> ps = generate_programs(*f.lm, f.tok, *c->printer, o);
    EXPECT_EQ(ps.size(), 24u);
    GenerateOptions g = o;
    g.n = 1;
    g.beam = 1;
    ps.push_back(generate_programs(*f.lm, f.tok, *c->printer, g).at(0));
    int serial = 0;
    std::vector<Program> progs;
    for (const GeneratedProgram& p : ps) {
      serial += parallel_loops(c->space, p.program) == 0;
      progs.push_back(p.program);
    }
    if (check_logprob) {
      std::vector<double> lp;
      score_programs(*f.lm, f.tok, *c->printer, progs, &lp);
      for (size_t i = 0; i < ps.size(); i++) EXPECT_NEAR(lp[i], ps[i].logprob, 1e-3) << i;
    }
    return serial;
  };
  EXPECT_EQ(serial_count(avx2(), kParallelWork, true), 0);
  EXPECT_GT(serial_count(avx2(), -1, false), 0);
  EXPECT_GT(serial_count(one, kParallelWork, true), 0);
}

TEST(Generate, ScoresAreProbabilities) {
  const Fixture& f = fixture();
  auto c = task_case(workload_tasks("resnet18:image=32")[0], avx2());
  std::mt19937_64 rng(1);
  std::vector<Program> ps = {sample_program(c->space, rng), sample_program(c->space, rng)};
  DecisionScores s = score_programs(*f.lm, f.tok, *c->printer, ps);
  ASSERT_EQ(s.decisions, 2 * (int64_t)program_length(c->space));
  EXPECT_GT(s.valid_mass, 0);
  EXPECT_LT(s.valid_mass / s.decisions, 1.0);
  EXPECT_GT(s.nll / s.decisions, 0);
}

TEST(Generate, TooLongForTheContextIsAUserError) {
  const Fixture& f = fixture();
  GPTConfig c = f.lm->config();
  c.block_size = 16;
  LanguageModel small(c, 1);
  auto tc = task_case(workload_tasks("resnet18:image=32")[0], avx2());
  EXPECT_THROW(generate_programs(small, f.tok, *tc->printer, GenerateOptions{}), UserError);
}

TEST(PretrainData, LossMarksExactlyTheValues) {
  const Fixture& f = fixture();
  auto c = task_case(workload_tasks("resnet18:image=32")[2], avx2());
  std::mt19937_64 rng(2);
  Program p = sample_program(c->space, rng);
  std::vector<std::string> text = c->printer->sentence(p).to_tokens();
  TokenSeq s = encode_sentence(f.tok, text, LossOn::Values);
  ASSERT_EQ(s.ids.size(), s.loss.size());
  int counted = 0;
  for (uint8_t l : s.loss) counted += l;
  EXPECT_EQ(counted, (int)p.values.size());
  EXPECT_EQ(s.ids.front(), kBosId);
  EXPECT_EQ(s.ids.back(), kEosId);
  TokenSeq all = encode_sentence(f.tok, text, LossOn::All);
  EXPECT_EQ(all.ids, s.ids);
  counted = 0;
  for (uint8_t l : all.loss) counted += l;
  EXPECT_EQ(counted, (int)s.ids.size() - 1);
  SentenceEncoder enc(f.tok, LossOn::Values);
  TokenSeq cached = enc.encode(text);
  EXPECT_EQ(cached.ids, s.ids);
  EXPECT_EQ(cached.loss, s.loss);
}

}  // namespace
}  // namespace tlm
