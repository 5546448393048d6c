#include "tune/lm_search.h"

namespace tlm {
namespace {

class LmProposals : public ProposalSource {
 public:
  LmProposals(const LanguageModel& m, const Tokenizer& tok, const LmSearchOptions& o)
      : m_(m), tok_(tok), o_(o) {}

  std::vector<Program> fresh_unseen(TaskSearch& t, int n, std::mt19937_64& rng) override {
    std::vector<Program> out;
    const TaskPrinter& printer = *t.harness->printer;
    if (t.seen.empty() && n > 0) {  // the model's first choice first
      Program p = most_likely_program(m_, tok_, printer);
      if (t.seen.insert(p.values).second) out.push_back(std::move(p));
    }
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

}  // namespace tlm
