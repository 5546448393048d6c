// The LanguageModel facade: construction, scoring, the checkpoint file, decoding with a KV cache.
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <set>

#include "model/gpt_impl.h"
#include "support/error.h"

namespace tlm {

using nlohmann::json;

namespace {

const char kMagic[8] = {'t', 'l', 'm', '-', 'c', 'k', 'p', 't'};
// magic, format version, header length; the header; the tensors; a checksum of all before it.
constexpr size_t kPrefixBytes = 8 + 4 + 8;

// FNV-1a, 64 bit: catches flipped or shuffled bytes; the file size check catches truncation.
struct Checksum {
  uint64_t h = 14695981039346656037ull;
  void add(const void* p, size_t n) {
    const unsigned char* b = static_cast<const unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  }
};

// Writes to a temporary file beside `path`, renamed over it only when complete and on disk.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path)
      : path_(path), tmp_(path + ".tmp" + std::to_string(getpid())) {
    f_ = std::fopen(tmp_.c_str(), "wb");
    TLM_USER_CHECK(f_) << "cannot write checkpoint " << tmp_ << ": " << std::strerror(errno);
  }
  ~AtomicFile() {
    if (f_) std::fclose(f_), std::remove(tmp_.c_str());  // not committed: an error was thrown
  }
  void put(const void* p, size_t n) {
    sum_.add(p, n);
    if (std::fwrite(p, 1, n, f_) != n) fail();
  }
  void commit() {
    const uint64_t sum = sum_.h;
    if (std::fwrite(&sum, 1, 8, f_) != 8 || std::fflush(f_) != 0 || fsync(fileno(f_)) != 0) fail();
    const int rc = std::fclose(f_);
    f_ = nullptr;
    if (rc != 0 || std::rename(tmp_.c_str(), path_.c_str()) != 0) {
      std::remove(tmp_.c_str());
      TLM_USER_ERROR() << "cannot write checkpoint " << path_ << ": " << std::strerror(errno);
    }
  }

 private:
  [[noreturn]] void fail() {
    TLM_USER_ERROR() << "cannot write checkpoint " << path_ << ": " << std::strerror(errno);
  }
  std::string path_, tmp_;
  std::FILE* f_ = nullptr;
  Checksum sum_;
};

// Reads the checkpoint's bytes in order, folding them into the checksum.
class Reader {
 public:
  explicit Reader(std::FILE* f) : f_(f) {}
  ~Reader() { std::fclose(f_); }
  bool get(void* p, size_t n) {
    if (std::fread(p, 1, n, f_) != n) return false;
    sum_.add(p, n);
    return true;
  }
  Checksum sum_;

 private:
  std::FILE* f_;
};

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

torch::Tensor token_tensor(const std::vector<int>& ids, int64_t rows, int vocab_size) {
  std::vector<int64_t> v(ids.begin(), ids.end());
  for (int id : ids)
    TLM_USER_CHECK(id >= 0 && id < vocab_size)
        << "token id " << id << " is outside the model's vocabulary of " << vocab_size
        << " (was the model trained with another tokenizer?)";
  return torch::tensor(v, torch::kLong).view({rows, int64_t(ids.size()) / rows});  // [rows, T]
}

void write_tensor_file(const std::string& path, json header, const TensorList& tensors) {
  json table = json::array();
  for (const auto& [name, t] : tensors) {
    TLM_CHECK(t.scalar_type() == torch::kFloat) << name << " is not fp32";
    table.push_back({{"name", name}, {"shape", t.sizes().vec()}});
  }
  header["tensors"] = table;
  const std::string text = header.dump();
  const uint32_t version = kCheckpointFormatVersion;
  const uint64_t header_bytes = text.size();
  AtomicFile f(path);
  f.put(kMagic, 8);
  f.put(&version, 4);
  f.put(&header_bytes, 8);
  f.put(text.data(), text.size());
  for (const auto& [name, t] : tensors) {
    torch::Tensor c = t.detach().contiguous();
    f.put(c.data_ptr<float>(), c.numel() * sizeof(float));
  }
  f.commit();
}

TensorList read_tensor_file(const std::string& path, json* header) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  TLM_USER_CHECK(file) << "cannot open checkpoint " << path << ": " << std::strerror(errno);
  Reader r(file);
  std::fseek(file, 0, SEEK_END);
  const uint64_t size = std::ftell(file);
  std::fseek(file, 0, SEEK_SET);
  const auto truncated = [&](uint64_t expected) {
    TLM_USER_ERROR() << "checkpoint " << path << " is truncated (" << size << " bytes, expected "
                     << expected << "): it was cut short while being copied or written";
  };

  char magic[8] = {};
  const size_t got = std::fread(magic, 1, 8, file);
  r.sum_.add(magic, got);
  if (got < 8 && std::memcmp(magic, kMagic, got) == 0) truncated(kPrefixBytes);
  TLM_USER_CHECK(got == 8 && std::memcmp(magic, kMagic, 8) == 0)
      << path << " is not a tlm checkpoint (it does not start with \"tlm-ckpt\")";
  uint32_t version = 0;
  uint64_t header_bytes = 0;
  if (!r.get(&version, 4)) truncated(kPrefixBytes);
  TLM_USER_CHECK(version == kCheckpointFormatVersion)
      << "checkpoint " << path << " has format version " << version << ", but this build reads "
      << "version " << kCheckpointFormatVersion << ": train it again with this build";
  if (!r.get(&header_bytes, 8)) truncated(kPrefixBytes);
  if (header_bytes > size - kPrefixBytes) truncated(kPrefixBytes + header_bytes);
  std::string text(header_bytes, '\0');
  if (!r.get(text.data(), header_bytes)) truncated(kPrefixBytes + header_bytes);

  const auto corrupt = [&](const std::string& what) {
    TLM_USER_ERROR() << "checkpoint " << path << " is corrupt (" << what << ")";
  };
  std::vector<std::pair<std::string, std::vector<int64_t>>> table;
  uint64_t data_bytes = 0;
  try {
    *header = json::parse(text);
    for (const json& e : header->at("tensors")) {
      table.emplace_back(e.at("name").get<std::string>(),
                         e.at("shape").get<std::vector<int64_t>>());
      for (int64_t d : table.back().second)
        if (d < 0) corrupt("negative size in the tensor table");
      data_bytes += numel(table.back().second) * sizeof(float);
    }
  } catch (const json::exception& e) {
    corrupt(std::string("unreadable header: ") + e.what());
  }
  const uint64_t expected = kPrefixBytes + header_bytes + data_bytes + 8;
  if (size < expected) truncated(expected);
  if (size > expected) corrupt(std::to_string(size - expected) + " unexpected trailing bytes");

  TensorList tensors;
  for (const auto& [name, shape] : table) {
    torch::Tensor t = torch::empty(shape, torch::kFloat);
    if (!r.get(t.data_ptr<float>(), t.numel() * sizeof(float))) truncated(expected);
    tensors.emplace_back(name, t);
  }
  const uint64_t computed = r.sum_.h;
  uint64_t stored = 0;
  if (std::fread(&stored, 1, 8, file) != 8) truncated(expected);
  if (stored != computed) corrupt("checksum mismatch: the file was damaged");
  return tensors;
}

void load_parameters(GPT& gpt, const TensorList& tensors, const std::string& path) {
  std::map<std::string, torch::Tensor> by_name;
  for (const auto& [name, t] : tensors)
    if (name.rfind("adamw.", 0) != 0) by_name[name] = t;  // optimizer state: train.cc's business
  torch::NoGradGuard no_grad;
  for (auto& p : gpt->named_parameters()) {
    auto it = by_name.find(p.key());
    TLM_USER_CHECK(it != by_name.end())
        << "checkpoint " << path << " is corrupt (no tensor " << p.key() << ")";
    TLM_USER_CHECK(it->second.sizes() == p.value().sizes())
        << "checkpoint " << path << " is corrupt (" << p.key() << " has shape "
        << it->second.sizes() << ", the config implies " << p.value().sizes() << ")";
    p.value().copy_(it->second);
    by_name.erase(it);
  }
  TLM_USER_CHECK(by_name.empty()) << "checkpoint " << path << " is corrupt (unexpected tensor "
                                  << by_name.begin()->first << ")";
}

json info_to_json(const CheckpointInfo& info) {
  return json{{"config", info.config},
              {"vocab_hash", info.vocab_hash},
              {"language_version", info.language_version},
              {"stage", info.stage},
              {"step", info.step},
              {"tokens_seen", info.tokens_seen},
              {"val_loss", info.val_loss},  // NaN is written as null
              {"extra", info.extra}};
}

CheckpointInfo info_from_json(const json& j, const std::string& path) {
  static const std::set<std::string> kKeys = {"config", "vocab_hash",  "language_version", "stage",
                                              "step",   "tokens_seen", "val_loss",         "extra"};
  CheckpointInfo info;
  try {
    TLM_USER_CHECK(j.is_object()) << "the info is not a JSON object";
    for (auto it = j.begin(); it != j.end(); ++it)
      TLM_USER_CHECK(kKeys.count(it.key())) << "unknown key '" << it.key() << "'";
    for (const std::string& k : kKeys) TLM_USER_CHECK(j.count(k)) << "missing key '" << k << "'";
    info.config = j.at("config").get<GPTConfig>();
    info.vocab_hash = j.at("vocab_hash").get<std::string>();
    info.language_version = j.at("language_version").get<int>();
    info.stage = j.at("stage").get<std::string>();
    info.step = j.at("step").get<int64_t>();
    info.tokens_seen = j.at("tokens_seen").get<int64_t>();
    info.val_loss = j.at("val_loss").is_null() ? NAN : j.at("val_loss").get<double>();
    info.extra = j.at("extra");
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << "checkpoint " << path << " has a malformed header: " << e.what();
  } catch (const UserError& e) {
    TLM_USER_ERROR() << "checkpoint " << path << " has a malformed header: " << e.what();
  }
  return info;
}

void check_compatible(const CheckpointInfo& info, const std::string& vocab_hash,
                      int language_version, const std::string& what_to_rerun) {
  const std::string name =
      info.loaded_from.empty() ? "the model" : "checkpoint " + info.loaded_from;
  TLM_USER_CHECK(info.vocab_hash == vocab_hash)
      << name << " was trained with vocabulary " << info.vocab_hash << ", but the tokenizer's is "
      << vocab_hash << ": rerun " << what_to_rerun;
  TLM_USER_CHECK(info.language_version == language_version)
      << name << " was trained on tensor language version " << info.language_version
      << ", but this build speaks version " << language_version << ": rerun " << what_to_rerun;
}

// --- LanguageModel ---

LanguageModel::LanguageModel(const GPTConfig& c, uint64_t seed) : impl_(std::make_unique<Impl>(c)) {
  impl_->gpt->init_weights(seed);
  impl_->gpt->eval();
}

LanguageModel::LanguageModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LanguageModel::~LanguageModel() = default;

const GPTConfig& LanguageModel::config() const { return impl_->gpt->config; }

int64_t LanguageModel::parameter_count() const {
  int64_t n = 0;
  for (const torch::Tensor& p : impl_->gpt->parameters()) n += p.numel();
  return n;
}

void LanguageModel::save(const std::string& path, const CheckpointInfo& info) const {
  CheckpointInfo stored = info;
  stored.config = config();
  TensorList tensors;
  for (auto& p : impl_->gpt->named_parameters()) tensors.emplace_back(p.key(), p.value());
  write_tensor_file(path, json{{"info", info_to_json(stored)}}, tensors);
}

std::unique_ptr<LanguageModel> LanguageModel::load(const std::string& path, CheckpointInfo* info) {
  json header;
  TensorList tensors = read_tensor_file(path, &header);
  for (auto it = header.begin(); it != header.end(); ++it)  // train_state: a resumable .last file
    TLM_USER_CHECK(it.key() == "info" || it.key() == "tensors" || it.key() == "train_state")
        << "checkpoint " << path << " has a malformed header: unknown key '" << it.key() << "'";
  TLM_USER_CHECK(header.count("info")) << "checkpoint " << path << " has no info in its header";
  CheckpointInfo ci = info_from_json(header.at("info"), path);
  std::unique_ptr<LanguageModel> m(new LanguageModel(std::make_unique<Impl>(ci.config)));
  load_parameters(m->impl_->gpt, tensors, path);
  m->impl_->gpt->eval();
  if (info) *info = ci, info->loaded_from = path;
  return m;
}

std::vector<float> LanguageModel::next_token_logprobs(const std::vector<int>& ids) const {
  TLM_USER_CHECK(!ids.empty()) << "cannot score an empty sequence";
  TLM_USER_CHECK(int(ids.size()) <= config().block_size)
      << "a sequence of " << ids.size() << " tokens exceeds the model's context of "
      << config().block_size << " tokens";
  torch::NoGradGuard no_grad;
  impl_->gpt->eval();
  torch::Tensor idx = token_tensor(ids, 1, config().vocab_size);             // [1, T]
  torch::Tensor lp = impl_->gpt->forward(idx).log_softmax(-1).contiguous();  // [1, T, V]
  return std::vector<float>(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
}

std::vector<NamedTensor> LanguageModel::parameters() const {
  std::vector<NamedTensor> out;
  for (auto& p : impl_->gpt->named_parameters()) {
    torch::Tensor c = p.value().detach().contiguous();
    out.push_back({p.key(), c.sizes().vec(),
                   std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel())});
  }
  return out;
}

// --- DecodeSession ---

struct DecodeSession::State {
  LanguageModel::Impl* m;
  int batch;
  KVCache cache;
  std::vector<float> out;  // [batch, V]

  void check_room(size_t n) const {
    const int block = m->gpt->config.block_size;
    TLM_USER_CHECK(cache.length + int64_t(n) <= block)
        << "decoding: " << cache.length << " + " << n << " tokens exceed the model's context of "
        << block << " tokens (a longer sentence than the model was built for: train one with a "
        << "larger block_size)";
  }
  // idx: [rows, T] after the cached positions; stores the next-token log-probabilities.
  void run(const torch::Tensor& idx) {
    torch::NoGradGuard no_grad;
    m->gpt->eval();
    torch::Tensor lp =
        m->gpt->forward(idx, &cache, /*last_only=*/true).log_softmax(-1);  // [rows, V]
    lp = lp.expand({batch, lp.size(1)}).contiguous();                      // [batch, V]
    out.assign(lp.data_ptr<float>(), lp.data_ptr<float>() + lp.numel());
  }
};

std::unique_ptr<DecodeSession> LanguageModel::start_decoding(int batch) const {
  TLM_CHECK(batch > 0) << "batch " << batch;
  auto s = std::make_unique<DecodeSession::State>();
  s->m = impl_.get();
  s->batch = batch;
  return std::unique_ptr<DecodeSession>(new DecodeSession(std::move(s)));
}

DecodeSession::DecodeSession(std::unique_ptr<State> s) : s_(std::move(s)) {}
DecodeSession::~DecodeSession() = default;
int DecodeSession::length() const { return int(s_->cache.length); }
int DecodeSession::batch() const { return s_->batch; }

const std::vector<float>& DecodeSession::feed_shared(const std::vector<int>& ids) {
  TLM_CHECK(!ids.empty()) << "feed_shared without tokens";
  s_->check_room(ids.size());
  const int V = s_->m->gpt->config.vocab_size;
  if (length() == 0) {
    // All rows are still equal: run one and copy its cache to every row.
    s_->run(token_tensor(ids, 1, V));
    for (auto* list : {&s_->cache.k, &s_->cache.v})
      for (torch::Tensor& t : *list)
        t = t.expand({s_->batch, -1, -1, -1}).contiguous();  // [batch, nh, block_size, hs]
  } else {
    std::vector<int> rows;
    for (int b = 0; b < s_->batch; ++b) rows.insert(rows.end(), ids.begin(), ids.end());
    s_->run(token_tensor(rows, s_->batch, V));
  }
  return s_->out;
}

const std::vector<float>& DecodeSession::step(const std::vector<int>& ids) {
  TLM_CHECK(int(ids.size()) == s_->batch) << ids.size() << " tokens for a batch of " << s_->batch;
  s_->check_room(1);
  s_->run(token_tensor(ids, s_->batch, s_->m->gpt->config.vocab_size));
  return s_->out;
}

void DecodeSession::reorder(const std::vector<int>& rows) {
  TLM_CHECK(!rows.empty()) << "reorder to an empty batch";
  for (int r : rows) TLM_CHECK(r >= 0 && r < s_->batch) << "row " << r << " of " << s_->batch;
  torch::Tensor idx = torch::tensor(std::vector<int64_t>(rows.begin(), rows.end()), torch::kLong);
  for (auto* list : {&s_->cache.k, &s_->cache.v})
    for (torch::Tensor& t : *list)
      if (t.defined()) t = t.index_select(0, idx);  // [rows, nh, block_size, hs]
  const size_t V = s_->m->gpt->config.vocab_size;
  std::vector<float> out;
  if (!s_->out.empty())
    for (int r : rows)
      out.insert(out.end(), s_->out.begin() + r * V, s_->out.begin() + (r + 1) * V);
  s_->out = std::move(out);
  s_->batch = int(rows.size());
}

// --- generate, threads ---

std::vector<int> generate(const LanguageModel& m, const std::vector<int>& prompt,
                          int max_new_tokens, double temperature, uint64_t seed, int stop_token) {
  TLM_USER_CHECK(!prompt.empty()) << "generate: the prompt is empty";
  std::unique_ptr<DecodeSession> s = m.start_decoding(1);
  const std::vector<float>* logp = &s->feed_shared(prompt);
  std::mt19937_64 rng(seed);
  std::vector<int> out;
  for (int i = 0; i < max_new_tokens; ++i) {
    // Sample from softmax(logp / temperature); temperature 0 takes the most likely token.
    const std::vector<float>& lp = *logp;
    int next = int(std::max_element(lp.begin(), lp.end()) - lp.begin());
    if (temperature > 0) {
      std::vector<double> p(lp.size());
      double total = 0;
      for (size_t t = 0; t < lp.size(); ++t)
        total += p[t] = std::exp((lp[t] - lp[next]) / temperature);
      double u = double(rng() >> 11) * 0x1.0p-53 * total;
      for (next = 0; next + 1 < int(p.size()) && u >= p[next]; ++next) u -= p[next];
    }
    out.push_back(next);
    if (next == stop_token || s->length() == m.config().block_size) break;
    if (i + 1 < max_new_tokens) logp = &s->step({next});
  }
  return out;
}

void set_model_threads(int n) {
  TLM_USER_CHECK(n > 0) << "threads must be positive, got " << n;
  at::set_num_threads(n);
  static bool interop_set = false;  // libtorch allows it once, before inter-op work starts
  if (!interop_set) {
    interop_set = true;
    try {
      at::set_num_interop_threads(n);
    } catch (const std::exception&) {
    }
  }
}

}  // namespace tlm
