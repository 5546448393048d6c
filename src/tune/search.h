// Search policies: which programs of one task to measure next.
//
//   TaskSearch              what is known about one task: its harness, every program measured on
//                           this hardware (by any strategy, from the records file too) with its
//                           latency, and the cost model of the evolutionary search
//   SearchPolicy::propose   up to n programs never measured or proposed before
//   random                  uniform sampling through next_options (the paper's and Ansor's
//                           sampler, sample_program)
//   evolutionary            Ansor's evolutionary search: a population of the best measured
//                           programs and fresh samples evolves for a few generations under
//                           mutation and crossover, ranked by an XGBoost model of the task's
//                           measured records (retrained after every batch); the batch is the
//                           top-scoring unmeasured programs plus an epsilon share of random ones
//   tlm-evolutionary        the same evolution with a ProposalSource (the paper's TLM-Ansor,
//                           §6.4; tune/lm_search.h makes the language model one): its programs
//                           replace the uniform samples (first batches, fresh members of each
//                           first generation, the exploration share), and a share of each
//                           generation's children are mutated parents the model completes
//   expert-evolutionary     the evolutionary search whose first measurements of a task are its
//                           expert programs (space/space.h; no language model): a search
//                           baseline with the same head start the language model gets
//   mutate_program()        resample one slot's values, keep the rest where still valid
//   mutation_prefix()       the start of such a mutation: a parent up to a slot, that slot's first
//                           value changed
//   crossover_programs()    slot by slot from either parent, repaired where invalid
// Both operators walk the program through next_options(), so every child is valid by
// construction, like every sample.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "measure/harness.h"
#include "tune/cost_model.h"

namespace tlm {

struct TaskSearch {
  const TaskHarness* harness = nullptr;
  // Measured programs and their median latency (<= 0: the program failed), in measure order.
  std::vector<Program> programs;
  std::vector<double> latencies_s;
  std::set<std::vector<int64_t>> seen;  // measured or already proposed
  bool exhausted = false;               // sampling stopped finding unseen programs
  std::unique_ptr<CostModel> model;     // evolutionary only
  int model_rows = 0;                   // records the model was trained on

  void add(const Program& p, double latency_s);  // a measurement (also marks it seen)
  int ok_count() const;
};

struct EvolutionOptions {
  int population = 128;          // programs per generation
  int generations = 4;           // generations per proposed batch
  double crossover_prob = 0.15;  // else mutation
  double eps_random = 0.1;       // share of the batch sampled at random (at least 1 of >= 4)
  int min_train = 4;             // error-free measurements before the model is trusted
  int elite = 16;                // best measured programs seeded into the first generation
  // With a ProposalSource only:
  int source_fresh = 16;      // first-generation members it writes (the rest uniform samples)
  int source_mutations = 16;  // children per generation it completes from mutated parents
};

// Where programs come from when not from uniform sampling (tlm-evolutionary: the model).
class ProposalSource {
 public:
  virtual ~ProposalSource() = default;
  // Up to n programs never seen by t, marked seen (topped up with uniform samples if need be).
  virtual std::vector<Program> fresh_unseen(TaskSearch& t, int n, std::mt19937_64& rng) = 0;
  // Up to n programs, distinct, maybe seen.
  virtual std::vector<Program> fresh(const TaskSearch& t, int n, std::mt19937_64& rng) = 0;
  // One completion per prefix (valid programs; a prefix is kept while its values stay valid).
  virtual std::vector<Program> complete(const TaskSearch& t,
                                        const std::vector<std::vector<int64_t>>& prefixes,
                                        std::mt19937_64& rng) = 0;
};

class SearchPolicy {
 public:
  virtual ~SearchPolicy() = default;
  virtual const char* name() const = 0;
  // Up to n unseen programs, marked seen; fewer (and t.exhausted set) when the space runs dry.
  virtual std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) = 0;
};

std::unique_ptr<SearchPolicy> make_random_search();
std::unique_ptr<SearchPolicy> make_evolutionary_search(const EvolutionOptions& o = {});
// "tlm-evolutionary": the evolution drawing on `source` instead of uniform samples.
std::unique_ptr<SearchPolicy> make_evolutionary_search(const EvolutionOptions& o,
                                                       std::unique_ptr<ProposalSource> source);

// Per task, programs handed out before anything else, each at most once and only while unseen
// (marked seen when handed out); `make` computes them on the task's first request with n > 0:
// the expert programs of expert-evolutionary, the zero-shot candidates of `tlm`.
class SeedQueue {
 public:
  std::vector<Program> take(TaskSearch& t, int n,
                            const std::function<std::vector<Program>()>& make);

 private:
  std::map<const TaskHarness*, std::vector<Program>> pending_;
};

// "expert-evolutionary": each task's expert_programs (for its harness's hardware) first, in their
// own order, then the plain evolutionary search (which keeps the best of them in its elite).
std::unique_ptr<SearchPolicy> make_expert_evolutionary_search(const EvolutionOptions& o = {});

// Up to n unseen uniform samples (marked seen); sets t.exhausted when many draws in a row were
// seen already.
std::vector<Program> sample_unseen(TaskSearch& t, int n, std::mt19937_64& rng);

Program mutate_program(const TaskSpace& space, const Program& p, std::mt19937_64& rng);
std::vector<int64_t> mutation_prefix(const TaskSpace& space, const Program& p,
                                     std::mt19937_64& rng);
Program crossover_programs(const TaskSpace& space, const Program& a, const Program& b,
                           std::mt19937_64& rng);

}  // namespace tlm
