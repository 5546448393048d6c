// The training loop (train.h): batches, loss, AdamW, schedule, evaluation, checkpoints, resume.
#include "model/train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <numeric>
#include <random>

#include "model/gpt_impl.h"
#include "support/error.h"

// Not self-contained: needs the torch types that gpt_impl.h brings in.
#include <torch/nn/utils/clip_grad.h>

namespace tlm {

using nlohmann::json;

namespace {

// Sum of the per-token loss over the counted tokens of `batch`, and how many counted.
// Row b of the padded batch is seqs[b] without its last token; its targets are seqs[b] shifted by
// one, set to -1 (ignored) where loss[t] = 0 and in the padding.
torch::Tensor batch_loss_sum(GPT& gpt, const std::vector<const TokenSeq*>& batch, int64_t* counted,
                             int64_t* input_tokens) {
  const int64_t B = batch.size();
  int64_t T = 1;
  for (const TokenSeq* s : batch) T = std::max<int64_t>(T, int64_t(s->ids.size()) - 1);
  std::vector<int64_t> idx(B * T, 0), tgt(B * T, -1);
  *counted = *input_tokens = 0;
  for (int64_t b = 0; b < B; ++b) {
    const TokenSeq& s = *batch[b];
    for (size_t t = 0; t + 1 < s.ids.size(); ++t) {
      idx[b * T + t] = s.ids[t];
      if (s.loss[t + 1]) tgt[b * T + t] = s.ids[t + 1], ++*counted;
      ++*input_tokens;
    }
  }
  // The head only where the loss counts: with the loss on decision values, a third of the
  // positions or fewer.
  std::vector<int64_t> rows, targets;
  for (int64_t i = 0; i < B * T; ++i)
    if (tgt[i] >= 0) rows.push_back(i), targets.push_back(tgt[i]);
  torch::Tensor x = gpt->hidden(torch::tensor(idx).view({B, T}));  // [B, T, C]
  x = x.view({B * T, -1}).index_select(0, torch::tensor(rows));    // [N, C]
  torch::Tensor logits = gpt->head(x);                             // [N, V]
  return torch::cross_entropy_loss(logits, torch::tensor(targets), {}, at::Reduction::Sum);
}

// Checks every sequence once, up front, so a bad one fails before hours of training.
void check_sequences(const std::vector<TokenSeq>& seqs, const char* what, const GPTConfig& c) {
  for (size_t i = 0; i < seqs.size(); ++i) {
    const TokenSeq& s = seqs[i];
    TLM_USER_CHECK(!s.ids.empty() && s.ids.size() <= size_t(c.block_size))
        << what << " sequence " << i << " has " << s.ids.size() << " tokens; the model's context "
        << "holds 1 to " << c.block_size;
    TLM_USER_CHECK(s.loss.size() == s.ids.size())
        << what << " sequence " << i << " has " << s.ids.size() << " tokens but " << s.loss.size()
        << " loss flags";
    for (int id : s.ids)
      TLM_USER_CHECK(id >= 0 && id < c.vocab_size)
          << what << " sequence " << i << " has token id " << id << ", outside the vocabulary of "
          << c.vocab_size;
  }
}

std::string data_hash(const std::vector<TokenSeq>& train, const std::vector<TokenSeq>& val) {
  uint64_t h = 14695981039346656037ull;  // FNV-1a over lengths, ids and flags
  auto add = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
  for (const auto* set : {&train, &val}) {
    add(set->size());
    for (const TokenSeq& s : *set) {
      add(s.ids.size());
      for (size_t t = 0; t < s.ids.size(); ++t) add(uint64_t(s.ids[t]) << 1 | s.loss[t]);
    }
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// AdamW (Loshchilov & Hutter), decoupled weight decay on 2-D parameters only (nanoGPT).
struct AdamW {
  std::vector<std::string> names;
  std::vector<torch::Tensor> params, m, v;
  int64_t t = 0;

  explicit AdamW(GPT& gpt) {
    for (auto& p : gpt->named_parameters()) {
      names.push_back(p.key());
      params.push_back(p.value());
      m.push_back(torch::zeros_like(p.value()));
      v.push_back(torch::zeros_like(p.value()));
    }
  }
  void step(double lr, const TrainOptions& o) {
    torch::NoGradGuard no_grad;
    ++t;
    const double bc1 = 1 - std::pow(o.beta1, t), bc2 = 1 - std::pow(o.beta2, t);
    for (size_t i = 0; i < params.size(); ++i) {
      torch::Tensor& p = params[i];
      if (!p.grad().defined()) continue;
      const torch::Tensor& g = p.grad();
      m[i].mul_(o.beta1).add_(g, 1 - o.beta1);
      v[i].mul_(o.beta2).addcmul_(g, g, 1 - o.beta2);
      if (p.dim() >= 2) p.mul_(1 - lr * o.weight_decay);
      torch::Tensor denom = (v[i] / bc2).sqrt_().add_(1e-8);
      p.addcdiv_(m[i], denom, -lr / bc1);
    }
  }
};

// Linear warmup to o.lr, then cosine decay to o.min_lr at max_steps.
double lr_at(int64_t step, const TrainOptions& o) {
  if (step < o.warmup_steps) return o.lr * (step + 1) / o.warmup_steps;
  const double span = std::max<int64_t>(1, o.max_steps - o.warmup_steps);
  const double progress = std::min(1.0, (step - o.warmup_steps) / span);
  return o.min_lr + 0.5 * (1 + std::cos(M_PI * progress)) * (o.lr - o.min_lr);
}

// Batches as a function of (seed, step): consecutive slices of per-epoch shuffles of the data, so
// every sequence is seen once per epoch and a resumed run draws the same batches.
class Batches {
 public:
  Batches(const std::vector<TokenSeq>& data, uint64_t seed) : data_(data), seed_(seed) {}
  std::vector<const TokenSeq*> at(int64_t step, int batch_size) {
    std::vector<const TokenSeq*> out;
    const int64_t n = data_.size();
    for (int64_t k = step * batch_size; k < (step + 1) * batch_size; ++k) {
      if (k / n != epoch_) shuffle(k / n);
      out.push_back(&data_[order_[k % n]]);
    }
    return out;
  }

 private:
  void shuffle(int64_t epoch) {
    epoch_ = epoch;
    order_.resize(data_.size());
    std::iota(order_.begin(), order_.end(), 0);
    std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + epoch);
    std::shuffle(order_.begin(), order_.end(), rng);
  }
  const std::vector<TokenSeq>& data_;
  uint64_t seed_;
  int64_t epoch_ = -1;
  std::vector<size_t> order_;
};

struct State {  // what <out_path>.last holds besides the tensors
  int64_t step = 0, tokens = 0;
  double best_val = INFINITY, last_val = NAN, last_heldout = NAN, elapsed_s = 0;
};

void save_last(const std::string& path, GPT& gpt, const AdamW& opt, const CheckpointInfo& info,
               const State& st, const std::string& hash) {
  TensorList tensors;
  for (auto& p : gpt->named_parameters()) tensors.emplace_back(p.key(), p.value());
  for (size_t i = 0; i < opt.params.size(); ++i) {
    tensors.emplace_back("adamw.m." + opt.names[i], opt.m[i]);
    tensors.emplace_back("adamw.v." + opt.names[i], opt.v[i]);
  }
  json ts = {{"step", st.step},
             {"tokens", st.tokens},
             {"best_val", st.best_val},
             {"last_val", st.last_val},
             {"last_heldout", st.last_heldout},
             {"elapsed_s", st.elapsed_s},
             {"adamw_t", opt.t},
             {"data_hash", hash}};
  write_tensor_file(path, json{{"info", info_to_json(info)}, {"train_state", ts}}, tensors);
}

double real_or_nan(const json& j) { return j.is_null() ? NAN : j.get<double>(); }

// Restores weights, AdamW moments and the counters from a .last file written for this config and
// data; UserError otherwise.
State load_last(const std::string& path, GPT& gpt, AdamW& opt, const std::string& hash) {
  json header;
  TensorList tensors = read_tensor_file(path, &header);
  const auto redo = "; delete it to start over (or train with resume off)";
  TLM_USER_CHECK(header.count("train_state") && header.count("info"))
      << path << " is a checkpoint without training state" << redo;
  const CheckpointInfo info = info_from_json(header["info"], path);
  TLM_USER_CHECK(json(info.config) == json(gpt->config))
      << path << " was written for another model config (" << json(info.config).dump() << ", not "
      << json(gpt->config).dump() << ")" << redo;
  const json& ts = header["train_state"];
  State st;
  try {
    TLM_USER_CHECK(ts.at("data_hash").get<std::string>() == hash)
        << path << " was written while training on other data" << redo;
    st.step = ts.at("step").get<int64_t>();
    st.tokens = ts.at("tokens").get<int64_t>();
    st.best_val = real_or_nan(ts.at("best_val"));
    st.last_val = real_or_nan(ts.at("last_val"));
    st.last_heldout = real_or_nan(ts.at("last_heldout"));
    st.elapsed_s = ts.at("elapsed_s").get<double>();
    opt.t = ts.at("adamw_t").get<int64_t>();
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << " has malformed training state: " << e.what() << redo;
  }
  load_parameters(gpt, tensors, path);
  std::map<std::string, torch::Tensor> by_name(tensors.begin(), tensors.end());
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < opt.params.size(); ++i)
    for (auto [prefix, dst] :
         {std::pair{"adamw.m.", &opt.m[i]}, std::pair{"adamw.v.", &opt.v[i]}}) {
      auto it = by_name.find(prefix + opt.names[i]);
      TLM_USER_CHECK(it != by_name.end() && it->second.sizes() == dst->sizes())
          << path << " is corrupt (optimizer state of " << opt.names[i] << ")" << redo;
      dst->copy_(it->second);
    }
  return st;
}

}  // namespace

double evaluate_loss(const LanguageModel& m, const std::vector<TokenSeq>& seqs, int batch_size) {
  TLM_CHECK(batch_size > 0) << "batch_size " << batch_size;
  check_sequences(seqs, "evaluation", m.config());
  GPT& gpt = m.impl().gpt;
  torch::NoGradGuard no_grad;
  gpt->eval();
  double sum = 0;
  int64_t count = 0;
  for (size_t i = 0; i < seqs.size(); i += batch_size) {
    std::vector<const TokenSeq*> batch;
    for (size_t j = i; j < std::min(seqs.size(), i + batch_size); ++j) batch.push_back(&seqs[j]);
    int64_t counted, inputs;
    sum += batch_loss_sum(gpt, batch, &counted, &inputs).item<double>();
    count += counted;
  }
  return count ? sum / count : NAN;
}

TrainReport train_language_model(LanguageModel& m, const CheckpointInfo& info,
                                 const std::vector<TokenSeq>& train,
                                 const std::vector<TokenSeq>& val,
                                 const std::vector<TokenSeq>& heldout, const TrainOptions& o) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  const auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  TLM_USER_CHECK(!o.out_path.empty()) << "training: no output path for the checkpoint";
  TLM_USER_CHECK(o.batch_size > 0 && o.eval_every > 0 && o.max_steps > 0 && o.warmup_steps >= 0)
      << "training: batch_size, eval_every and max_steps must be positive";
  check_sequences(train, "training", m.config());
  check_sequences(val, "validation", m.config());
  check_sequences(heldout, "held-out", m.config());
  TLM_USER_CHECK(!val.empty()) << "training: no validation sequences";
  TLM_USER_CHECK(std::any_of(train.begin(), train.end(), [](const TokenSeq& s) {
    return std::find(s.loss.begin() + 1, s.loss.end(), 1) != s.loss.end();
  })) << "training: no token of the training data counts in the loss";

  GPT& gpt = m.impl().gpt;
  AdamW opt(gpt);
  State st;
  const std::string hash = data_hash(train, val), last_path = o.out_path + ".last";
  const bool resumed = o.resume && std::ifstream(last_path).good();
  if (resumed) st = load_last(last_path, gpt, opt, hash);
  const double elapsed_before = st.elapsed_s;
  const int64_t first_step = st.step, tokens_before = st.tokens;

  std::vector<TokenSeq> val_subset(val.begin(),
                                   val.begin() + std::min<size_t>(val.size(), o.eval_sequences));
  std::ofstream csv;
  if (!o.log_csv.empty()) {
    const bool fresh = !std::ifstream(o.log_csv).good() || !resumed;
    csv.open(o.log_csv, fresh ? std::ios::trunc : std::ios::app);
    TLM_USER_CHECK(csv.good()) << "cannot write the training log " << o.log_csv;
    if (fresh) csv << "step,tokens,train_loss,val_loss,heldout_loss,lr,elapsed_s\n";
  }

  torch::manual_seed(o.seed);  // dropout
  Batches batches(train, o.seed);
  double train_sum = 0, lr = 0;
  int64_t train_count = 0;
  const int eval_batch = std::max(o.batch_size, 32);
  while (st.step < o.max_steps) {
    gpt->train();
    lr = lr_at(st.step, o);
    int64_t counted, inputs;
    torch::Tensor loss = batch_loss_sum(gpt, batches.at(st.step, o.batch_size), &counted, &inputs);
    loss = loss / std::max<int64_t>(counted, 1);  // mean over counted tokens
    gpt->zero_grad();
    loss.backward();
    if (o.grad_clip > 0) torch::nn::utils::clip_grad_norm_(gpt->parameters(), o.grad_clip);
    opt.step(lr, o);
    ++st.step;
    st.tokens += inputs;
    const double step_loss = loss.item<double>();
    train_sum += step_loss, ++train_count;

    const double now = seconds();
    const bool out_of_time = o.time_budget_s > 0 && now > o.time_budget_s;
    if (st.step % o.eval_every == 0 || st.step == o.max_steps || out_of_time) {
      st.last_val = evaluate_loss(m, val_subset, eval_batch);
      st.last_heldout = heldout.empty() ? NAN : evaluate_loss(m, heldout, eval_batch);
      st.elapsed_s = elapsed_before + seconds();
      CheckpointInfo ci = info;
      ci.config = m.config();
      ci.step = st.step, ci.tokens_seen = st.tokens, ci.val_loss = st.last_val;
      if (!(st.last_val >= st.best_val)) {  // also when best is still +inf
        st.best_val = st.last_val;
        m.save(o.out_path, ci);
      }
      save_last(last_path, gpt, opt, ci, st, hash);
      if (csv.is_open())
        csv << st.step << ',' << st.tokens << ',' << train_sum / train_count << ',' << st.last_val
            << ',' << st.last_heldout << ',' << lr << ',' << st.elapsed_s << std::endl;
      train_sum = 0, train_count = 0;
    }
    if (o.on_progress) {
      const double tps = (st.tokens - tokens_before) / std::max(now, 1e-9);
      const double eta = now / (st.step - first_step) * (o.max_steps - st.step);
      o.on_progress({st.step, o.max_steps, st.tokens, step_loss, tps, eta, lr});
    }
    if (out_of_time) break;
  }
  gpt->eval();
  return {st.step, st.tokens, st.best_val, st.last_val, st.last_heldout, seconds(), resumed};
}

}  // namespace tlm
