#include "tune/lm_search.h"

namespace tlm {
namespace {

class LmSearch : public SearchPolicy {
 public:
  LmSearch(const LanguageModel& m, const Tokenizer& tok, const LmSearchOptions& o)
      : m_(m), tok_(tok), o_(o) {}
  const char* name() const override { return "tlm"; }

  std::vector<Program> propose(TaskSearch& t, int n, std::mt19937_64& rng) override {
    std::vector<Program> out;
    const TaskPrinter& printer = *t.harness->printer;
    if (t.seen.empty() && n > 0) {  // the model's first choice first
      Program p = most_likely_program(m_, tok_, printer);
      if (t.seen.insert(p.values).second) out.push_back(std::move(p));
    }
    for (int round = 0; round < 3 && (int)out.size() < n; round++) {
      GenerateOptions g;
      g.n = n - (int)out.size();
      g.batch = o_.batch;
      g.temperature = o_.temperature;
      g.top_k = o_.top_k;
      g.seed = rng();
      for (GeneratedProgram& gp : generate_programs(m_, tok_, printer, g))
        if ((int)out.size() < n && t.seen.insert(gp.program.values).second)
          out.push_back(std::move(gp.program));
    }
    if ((int)out.size() < n) {  // the model repeats itself: top up with uniform samples
      std::vector<Program> more = sample_unseen(t, n - (int)out.size(), rng);
      fallbacks_ += (int64_t)more.size();
      out.insert(out.end(), more.begin(), more.end());
    }
    return out;
  }

 private:
  const LanguageModel& m_;
  const Tokenizer& tok_;
  LmSearchOptions o_;
  int64_t fallbacks_ = 0;
};

}  // namespace

std::unique_ptr<SearchPolicy> make_lm_search(const LanguageModel& m, const Tokenizer& tok,
                                             const LmSearchOptions& o) {
  return std::make_unique<LmSearch>(m, tok, o);
}

Program most_likely_program(const LanguageModel& m, const Tokenizer& tok,
                            const TaskPrinter& printer) {
  GenerateOptions g;
  g.n = 1;
  g.beam = 1;
  return generate_programs(m, tok, printer, g).at(0).program;
}

}  // namespace tlm
