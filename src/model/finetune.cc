// Fine-tuning from the base checkpoint on demonstrations (finetune.h).
#include "model/finetune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>

#include "language/sentence.h"
#include "model/data.h"
#include "model/tlm_model.h"
#include "support/error.h"
#include "support/hash.h"

namespace tlm {

std::string checkpoint_file_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TLM_USER_CHECK(in.good()) << "cannot read checkpoint " << path;
  uint64_t h = 1469598103934665603ull;  // FNV-1a, streamed
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); i++)
      h = (h ^ (unsigned char)buf[i]) * 1099511628211ull;
    if (in.eof()) break;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", (unsigned long long)h);
  return out;
}

FinetuneReport finetune_from_base(const std::string& base_path,
                                  const std::vector<Demonstration>& demos,
                                  const FinetuneOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  TLM_USER_CHECK(!demos.empty())
      << "fine-tune: no demonstration to learn from (no error-free measured program)";
  TLM_USER_CHECK(!o.train.out_path.empty()) << "fine-tune: no output path for the checkpoint";
  TLM_USER_CHECK(o.epochs > 0) << "fine-tune: epochs must be positive, got " << o.epochs;
  TlmModel base = load_tlm_model(base_path);

  // Validation groups: the n whose seeded hash is smallest (the same on every run).
  std::map<std::string, uint64_t> group_hash;
  for (const Demonstration& d : demos) {
    TLM_CHECK(d.copies >= 1) << "demonstration with " << d.copies << " copies";
    group_hash.emplace(d.group, splitmix64(fnv1a(d.group) ^ o.train.seed));
  }
  std::vector<std::pair<uint64_t, std::string>> order;
  for (const auto& [g, h] : group_hash) order.push_back({h, g});
  std::sort(order.begin(), order.end());
  const int64_t groups = (int64_t)order.size();
  const int64_t n_val = groups < 2
                            ? 0
                            : std::clamp<int64_t>((int64_t)std::llround(o.val_fraction * groups), 1,
                                                  std::min<int64_t>(o.max_val_groups, groups - 1));
  std::map<std::string, bool> is_val;
  for (int64_t i = 0; i < groups; i++) is_val[order[i].second] = i < n_val;

  SentenceEncoder enc(base.tok, LossOn::Values);
  std::vector<TokenSeq> train, val;
  for (const Demonstration& d : demos) {
    TokenSeq s = enc.encode(split_tokens(d.sentence));
    if (is_val[d.group]) {
      val.push_back(std::move(s));
    } else {
      for (int c = 1; c < d.copies; c++) train.push_back(s);
      train.push_back(std::move(s));
    }
  }
  if (val.empty()) val = train;  // one group: validate on it (the best checkpoint = the last)

  FinetuneReport rep;
  rep.demonstrations = (int64_t)demos.size();
  rep.train_sequences = (int64_t)train.size();
  rep.val_sequences = (int64_t)val.size();
  rep.base_val_loss = evaluate_loss(*base.lm, val, 32);

  TrainOptions t = o.train;
  t.max_steps = std::max<int64_t>(
      1, (int64_t)std::ceil(o.epochs * (double)train.size() / std::max(1, t.batch_size)));
  t.eval_every = (int)std::max<int64_t>(1, (t.max_steps + o.evals - 1) / std::max(1, o.evals));
  t.warmup_steps = (int)std::min<int64_t>(t.warmup_steps, t.max_steps / 4);

  CheckpointInfo info = base.info;
  info.stage = "finetune";
  info.step = 0, info.tokens_seen = 0;
  nlohmann::json ft = o.provenance.is_object() ? o.provenance : nlohmann::json::object();
  ft["base"] = base_path;
  ft["base_hash"] = checkpoint_file_hash(base_path);
  ft["base_stage"] = base.info.stage;
  ft["demonstrations"] = rep.demonstrations;
  ft["train_sequences"] = rep.train_sequences;
  ft["val_sequences"] = rep.val_sequences;
  ft["epochs"] = o.epochs;
  ft["lr"] = t.lr;
  ft["batch"] = t.batch_size;
  info.extra["finetune"] = ft;

  TrainReport r = train_language_model(*base.lm, info, train, val, {}, t);
  rep.steps = r.steps;
  rep.best_val_loss = r.best_val_loss;
  rep.resumed = r.resumed;
  rep.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace tlm
