// tlm-evolutionary (the paper's TLM-Ansor): the evolutionary search drawing its fresh programs
// and part of its mutations from a language model (an untrained one here: what is tested is
// the plumbing, not the model's taste). Every proposal is valid and unseen, batches are full,
// and the proposals follow the model: a different model seed changes them.
#include <random>
#include <set>

#include "fixtures/task_cases.h"
#include "fixtures/tiny_base.h"
#include "tune/lm_search.h"

namespace tlm::testing_tune {
namespace {

using Model = TinyModel;

// Proposes `rounds` batches of 8, feeding back a made-up latency (a fixed function of the
// program) so that the cost model has something to learn after the first batch.
std::vector<Program> run_search(const Model& m, const TaskHarness& h, int rounds) {
  EvolutionOptions evo;
  evo.population = 32;
  evo.generations = 2;
  evo.source_fresh = 8;
  evo.source_mutations = 8;
  std::unique_ptr<SearchPolicy> s = make_tlm_evolutionary_search(*m.lm, m.tok, {}, evo);
  EXPECT_STREQ(s->name(), "tlm-evolutionary");
  TaskSearch t;
  t.harness = &h;
  std::mt19937_64 rng(1);
  std::vector<Program> all;
  std::set<std::vector<int64_t>> proposed;
  for (int r = 0; r < rounds; r++) {
    std::vector<Program> batch = s->propose(t, 8, rng);
    EXPECT_EQ(batch.size(), 8u) << "round " << r;
    for (const Program& p : batch) {
      EXPECT_TRUE(is_valid_program(h.space, p));
      EXPECT_TRUE(proposed.insert(p.values).second) << "proposed twice";
      double fake = 1e-3;
      for (size_t i = 0; i < p.values.size(); i++)
        fake += 1e-6 * (double)((p.values[i] * 7 + (int64_t)i) % 13);
      t.add(p, fake);
      all.push_back(p);
    }
  }
  return all;
}

TEST(TlmEvolutionary, ProposalsAreValidUnseenAndFollowTheModel) {
  std::unique_ptr<TaskHarness> h =
      make_task_harness(only_task(conv_graph()), detect_hardware(), "unit");
  Model a(7), b(8);
  std::vector<Program> pa = run_search(a, *h, 3);  // the 2nd and 3rd batches evolve
  std::vector<Program> pb = run_search(b, *h, 1);
  ASSERT_FALSE(pa.empty());
  ASSERT_FALSE(pb.empty());
  // The first program is each model's greedy choice; two different models choose differently.
  EXPECT_NE(pa[0], pb[0]);
}

}  // namespace
}  // namespace tlm::testing_tune
