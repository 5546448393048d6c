// generate_programs: the decoding loop over a task's slots (forced headers, masked values), by
// sampling or beam search; score_programs: the unconstrained model on given programs.
#include "model/generate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>

#include "support/error.h"
#include "support/hash.h"

namespace tlm {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// The model's view of a task: the prompt and every header as ids.
struct TaskTokens {
  std::vector<int> prompt;                // <bos> subgraph hardware
  std::vector<std::vector<int>> headers;  // per slot
  int64_t length = 0;                     // ids of a whole sentence (without <eos>)
};

bool need_parallel(const TaskPrinter& printer, double serial_work) {
  return needs_parallel_loop(printer.space(), printer.hardware().cores, serial_work);
}

TaskTokens task_tokens(const Tokenizer& tok, const TaskPrinter& printer, int block_size) {
  TaskTokens t;
  t.prompt.push_back(kBosId);
  for (const std::string& s : printer.prompt()) tok.encode_token(s, &t.prompt);
  t.length = (int64_t)t.prompt.size();
  const TaskSpace& space = printer.space();
  for (size_t k = 0; k < space.slots.size(); k++) {
    std::vector<int> h;
    for (const std::string& s : printer.header(k)) tok.encode_token(s, &h);
    t.length += (int64_t)h.size() + space.slots[k].arity;
    t.headers.push_back(std::move(h));
  }
  TLM_USER_CHECK(t.length <= block_size)
      << "the task's sentences are " << t.length << " model tokens, longer than the model's "
      << "context of " << block_size << "; train a model with a longer context";
  return t;
}

// The valid values at this point of a row and their token ids.
struct Options {
  std::vector<int64_t> values;
  std::vector<int> ids;
};

// drop_serial: leave out the Parallel slot's 0 when another option remains
// (GenerateOptions::serial_work).
Options options_of(const TaskSpace& space, const Tokenizer& tok, const Slot& slot, int pos,
                   const std::vector<int64_t>& prefix, bool drop_serial) {
  Options o;
  o.values = next_options(space, prefix);
  if (drop_serial && slot.kind == StepKind::Parallel && o.values.size() > 1)
    o.values.erase(std::remove(o.values.begin(), o.values.end(), int64_t{0}), o.values.end());
  const int64_t* slot_values = prefix.data() + prefix.size() - pos;
  for (int64_t v : o.values) o.ids.push_back(tok.value_id(value_token(slot, slot_values, pos, v)));
  return o;
}

// log-probabilities of the options, renormalized over them (log-softmax of their logits).
std::vector<double> masked_logprobs(const float* row, const Options& o, double temperature) {
  std::vector<double> l(o.ids.size());
  double mx = kNegInf;
  for (size_t i = 0; i < l.size(); i++) mx = std::max(mx, l[i] = row[o.ids[i]] / temperature);
  double sum = 0;
  for (double x : l) sum += std::exp(x - mx);
  const double lse = mx + std::log(sum);
  for (double& x : l) x -= lse;
  return l;
}

size_t sample_index(const std::vector<double>& logp, int top_k, std::mt19937_64& rng) {
  std::vector<size_t> idx(logp.size());
  for (size_t i = 0; i < idx.size(); i++) idx[i] = i;
  if (top_k > 0 && (size_t)top_k < idx.size()) {
    std::partial_sort(idx.begin(), idx.begin() + top_k, idx.end(),
                      [&](size_t a, size_t b) { return logp[a] > logp[b]; });
    idx.resize(top_k);
  }
  double total = 0;
  for (size_t i : idx) total += std::exp(logp[i]);
  // A uniform draw in [0, total) from 53 bits, the same with every standard library.
  double u = (double)(rng() >> 11) * (1.0 / 9007199254740992.0) * total;
  for (size_t i : idx) {
    u -= std::exp(logp[i]);
    if (u < 0) return i;
  }
  return idx.back();
}

// The decoding walk shared by sampling and beam search: the prompt and every slot header are
// fed as forced tokens; at each value, choose(slot, position, log-probs [rows x V]) picks the
// ids to append (one per row, after any reorder it did on the session).
using ChooseFn =
    std::function<std::vector<int>(const Slot&, int, const std::vector<float>& logp)>;

// (The first feed -- the prompt and the first header, the same for every row -- is computed once
// and copied to every row by the session.)
void decode_slots(DecodeSession& sess, const TaskSpace& space, const TaskTokens& tt,
                  const ChooseFn& choose) {
  std::vector<int> pending = tt.prompt;
  const std::vector<float>* logp = nullptr;
  const size_t total = program_length(space);
  size_t done = 0;
  for (size_t k = 0; k < space.slots.size(); k++) {
    const Slot& slot = space.slots[k];
    pending.insert(pending.end(), tt.headers[k].begin(), tt.headers[k].end());
    for (int a = 0; a < slot.arity; a++) {
      if (!pending.empty()) {
        logp = &sess.feed_shared(pending);
        pending.clear();
      }
      std::vector<int> ids = choose(slot, a, *logp);
      if (++done < total) logp = &sess.step(ids);  // the last value needs no prediction after it
    }
  }
}

// One round of sampling: `rows` programs decoded in lockstep.
std::vector<GeneratedProgram> sample_round(const LanguageModel& m, const Tokenizer& tok,
                                           const TaskSpace& space, const TaskTokens& tt, int rows,
                                           const GenerateOptions& o, size_t first_row,
                                           bool parallel, std::mt19937_64& rng) {
  std::unique_ptr<DecodeSession> sess = m.start_decoding(rows);
  const int V = m.config().vocab_size;
  std::vector<GeneratedProgram> out(rows);
  // Row r's forced start (o.prefixes), and whether it is still being followed.
  std::vector<const std::vector<int64_t>*> start(rows, nullptr);
  if (!o.prefixes.empty())
    for (int r = 0; r < rows; r++) start[r] = &o.prefixes[(first_row + r) % o.prefixes.size()];
  decode_slots(*sess, space, tt, [&](const Slot& slot, int a, const std::vector<float>& logp) {
    std::vector<int> chosen(rows);
    for (int r = 0; r < rows; r++) {
      Options opt = options_of(space, tok, slot, a, out[r].program.values, parallel);
      std::vector<double> lp = masked_logprobs(logp.data() + (size_t)r * V, opt, o.temperature);
      size_t i = opt.values.size();
      const size_t pos = out[r].program.values.size();
      if (start[r] && pos < start[r]->size()) {
        auto it = std::find(opt.values.begin(), opt.values.end(), (*start[r])[pos]);
        i = (size_t)(it - opt.values.begin());
      }
      if (i == opt.values.size()) {  // past the start, or it stopped being valid: sample
        start[r] = nullptr;
        i = sample_index(lp, o.top_k, rng);
      }
      out[r].program.values.push_back(opt.values[i]);
      out[r].logprob += lp[i];
      chosen[r] = opt.ids[i];
    }
    return chosen;
  });
  return out;
}

// Beam search of width W: the W most likely programs (sum of renormalized log-probabilities).
std::vector<GeneratedProgram> beam_search(const LanguageModel& m, const Tokenizer& tok,
                                          const TaskSpace& space, const TaskTokens& tt, int W,
                                          bool parallel) {
  std::unique_ptr<DecodeSession> sess = m.start_decoding(1);
  const int V = m.config().vocab_size;
  std::vector<GeneratedProgram> beams(1);
  decode_slots(*sess, space, tt, [&](const Slot& slot, int a, const std::vector<float>& logp) {
    struct Cand {
      double score;
      int row;
      int64_t value;
      int id;
    };
    std::vector<Cand> cands;
    for (int r = 0; r < (int)beams.size(); r++) {
      Options opt = options_of(space, tok, slot, a, beams[r].program.values, parallel);
      std::vector<double> lp = masked_logprobs(logp.data() + (size_t)r * V, opt, 1.0);
      for (size_t i = 0; i < lp.size(); i++)
        cands.push_back({beams[r].logprob + lp[i], r, opt.values[i], opt.ids[i]});
    }
    // Highest score first; ties keep row then option order, so the result is deterministic.
    std::stable_sort(cands.begin(), cands.end(),
                     [](const Cand& x, const Cand& y) { return x.score > y.score; });
    cands.resize(std::min<size_t>(cands.size(), (size_t)W));
    std::vector<GeneratedProgram> next;
    std::vector<int> rows, ids;
    for (const Cand& c : cands) {
      GeneratedProgram g = beams[c.row];
      g.program.values.push_back(c.value);
      g.logprob = c.score;
      next.push_back(std::move(g));
      rows.push_back(c.row);
      ids.push_back(c.id);
    }
    beams = std::move(next);
    sess->reorder(rows);
    return ids;
  });
  return beams;
}

}  // namespace

std::vector<GeneratedProgram> generate_programs(const LanguageModel& m, const Tokenizer& tok,
                                                const TaskPrinter& printer,
                                                const GenerateOptions& o, GenerateStats* stats) {
  TLM_USER_CHECK(o.n >= 1) << "generate: -n must be at least 1";
  TLM_USER_CHECK(o.temperature > 0) << "generate: the temperature must be positive";
  const auto t0 = std::chrono::steady_clock::now();
  const TaskSpace& space = printer.space();
  TaskTokens tt = task_tokens(tok, printer, m.config().block_size);
  const bool parallel = need_parallel(printer, o.serial_work);
  GenerateStats st;
  std::vector<GeneratedProgram> out;
  if (o.beam > 0) {
    TLM_USER_CHECK(o.n <= o.beam) << "generate: -n " << o.n << " exceeds the beam width " << o.beam;
    out = beam_search(m, tok, space, tt, o.beam, parallel);
    st.sequences = (int64_t)out.size();
    if ((int)out.size() > o.n) out.resize(o.n);
  } else {
    TLM_USER_CHECK(o.batch >= 1) << "generate: the batch must be at least 1";
    std::mt19937_64 rng(splitmix64(o.seed));
    std::set<std::vector<int64_t>> seen;
    const int rounds = o.max_rounds > 0 ? o.max_rounds : 4 + 4 * o.n / o.batch;
    for (int round = 0; round < rounds && (int)out.size() < o.n; round++) {
      int rows = std::min(o.batch, std::max(1, o.n - (int)out.size()));
      if (round > 0) rows = o.batch;  // repeats: decode full batches
      for (GeneratedProgram& g :
           sample_round(m, tok, space, tt, rows, o, (size_t)st.sequences, parallel, rng)) {
        st.sequences++;
        if ((int)out.size() >= o.n) break;
        if (!seen.insert(g.program.values).second) {
          st.duplicates++;
          continue;
        }
        out.push_back(std::move(g));
      }
    }
  }
  for (const GeneratedProgram& g : out)
    TLM_CHECK(is_valid_program(space, g.program)) << "constrained decoding left the space";
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (stats) *stats = st;
  return out;
}

DecisionScores score_programs(const LanguageModel& m, const Tokenizer& tok,
                              const TaskPrinter& printer, const std::vector<Program>& programs,
                              std::vector<double>* logprobs) {
  const TaskSpace& space = printer.space();
  if (logprobs) logprobs->clear();
  TaskTokens tt = task_tokens(tok, printer, m.config().block_size);
  const bool parallel = need_parallel(printer, GenerateOptions{}.serial_work);
  const int V = m.config().vocab_size;
  DecisionScores sc;
  for (const Program& p : programs) {
    // The whole sentence, and where each value's id sits.
    std::vector<int> ids = tt.prompt;
    std::vector<size_t> at;
    size_t v = 0;
    for (size_t k = 0; k < space.slots.size(); k++) {
      const Slot& slot = space.slots[k];
      ids.insert(ids.end(), tt.headers[k].begin(), tt.headers[k].end());
      for (int a = 0; a < slot.arity; a++, v++) {
        at.push_back(ids.size());
        ids.push_back(tok.value_id(value_token(slot, &p.values[v - a], a, p.values[v])));
      }
    }
    std::vector<float> lp = m.next_token_logprobs(ids);
    std::vector<int64_t> prefix;
    double constrained = 0;
    v = 0;
    for (size_t k = 0; k < space.slots.size(); k++) {
      const Slot& slot = space.slots[k];
      for (int a = 0; a < slot.arity; a++, v++) {
        Options opt = options_of(space, tok, slot, a, prefix, false);
        const float* row = lp.data() + (at[v] - 1) * (size_t)V;  // predicts position at[v]
        double mass = 0;
        for (int id : opt.ids) mass += std::exp((double)row[id]);
        // Renormalized as generation does: over the options it leaves (a serial value: all).
        double gen_mass = mass;
        if (parallel && slot.kind == StepKind::Parallel && p.values[v] != 0) {
          gen_mass = 0;
          for (int id : options_of(space, tok, slot, a, prefix, true).ids)
            gen_mass += std::exp((double)row[id]);
        }
        constrained += row[ids[at[v]]] - std::log(gen_mass);
        sc.valid_mass += mass;
        sc.nll -= row[ids[at[v]]];
        sc.uniform_entropy += std::log((double)opt.values.size());
        sc.decisions++;
        prefix.push_back(p.values[v]);
      }
    }
    if (logprobs) logprobs->push_back(constrained);
  }
  return sc;
}

}  // namespace tlm
