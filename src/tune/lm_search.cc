#include "tune/lm_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "space/space.h"
#include "support/error.h"
#include "tune/ranker.h"

namespace tlm {
namespace {

class LmProposals : public ProposalSource {
 public:
  LmProposals(const LanguageModel& m, const Tokenizer& tok, const LmSearchOptions& o)
      : m_(m), tok_(tok), o_(o) {}

  std::vector<Program> fresh_unseen(TaskSearch& t, int n, std::mt19937_64& rng) override {
    const TaskPrinter& printer = *t.harness->printer;
    std::vector<Program> out = first_.take(t, n, [&] {  // the zero-shot candidates, in order
      std::vector<Program> ps;
      for (ZeroShotChoice& c : zero_shot_candidates(m_, tok_, printer, t.harness->hw, o_.first))
        ps.push_back(std::move(c.program));
      return ps;
    });
    for (int round = 0; round < 3 && (int)out.size() < n; round++)
      for (GeneratedProgram& gp : generate(printer, n - (int)out.size(), {}, rng))
        if ((int)out.size() < n && t.seen.insert(gp.program.values).second)
          out.push_back(std::move(gp.program));
    if ((int)out.size() < n) {  // the model repeats itself: top up with uniform samples
      std::vector<Program> more = sample_unseen(t, n - (int)out.size(), rng);
      fallbacks_ += (int64_t)more.size();
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

  std::vector<Program> fresh(const TaskSearch& t, int n, std::mt19937_64& rng) override {
    std::vector<Program> out;
    if (n <= 0) return out;
    for (GeneratedProgram& gp : generate(*t.harness->printer, n, {}, rng))
      out.push_back(std::move(gp.program));
    return out;
  }

  std::vector<Program> complete(const TaskSearch& t,
                                const std::vector<std::vector<int64_t>>& prefixes,
                                std::mt19937_64& rng) override {
    std::vector<Program> out;
    if (prefixes.empty()) return out;
    // One sequence per start (max_rounds 1: duplicates are dropped, not re-drawn).
    for (GeneratedProgram& gp : generate(*t.harness->printer, (int)prefixes.size(), prefixes, rng,
                                         /*rounds=*/1))
      out.push_back(std::move(gp.program));
    return out;
  }

 private:
  std::vector<GeneratedProgram> generate(const TaskPrinter& printer, int n,
                                         std::vector<std::vector<int64_t>> prefixes,
                                         std::mt19937_64& rng, int rounds = 0) {
    GenerateOptions g;
    g.n = n;
    g.batch = prefixes.empty() ? o_.batch : std::max(o_.batch, n);
    g.temperature = o_.temperature;
    g.top_k = o_.top_k;
    g.seed = rng();
    g.max_rounds = rounds;
    g.prefixes = std::move(prefixes);
    return generate_programs(m_, tok_, printer, g);
  }

  const LanguageModel& m_;
  const Tokenizer& tok_;
  LmSearchOptions o_;
  int64_t fallbacks_ = 0;
  SeedQueue first_;  // per task: its zero-shot candidates not yet handed out
};

class LmSearch : public SearchPolicy {
 public:
  explicit LmSearch(std::unique_ptr<ProposalSource> src) : src_(std::move(src)) {}
  const char* name() const override { return "tlm"; }
  std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) override {
    return src_->fresh_unseen(t, n, rng);
  }

 private:
  std::unique_ptr<ProposalSource> src_;
};

}  // namespace

std::unique_ptr<ProposalSource> make_lm_proposals(const LanguageModel& m, const Tokenizer& tok,
                                                  const LmSearchOptions& o) {
  return std::make_unique<LmProposals>(m, tok, o);
}

std::unique_ptr<SearchPolicy> make_lm_search(const LanguageModel& m, const Tokenizer& tok,
                                             const LmSearchOptions& o) {
  return std::make_unique<LmSearch>(make_lm_proposals(m, tok, o));
}

std::unique_ptr<SearchPolicy> make_tlm_evolutionary_search(const LanguageModel& m,
                                                           const Tokenizer& tok,
                                                           const LmSearchOptions& lm,
                                                           const EvolutionOptions& evo) {
  return make_evolutionary_search(evo, make_lm_proposals(m, tok, lm));
}

Program most_likely_program(const LanguageModel& m, const Tokenizer& tok,
                            const TaskPrinter& printer) {
  GenerateOptions g;
  g.n = 1;
  g.beam = 1;
  return generate_programs(m, tok, printer, g).at(0).program;
}

ZeroShotOptions zero_shot_mode(const std::string& name) {
  ZeroShotOptions o;
  if (name == "greedy") {
    o.beam = 1, o.experts = false;
  } else if (name == "ranked") {
    o.beam = 4, o.experts = true;
  } else if (name == "experts") {
    o.beam = 0, o.experts = true;
  } else if (name == "ranker") {
    o.beam = 1, o.experts = true, o.rank = true, o.samples = 32;
    o.row_split_p = kZeroShotRowSplitP;
    o.serial_work = kZeroShotSerialWork;
    o.pointwise_weights = kZeroShotPointwiseWeights;
    o.copy_twins = true;
    o.streamed_root = true;
  } else {
    std::string names;
    for (size_t i = 0; i < kZeroShotModeNames.size(); i++)
      names += (i == 0 ? "" : i + 1 == kZeroShotModeNames.size() ? " or " : ", ") +
               kZeroShotModeNames[i];
    TLM_USER_CHECK(false) << "'" << name << "' is not a zero-shot mode: " << names;
  }
  return o;
}

std::vector<ZeroShotChoice> zero_shot_candidates(const LanguageModel& m, const Tokenizer& tok,
                                                 const TaskPrinter& printer, const HardwareInfo& hw,
                                                 const ZeroShotOptions& o) {
  std::vector<Program> experts;
  if (o.experts) experts = expert_programs(printer.space(), hw);
  std::set<std::vector<int64_t>> expert_values;
  for (const Program& e : experts) expert_values.insert(e.values);
  std::vector<ZeroShotChoice> out;
  std::set<std::vector<int64_t>> beam_values;
  if (o.beam > 0 || experts.empty()) {
    GenerateOptions g;
    g.beam = std::max(1, o.beam);
    g.n = g.beam;
    for (GeneratedProgram& c : generate_programs(m, tok, printer, g)) {
      beam_values.insert(c.program.values);
      const bool expert = expert_values.count(c.program.values) > 0;
      out.push_back({std::move(c.program), c.logprob, expert});
    }
  }
  std::vector<Program> extra;  // expert programs the beam did not find
  for (const Program& e : experts)
    if (!beam_values.count(e.values)) extra.push_back(e);
  std::vector<double> lp;
  score_programs(m, tok, printer, extra, &lp);
  for (size_t i = 0; i < extra.size(); i++) out.push_back({std::move(extra[i]), lp[i], true});
  // The model's samples found neither by the beam nor among the experts, for Rows tasks
  // (elementwise, reductions, pooling): there the greedy program and the few generic expert
  // programs can be far from the best, and their sentences are short. Sampling the long
  // sentences of tiled tasks costs most of the writing time (ResNet-50: 52 s instead of 4) for
  // little (BENCHMARKS.md).
  if (o.samples > 0 && printer.space().rule == SpaceRule::Rows) {
    GenerateOptions g;
    g.n = o.samples;
    g.seed = o.seed;
    for (GeneratedProgram& c : generate_programs(m, tok, printer, g))
      if (!beam_values.count(c.program.values) && !expert_values.count(c.program.values))
        out.push_back({std::move(c.program), c.logprob, false});
  }
  // Most likely first; ties keep the order above (the beam's, then the experts' own order).
  std::stable_sort(out.begin(), out.end(), [](const ZeroShotChoice& a, const ZeroShotChoice& b) {
    return a.logprob > b.logprob;
  });
  if (o.rank) {
    TLM_CHECK(o.ranker) << "zero-shot mode ranker without a ranker";
    std::vector<Program> ps;
    for (const ZeroShotChoice& c : out) ps.push_back(c.program);
    const std::vector<float> s = o.ranker->score(printer.space(), hw, ps);
    for (size_t i = 0; i < out.size(); i++) out[i].score = s[i];
    std::stable_sort(out.begin(), out.end(), [](const ZeroShotChoice& a, const ZeroShotChoice& b) {
      return a.score > b.score;
    });
    // At two or more threads a large task's programs without a parallel loop go last (order kept
    // among each kind; all serial: unchanged): the ranker has seen serial programs measured
    // almost only at one core (the Zen 1 loop's AVX2 records) and ranked some first at two
    // (ResNet-50's 14 x 14 and 7 x 7 convolutions on Zen 3: 2.5x slower; BENCHMARKS.md, "AVX2
    // again").
    if (needs_parallel_loop(printer.space(), hw.cores, o.serial_work))
      std::stable_partition(out.begin(), out.end(), [&](const ZeroShotChoice& c) {
        return parallel_loops(printer.space(), c.program) > 0;
      });
    Program rows;
    // Under a row split every thread reads all of the weights: admitted only when they fit in
    // one core's L2 (else the channel split, each thread half of them, streams less).
    if (o.row_split_p >= 0 && hw.cores >= 2 &&
        row_split_shared_bytes(printer.space()) <= hw.l2_bytes &&
        row_split_variant(printer.space(), out[0].program, hw.cores, &rows)) {
      const float s = o.ranker->score(printer.space(), hw, {rows}).at(0);
      const double p_faster = 1.0 / (1.0 + std::exp(-((double)s - out[0].score)));
      if (p_faster >= o.row_split_p) {
        ZeroShotChoice c{std::move(rows), out[0].logprob, out[0].expert, s, true};
        // The variant may be a candidate already (further down): it moves to the front.
        for (size_t i = 1; i < out.size(); i++)
          if (out[i].program == c.program) {
            out.erase(out.begin() + (std::ptrdiff_t)i);
            break;
          }
        out.insert(out.begin(), std::move(c));
      }
    }
    // A 1x1 layer's weights (what no row indexes) of half an L2 or more: MLAS's pointwise order.
    const double weights = (double)row_split_shared_bytes(printer.space());
    Program pw;
    if (o.pointwise_weights >= 0 && weights >= o.pointwise_weights * (double)hw.l2_bytes &&
        pointwise_expert(printer.space(), hw, &pw)) {
      const auto it = std::find_if(out.begin(), out.end(),
                                   [&](const ZeroShotChoice& c) { return c.program == pw; });
      if (it != out.end()) std::rotate(out.begin(), it, it + 1);  // the others keep their order
    }
    if (o.streamed_root) {
      const auto it = std::find_if(out.begin(), out.end(), [&](const ZeroShotChoice& c) {
        return c.expert && streamed_root_expert(printer.space(), hw, c.program);
      });
      if (it != out.end()) std::rotate(out.begin(), it, it + 1);  // the others keep their order
    }
    if (o.copy_twins) {
      // Each expert's first copy twin further down moves up to follow it (the others keep their
      // order); a placed twin does not pull its own twin.
      for (size_t i = 0; i + 1 < out.size(); i++) {
        if (!out[i].expert) continue;
        for (size_t j = i + 1; j < out.size(); j++)
          if (out[j].expert && copy_twins(printer.space(), out[i].program, out[j].program)) {
            std::rotate(out.begin() + (std::ptrdiff_t)i + 1, out.begin() + (std::ptrdiff_t)j,
                        out.begin() + (std::ptrdiff_t)j + 1);
            i++;
            break;
          }
      }
    }
  }
  return out;
}

std::unique_ptr<Ranker> load_zero_shot_ranker(const ZeroShotOptions& o, const std::string& path) {
  if (!o.rank) return nullptr;
  const std::string p = path.empty() ? default_ranker_path() : path;
  TLM_USER_CHECK(!p.empty()) << "zero-shot mode ranker: no ranker: pass --ranker FILE.json, or "
                                "train one (`tlm ranker train`) and place it at models/ranker.json";
  return std::make_unique<Ranker>(Ranker::load(p));
}

ZeroShotChoice zero_shot_program(const LanguageModel& m, const Tokenizer& tok,
                                 const TaskPrinter& printer, const HardwareInfo& hw,
                                 const ZeroShotOptions& o) {
  return zero_shot_candidates(m, tok, printer, hw, o).at(0);
}

}  // namespace tlm
