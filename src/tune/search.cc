// Random and evolutionary search, and the genetic operators they share.
#include "tune/search.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "space/features.h"

namespace tlm {
namespace {

// Offset of each slot's first value in a program, plus the total at the end.
std::vector<size_t> slot_offsets(const TaskSpace& space) {
  std::vector<size_t> off = {0};
  for (const Slot& s : space.slots) off.push_back(off.back() + (size_t)s.arity);
  return off;
}

int64_t pick(const std::vector<int64_t>& opts, std::mt19937_64& rng) {
  return opts[std::uniform_int_distribution<size_t>(0, opts.size() - 1)(rng)];
}

bool contains(const std::vector<int64_t>& opts, int64_t v) {
  return std::find(opts.begin(), opts.end(), v) != opts.end();
}

// Completes `prefix` to a full program: position i takes want(i) when it is still a valid
// option, else a uniform choice.
template <typename Want>
Program complete(const TaskSpace& space, std::vector<int64_t> prefix, Want want,
                 std::mt19937_64& rng) {
  const size_t n = program_length(space);
  while (prefix.size() < n) {
    std::vector<int64_t> opts = next_options(space, prefix);
    TLM_CHECK(!opts.empty()) << "next_options is empty at position " << prefix.size();
    int64_t v = 0;
    prefix.push_back(want(prefix.size(), opts, &v) ? v : pick(opts, rng));
  }
  return Program{std::move(prefix)};
}

class RandomSearch : public SearchPolicy {
 public:
  const char* name() const override { return "random"; }
  std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) override {
    return sample_unseen(t, n, rng);
  }
};

class EvolutionarySearch : public SearchPolicy {
 public:
  EvolutionarySearch(const EvolutionOptions& o, std::unique_ptr<ProposalSource> source)
      : o_(o), src_(std::move(source)) {}
  const char* name() const override { return src_ ? "tlm-evolutionary" : "evolutionary"; }

  std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) override {
    if (t.ok_count() < o_.min_train) return unseen(t, n, rng);
    retrain(t);
    const TaskSpace& space = t.harness->space;

    // First generation: the best measured programs, then fresh samples.
    std::vector<size_t> order(t.programs.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return rank_key(t.latencies_s[a]) < rank_key(t.latencies_s[b]);
    });
    std::vector<Program> pop;
    std::set<std::vector<int64_t>> in_pop;
    for (size_t i = 0; i < order.size() && (int)pop.size() < o_.elite; i++)
      if (t.latencies_s[order[i]] > 0 && in_pop.insert(t.programs[order[i]].values).second)
        pop.push_back(t.programs[order[i]]);
    if (src_)
      for (Program& p : src_->fresh(t, std::min(o_.source_fresh, o_.population), rng))
        if ((int)pop.size() < o_.population && in_pop.insert(p.values).second)
          pop.push_back(std::move(p));
    for (int tries = 0; (int)pop.size() < o_.population && tries < 4 * o_.population; tries++) {
      Program p = sample_program(space, rng);
      if (in_pop.insert(p.values).second) pop.push_back(std::move(p));
    }

    // Every program any generation held, with its predicted score.
    std::map<std::vector<int64_t>, float> pool;
    for (int g = 0; g < o_.generations; g++) {
      std::vector<float> score = predict(t, pop);
      for (size_t i = 0; i < pop.size(); i++) pool[pop[i].values] = score[i];
      if (g + 1 == o_.generations) break;
      pop = next_generation(t, pop, score, rng);
    }

    // The batch: best predicted unseen programs, plus a few random ones for exploration.
    std::vector<std::pair<float, const std::vector<int64_t>*>> ranked;
    for (const auto& [values, s] : pool)
      if (!t.seen.count(values)) ranked.push_back({s, &values});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    int n_random = n >= 4 ? std::max(1, (int)std::lround(o_.eps_random * n)) : 0;
    std::vector<Program> out;
    for (const auto& r : ranked) {
      if ((int)out.size() >= n - n_random) break;
      out.push_back(Program{*r.second});
      t.seen.insert(*r.second);
    }
    std::vector<Program> fill = unseen(t, n - (int)out.size(), rng);
    out.insert(out.end(), fill.begin(), fill.end());
    return out;
  }

 private:
  std::vector<Program> unseen(TaskSearch& t, int n, std::mt19937_64& rng) {
    return src_ ? src_->fresh_unseen(t, n, rng) : sample_unseen(t, n, rng);
  }

  // Failed programs sort last.
  static double rank_key(double latency) { return latency > 0 ? latency : INFINITY; }

  void retrain(TaskSearch& t) {
    if (t.model && t.model_rows == (int)t.programs.size()) return;
    std::vector<std::vector<float>> x;
    for (const Program& p : t.programs) x.push_back(program_features(t.harness->space, p));
    if (!t.model) t.model = std::make_unique<CostModel>();
    t.model->fit(x, throughput_labels(t.latencies_s));
    t.model_rows = (int)t.programs.size();
  }

  std::vector<float> predict(const TaskSearch& t, const std::vector<Program>& ps) {
    std::vector<std::vector<float>> x;
    for (const Program& p : ps) x.push_back(program_features(t.harness->space, p));
    return t.model->predict(x);
  }

  // Elites survive; the rest are children of parents chosen by binary tournament on the score:
  // crossovers and mutations, and with a source, its completions of mutated parents.
  std::vector<Program> next_generation(const TaskSearch& t, const std::vector<Program>& pop,
                                       const std::vector<float>& score, std::mt19937_64& rng) {
    const TaskSpace& space = t.harness->space;
    std::vector<size_t> order(pop.size());
    for (size_t i = 0; i < order.size(); i++) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    std::vector<Program> next;
    std::set<std::vector<int64_t>> in_next;
    size_t elites = std::max<size_t>(1, pop.size() / 10);
    for (size_t i = 0; i < elites && i < order.size(); i++) {
      next.push_back(pop[order[i]]);
      in_next.insert(pop[order[i]].values);
    }
    std::uniform_int_distribution<size_t> any(0, pop.size() - 1);
    auto tournament = [&]() -> const Program& {
      size_t a = any(rng), b = any(rng);
      return pop[score[a] >= score[b] ? a : b];
    };
    std::uniform_real_distribution<double> u(0, 1);
    if (src_ && o_.source_mutations > 0) {
      std::vector<std::vector<int64_t>> starts;
      for (int i = 0; i < o_.source_mutations; i++)
        starts.push_back(mutation_prefix(space, tournament(), rng));
      for (Program& child : src_->complete(t, starts, rng))
        if (next.size() < pop.size() && in_next.insert(child.values).second)
          next.push_back(std::move(child));
    }
    for (int tries = 0; next.size() < pop.size() && tries < 4 * (int)pop.size(); tries++) {
      Program child = u(rng) < o_.crossover_prob
                          ? crossover_programs(space, tournament(), tournament(), rng)
                          : mutate_program(space, tournament(), rng);
      if (in_next.insert(child.values).second) next.push_back(std::move(child));
    }
    return next;
  }

  EvolutionOptions o_;
  std::unique_ptr<ProposalSource> src_;  // tlm-evolutionary; null: uniform samples
};

}  // namespace

void TaskSearch::add(const Program& p, double latency_s) {
  programs.push_back(p);
  latencies_s.push_back(latency_s);
  seen.insert(p.values);
}

int TaskSearch::ok_count() const {
  int n = 0;
  for (double l : latencies_s) n += l > 0;
  return n;
}

std::unique_ptr<SearchPolicy> make_random_search() { return std::make_unique<RandomSearch>(); }

std::unique_ptr<SearchPolicy> make_evolutionary_search(const EvolutionOptions& o) {
  return std::make_unique<EvolutionarySearch>(o, nullptr);
}

std::unique_ptr<SearchPolicy> make_evolutionary_search(const EvolutionOptions& o,
                                                       std::unique_ptr<ProposalSource> source) {
  TLM_CHECK(source) << "tlm-evolutionary needs a proposal source";
  return std::make_unique<EvolutionarySearch>(o, std::move(source));
}

namespace {

class ExpertEvolutionarySearch : public SearchPolicy {
 public:
  explicit ExpertEvolutionarySearch(const EvolutionOptions& o) : evo_(o, nullptr) {}
  const char* name() const override { return "expert-evolutionary"; }
  std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) override {
    std::vector<Program> out =
        experts_.take(t, n, [&] { return expert_programs(t.harness->space, t.harness->hw); });
    if ((int)out.size() < n) {
      std::vector<Program> more = evo_.propose(t, n - (int)out.size(), rng);
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

 private:
  EvolutionarySearch evo_;
  SeedQueue experts_;  // expert programs not yet handed out
};

}  // namespace

std::vector<Program> SeedQueue::take(TaskSearch& t, int n,
                                     const std::function<std::vector<Program>()>& make) {
  std::vector<Program> out;
  if (n <= 0) return out;
  auto it = pending_.find(t.harness);
  if (it == pending_.end()) it = pending_.emplace(t.harness, make()).first;
  std::vector<Program>& q = it->second;
  size_t used = 0;
  for (; used < q.size() && (int)out.size() < n; used++)
    if (t.seen.insert(q[used].values).second) out.push_back(std::move(q[used]));
  q.erase(q.begin(), q.begin() + (std::ptrdiff_t)used);
  return out;
}

std::unique_ptr<SearchPolicy> make_expert_evolutionary_search(const EvolutionOptions& o) {
  return std::make_unique<ExpertEvolutionarySearch>(o);
}

std::vector<Program> sample_unseen(TaskSearch& t, int n, std::mt19937_64& rng) {
  // Small spaces (an elementwise task may have a few dozen programs) run dry: stop after this
  // many consecutive draws that were all seen already.
  constexpr int kMaxMisses = 200;
  std::vector<Program> out;
  int misses = 0;
  while ((int)out.size() < n) {
    Program p = sample_program(t.harness->space, rng);
    if (!t.seen.insert(p.values).second) {
      if (++misses >= kMaxMisses) {
        t.exhausted = true;
        break;
      }
      continue;
    }
    misses = 0;
    out.push_back(std::move(p));
  }
  return out;
}

namespace {
// The slot a mutation changes: one whose first value has alternatives; a few tries, then any.
size_t mutation_slot(const TaskSpace& space, const Program& p, const std::vector<size_t>& off,
                     std::mt19937_64& rng) {
  std::uniform_int_distribution<size_t> any(0, space.slots.size() - 1);
  size_t s = any(rng);
  for (int tries = 0; tries < 8; tries++) {
    std::vector<int64_t> prefix(p.values.begin(), p.values.begin() + off[s]);
    if (next_options(space, prefix).size() > 1) break;
    s = any(rng);
  }
  return s;
}
}  // namespace

std::vector<int64_t> mutation_prefix(const TaskSpace& space, const Program& p,
                                     std::mt19937_64& rng) {
  if (space.slots.empty()) return p.values;
  std::vector<size_t> off = slot_offsets(space);
  size_t s = mutation_slot(space, p, off, rng);
  std::vector<int64_t> prefix(p.values.begin(), p.values.begin() + off[s]);
  std::vector<int64_t> other;
  for (int64_t o : next_options(space, prefix))
    if (o != p.values[off[s]]) other.push_back(o);
  if (!other.empty()) prefix.push_back(pick(other, rng));
  return prefix;
}

Program mutate_program(const TaskSpace& space, const Program& p, std::mt19937_64& rng) {
  if (space.slots.empty()) return p;
  std::vector<size_t> off = slot_offsets(space);
  size_t s = mutation_slot(space, p, off, rng);
  std::vector<int64_t> prefix(p.values.begin(), p.values.begin() + off[s]);
  const size_t slot_end = off[s + 1];
  return complete(
      space, std::move(prefix),
      [&](size_t i, const std::vector<int64_t>& opts, int64_t* v) {
        if (i < slot_end) {
          // The mutated slot: a different first value when one exists, the rest uniform.
          if (i != off[s] || opts.size() < 2) return false;
          std::vector<int64_t> other;
          for (int64_t o : opts)
            if (o != p.values[i]) other.push_back(o);
          *v = pick(other, rng);
          return true;
        }
        *v = p.values[i];  // the suffix keeps the parent's values where still valid
        return contains(opts, *v);
      },
      rng);
}

Program crossover_programs(const TaskSpace& space, const Program& a, const Program& b,
                           std::mt19937_64& rng) {
  std::vector<size_t> off = slot_offsets(space);
  std::vector<const Program*> from;  // per value position, the parent it is taken from
  std::bernoulli_distribution coin(0.5);
  for (size_t s = 0; s < space.slots.size(); s++) {
    const Program* parent = coin(rng) ? &a : &b;
    for (size_t i = off[s]; i < off[s + 1]; i++) from.push_back(parent);
  }
  return complete(
      space, {},
      [&](size_t i, const std::vector<int64_t>& opts, int64_t* v) {
        const Program* other = from[i] == &a ? &b : &a;
        for (const Program* q : {from[i], other})
          if (contains(opts, q->values[i])) {
            *v = q->values[i];
            return true;
          }
        return false;
      },
      rng);
}

}  // namespace tlm
