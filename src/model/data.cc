#include "model/data.h"

#include <algorithm>
#include <fstream>
#include <random>

#include "language/dataset.h"
#include "language/sentence.h"
#include "language/workloads.h"
#include "space/space.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/progress.h"

namespace tlm {
namespace {

bool is_step_name(const std::string& t) {
  for (int k = 0; k < kStepKindCount; k++)
    if (t == step_kind_name((StepKind)k)) return true;
  return false;
}

// Index of the first decision token (after "isa=... cores=... vec=... l1=... l2=... l3=...").
size_t decisions_start(const std::vector<std::string>& text) {
  for (size_t i = 0; i < text.size(); i++)
    if (text[i].rfind("isa=", 0) == 0) return i + 6;
  TLM_USER_ERROR() << "not a tensor sentence: no hardware tokens (isa=...)";
}

template <typename EncodeToken>
TokenSeq encode_with(const std::vector<std::string>& text, LossOn loss, EncodeToken&& enc) {
  TokenSeq s;
  s.ids.push_back(kBosId);
  s.loss.push_back(0);
  const size_t d = decisions_start(text);
  bool in_values = false;
  for (size_t i = 0; i < text.size(); i++) {
    const size_t before = s.ids.size();
    enc(text[i], &s.ids);
    bool value = false;
    if (i >= d) {
      if (text[i] == kArrow) {
        in_values = true;
      } else if (is_step_name(text[i])) {
        in_values = false;
      } else {
        value = in_values;
      }
    }
    TLM_CHECK(!value || s.ids.size() == before + 1) << "value '" << text[i] << "' is not one token";
    s.loss.resize(s.ids.size(), loss == LossOn::All || value ? 1 : 0);
  }
  s.ids.push_back(kEosId);
  s.loss.push_back(loss == LossOn::All ? 1 : 0);
  return s;
}

}  // namespace

LossOn parse_loss_on(const std::string& s) {
  if (s == "values") return LossOn::Values;
  if (s == "all") return LossOn::All;
  TLM_USER_ERROR() << "--loss must be 'values' or 'all', got '" << s << "'";
}

TokenSeq SentenceEncoder::encode(const std::vector<std::string>& text) const {
  return encode_with(text, loss_, [&](const std::string& t, std::vector<int>* out) {
    auto it = cache_.find(t);
    if (it == cache_.end()) {
      std::vector<int> ids;
      tok_->encode_token(t, &ids);
      it = cache_.emplace(t, std::move(ids)).first;
    }
    out->insert(out->end(), it->second.begin(), it->second.end());
  });
}

TokenSeq encode_sentence(const Tokenizer& tok, const std::vector<std::string>& text, LossOn loss) {
  return encode_with(
      text, loss, [&](const std::string& t, std::vector<int>* out) { tok.encode_token(t, out); });
}

PretrainData load_pretraining_data(const PretrainDataOptions& o) {
  TLM_USER_CHECK(!o.dataset_dirs.empty()) << "train: no dataset given (--data DIR)";
  PretrainData d;
  std::vector<DatasetManifest> manifests;
  for (const std::string& dir : o.dataset_dirs) manifests.push_back(load_manifest(dir));
  d.tokenizer = load_tokenizer(manifests[0].tokenizer);
  for (const DatasetManifest& m : manifests) {
    Tokenizer t = load_tokenizer(m.tokenizer);
    TLM_USER_CHECK(t.hash() == d.tokenizer.hash())
        << "train: datasets " << manifests[0].dir << " and " << m.dir
        << " have different tokenizers; sample them in one `tlm sample` run (--hardware takes "
        << "several machines)";
    for (const std::string& hw : m.hardware)
      if (std::find(d.hardware.begin(), d.hardware.end(), hw) == d.hardware.end())
        d.hardware.push_back(hw);
  }

  // Sentences, split into train / validation by a seeded hash of the line.
  SentenceEncoder enc(d.tokenizer, o.loss);
  const uint64_t threshold = (uint64_t)(o.val_fraction * 18446744073709551615.0);
  int64_t read = 0, total = 0;
  for (const DatasetManifest& m : manifests) total += m.sentences;
  if (o.max_sentences > 0) total = std::min(total, o.max_sentences);
  ProgressLine progress(o.progress, "train: reading sentences", total, 5);
  std::string line;
  for (const DatasetManifest& m : manifests)
    for (const std::string& shard : m.shards) {
      std::ifstream in(shard);
      TLM_USER_CHECK(in.good()) << "train: cannot read " << shard;
      while (std::getline(in, line) && (o.max_sentences <= 0 || read < o.max_sentences)) {
        if (line.empty()) continue;
        TokenSeq s = enc.encode(split_tokens(line));
        d.max_len = std::max<int64_t>(d.max_len, (int64_t)s.ids.size());
        bool val = splitmix64(fnv1a(line) ^ o.seed) < threshold;
        (val ? d.val : d.train).push_back(std::move(s));
        if (++read % 20000 == 0) progress.update(read, "");
      }
    }
  progress.finish();
  TLM_USER_CHECK(!d.train.empty()) << "train: the datasets hold no sentence";
  if (d.val.empty()) {  // a tiny dataset: hold one sentence out anyway
    d.val.push_back(d.train.back());
    d.train.pop_back();
    TLM_USER_CHECK(!d.train.empty()) << "train: a dataset of one sentence cannot be split";
  }

  // Held-out workloads: random programs for their tasks, for evaluation only.
  if (o.heldout_per_task > 0) {
    std::mt19937_64 rng(splitmix64(o.seed ^ 0x48454c44ull));
    for (const auto& t : heldout_tasks(d.hardware))
      for (int k = 0; k < o.heldout_per_task; k++) {
        TokenSeq s = enc.encode(split_tokens(t->printer->text(sample_program(t->space, rng))));
        d.max_len = std::max<int64_t>(d.max_len, (int64_t)s.ids.size());
        d.heldout.push_back(std::move(s));
      }
  }
  return d;
}

std::vector<std::unique_ptr<HeldoutTask>> heldout_tasks(const std::vector<std::string>& hardware) {
  std::vector<std::unique_ptr<HeldoutTask>> out;
  for (const std::string& spec : heldout_workloads())
    for (const Subgraph& sub : workload_tasks(spec))
      for (const std::string& key : hardware) {
        auto t = std::make_unique<HeldoutTask>();
        t->sub = sub;
        t->hw = parse_hardware_key(key);
        if (!workload_fits(spec, t->hw.vector_bits / 32)) continue;
        try {
          t->lowered = lower_subgraph(sub);
          t->space = build_space(t->lowered, t->hw);
        } catch (const UserError&) {
          continue;
        }
        t->printer = std::make_unique<TaskPrinter>(t->sub, t->hw, t->space);
        out.push_back(std::move(t));
      }
  return out;
}

}  // namespace tlm
