// The zero-measurement choice (tune/lm_search.h): the candidates are the model's beam and the
// task's expert programs, each scored as a whole program by the model, most likely first; the
// scores are the constrained log-likelihoods generation reports; each mode keeps exactly its
// candidates; `tlm` measures them first, in that order. An untrained model: what is tested is the
// plumbing, not the model's taste.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "fixtures/task_cases.h"
#include "fixtures/tiny_base.h"
#include "support/error.h"
#include "tune/lm_search.h"

namespace tlm::testing_tune {
namespace {

using Model = TinyModel;

HardwareInfo avx512() {
  return parse_hardware_key("isa=avx512,cores=2,vec=16,l1=32k,l2=1m,l3=32m");
}

TEST(ZeroShot, ScoresAreTheLogprobsGenerationReports) {
  Model m(3);
  auto h = make_task_harness(only_task(matmul_graph()), avx512(), "unit");
  GenerateOptions g;
  g.n = 5;
  g.seed = 4;
  std::vector<GeneratedProgram> gen = generate_programs(*m.lm, m.tok, *h->printer, g);
  ASSERT_EQ(gen.size(), 5u);
  std::vector<Program> ps;
  for (const GeneratedProgram& x : gen) ps.push_back(x.program);
  std::vector<double> lp;
  score_programs(*m.lm, m.tok, *h->printer, ps, &lp);
  ASSERT_EQ(lp.size(), ps.size());
  for (size_t i = 0; i < ps.size(); i++) {
    EXPECT_NEAR(lp[i], gen[i].logprob, 1e-3) << "program " << i;
    EXPECT_LT(lp[i], 0);
  }
}

TEST(ZeroShot, CandidatesAreTheBeamAndTheExpertsMostLikelyFirst) {
  Model m(5);
  const HardwareInfo hw = avx512();
  auto h = make_task_harness(only_task(conv_graph()), hw, "unit");
  const std::vector<Program> experts = expert_programs(h->space, hw);
  ASSERT_GE(experts.size(), 2u);
  std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw,
                                                       zero_shot_mode("ranked"));
  std::set<std::vector<int64_t>> all, expert_set;
  for (const Program& e : experts) expert_set.insert(e.values);
  for (size_t i = 0; i < c.size(); i++) {
    EXPECT_TRUE(is_valid_program(h->space, c[i].program));
    EXPECT_TRUE(all.insert(c[i].program.values).second) << "candidate " << i << " twice";
    EXPECT_EQ(c[i].expert, expert_set.count(c[i].program.values) > 0);
    if (i > 0) {
      EXPECT_GE(c[i - 1].logprob, c[i].logprob);
    }
  }
  for (const Program& e : experts) EXPECT_TRUE(all.count(e.values)) << "an expert is missing";
  // The beam's programs are among them.
  GenerateOptions beam;
  beam.beam = beam.n = 4;
  for (const GeneratedProgram& b : generate_programs(*m.lm, m.tok, *h->printer, beam))
    EXPECT_TRUE(all.count(b.program.values));
  EXPECT_EQ(zero_shot_program(*m.lm, m.tok, *h->printer, hw, zero_shot_mode("ranked")).program,
            c.front().program);

  // "experts": only the expert programs; "greedy": only the greedy program.
  std::vector<ZeroShotChoice> ex = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw,
                                                        zero_shot_mode("experts"));
  ASSERT_EQ(ex.size(), experts.size());
  for (const ZeroShotChoice& x : ex) EXPECT_TRUE(x.expert);
  std::vector<ZeroShotChoice> gr = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw,
                                                        zero_shot_mode("greedy"));
  ASSERT_EQ(gr.size(), 1u);
  EXPECT_EQ(gr[0].program, most_likely_program(*m.lm, m.tok, *h->printer));
}

TEST(ZeroShot, RowsTasksChooseAmongTheirExpertPrograms) {
  Model m(5);
  const HardwareInfo hw = avx512();
  std::unique_ptr<TaskHarness> h;
  for (const Task& task : partition_graph(tiny_model()).tasks) {  // the global average pool
    auto candidate = make_task_harness(task.sub, hw, "unit");
    if (candidate->space.rule == SpaceRule::Rows) h = std::move(candidate);
  }
  ASSERT_TRUE(h) << "the fixture should have a Rows task";
  const std::vector<Program> experts = expert_programs(h->space, hw);
  ASSERT_FALSE(experts.empty());
  // "experts": the most likely of the expert programs, as the model scores them.
  std::vector<double> lp;
  score_programs(*m.lm, m.tok, *h->printer, experts, &lp);
  size_t best = 0;
  for (size_t i = 1; i < lp.size(); i++)
    if (lp[i] > lp[best]) best = i;
  ZeroShotChoice c = zero_shot_program(*m.lm, m.tok, *h->printer, hw, zero_shot_mode("experts"));
  EXPECT_TRUE(c.expert);
  EXPECT_EQ(c.program, experts[best]);
  // "greedy" still writes the model's own program.
  ZeroShotChoice g = zero_shot_program(*m.lm, m.tok, *h->printer, hw, zero_shot_mode("greedy"));
  EXPECT_EQ(g.program, most_likely_program(*m.lm, m.tok, *h->printer));
}

TEST(ZeroShot, UnknownModeIsAUserError) {
  EXPECT_THROW(zero_shot_mode("best"), UserError);
}

TEST(ZeroShot, TlmMeasuresTheCandidatesFirstInTheirOrder) {
  Model m(9);
  const HardwareInfo hw = avx512();
  auto h = make_task_harness(only_task(conv_graph()), hw, "unit");
  LmSearchOptions lo;
  std::vector<ZeroShotChoice> c = zero_shot_candidates(*m.lm, m.tok, *h->printer, hw, lo.first);
  std::unique_ptr<SearchPolicy> s = make_lm_search(*m.lm, m.tok, lo);
  TaskSearch t;
  t.harness = h.get();
  std::mt19937_64 rng(1);
  std::vector<Program> got;
  const int batch = 4;
  while (got.size() < c.size() + batch) {
    std::vector<Program> b = s->propose(t, batch, rng);
    ASSERT_EQ((int)b.size(), batch);
    for (const Program& p : b) {
      EXPECT_TRUE(is_valid_program(h->space, p));
      got.push_back(p);
    }
  }
  for (size_t i = 0; i < c.size(); i++) EXPECT_EQ(got[i], c[i].program) << "proposal " << i;
  std::set<std::vector<int64_t>> distinct;
  for (const Program& p : got) EXPECT_TRUE(distinct.insert(p.values).second);
}

}  // namespace
}  // namespace tlm::testing_tune
