// The GPT against an independent reference: a naive forward pass in plain C++ loops over the
// weights from parameters() (LayerNorm, causal attention, GELU MLP, tied head) on a model small
// enough to check by hand; and the analytic parameter count against the module's.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include "model/lm.h"
#include "support/error.h"

namespace tlm {
namespace {

using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

struct Reference {
  std::map<std::string, NamedTensor> p;
  GPTConfig c;

  const NamedTensor& at(const std::string& name) const {
    auto it = p.find(name);
    if (it == p.end()) throw std::runtime_error("no parameter " + name);
    return it->second;
  }
  bool has(const std::string& name) const { return p.count(name) > 0; }

  // x [T][in] times W^T (W: [out][in]) plus the bias, if the model has one.
  Matrix linear(const Matrix& x, const std::string& prefix) const {
    const NamedTensor& w = at(prefix + ".weight");
    const int64_t out = w.shape[0], in = w.shape[1];
    Matrix y(x.size(), std::vector<double>(out, 0.0));
    for (size_t t = 0; t < x.size(); ++t)
      for (int64_t o = 0; o < out; ++o) {
        double s = has(prefix + ".bias") ? at(prefix + ".bias").data[o] : 0.0;
        for (int64_t i = 0; i < in; ++i) s += x[t][i] * w.data[o * in + i];
        y[t][o] = s;
      }
    return y;
  }
  Matrix layer_norm(const Matrix& x, const std::string& prefix) const {
    Matrix y = x;
    for (auto& row : y) {
      double mean = 0, var = 0;
      for (double v : row) mean += v / row.size();
      for (double v : row) var += (v - mean) * (v - mean) / row.size();
      for (size_t i = 0; i < row.size(); ++i) {
        row[i] = (row[i] - mean) / std::sqrt(var + 1e-5) * at(prefix + ".weight").data[i];
        if (has(prefix + ".bias")) row[i] += at(prefix + ".bias").data[i];
      }
    }
    return y;
  }
  Matrix attention(const Matrix& x, const std::string& prefix) const {
    const Matrix qkv = linear(x, prefix + ".c_attn");  // [T][3C]: q | k | v, heads side by side
    const int T = x.size(), C = c.n_embd, hs = C / c.n_head;
    Matrix y(T, std::vector<double>(C, 0.0));
    for (int h = 0; h < c.n_head; ++h)
      for (int i = 0; i < T; ++i) {
        std::vector<double> w(i + 1);
        double mx = -1e300, total = 0;
        for (int j = 0; j <= i; ++j) {
          double s = 0;
          for (int d = 0; d < hs; ++d) s += qkv[i][h * hs + d] * qkv[j][C + h * hs + d];
          w[j] = s / std::sqrt(double(hs));
          mx = std::max(mx, w[j]);
        }
        for (double& v : w) total += v = std::exp(v - mx);
        for (int j = 0; j <= i; ++j)
          for (int d = 0; d < hs; ++d)
            y[i][h * hs + d] += w[j] / total * qkv[j][2 * C + h * hs + d];
      }
    return linear(y, prefix + ".c_proj");
  }
  Matrix mlp(const Matrix& x, const std::string& prefix) const {
    Matrix h = linear(x, prefix + ".c_fc");
    for (auto& row : h)
      for (double& v : row) v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
    return linear(h, prefix + ".c_proj");
  }
  // log-softmax of the next token at every position, [T][V]
  Matrix forward(const std::vector<int>& ids) const {
    const int T = ids.size(), C = c.n_embd;
    Matrix x(T, std::vector<double>(C));
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < C; ++i)
        x[t][i] = at("wte.weight").data[ids[t] * C + i] + at("wpe.weight").data[t * C + i];
    for (int l = 0; l < c.n_layer; ++l) {
      const std::string b = "h." + std::to_string(l);
      Matrix a = attention(layer_norm(x, b + ".ln_1"), b + ".attn");
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < C; ++i) x[t][i] += a[t][i];
      Matrix m = mlp(layer_norm(x, b + ".ln_2"), b + ".mlp");
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < C; ++i) x[t][i] += m[t][i];
    }
    Matrix logits = linear(layer_norm(x, "ln_f"), "wte");  // the tied head
    for (auto& row : logits) {
      double mx = -1e300, total = 0;
      for (double v : row) mx = std::max(mx, v);
      for (double v : row) total += std::exp(v - mx);
      for (double& v : row) v = v - mx - std::log(total);
    }
    return logits;
  }
};

GPTConfig hand_sized(bool bias) {
  GPTConfig c;
  c.vocab_size = 11;
  c.block_size = 8;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_embd = 8;
  c.bias = bias;
  return c;
}

void expect_matches_reference(const LanguageModel& m, const std::vector<int>& ids) {
  Reference ref;
  ref.c = m.config();
  for (NamedTensor& t : m.parameters()) ref.p[t.name] = t;
  const Matrix want = ref.forward(ids);
  const std::vector<float> got = m.next_token_logprobs(ids);
  const int V = m.config().vocab_size;
  ASSERT_EQ(got.size(), ids.size() * V);
  for (size_t t = 0; t < ids.size(); ++t)
    for (int v = 0; v < V; ++v)
      ASSERT_NEAR(got[t * V + v], want[t][v], 1e-4) << "position " << t << " token " << v;
}

TEST(GPT, MatchesNaiveForwardAtInit) {
  LanguageModel m(hand_sized(false), 7);
  std::vector<std::string> names;
  for (const NamedTensor& t : m.parameters()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"wte.weight", "wpe.weight", "h.0.ln_1.weight",
                                             "h.0.attn.c_attn.weight", "h.0.attn.c_proj.weight",
                                             "h.0.ln_2.weight", "h.0.mlp.c_fc.weight",
                                             "h.0.mlp.c_proj.weight", "ln_f.weight"}));
  expect_matches_reference(m, {3, 1, 4, 1, 5, 9});
}

// Writes a checkpoint in the format documented in lm.h, by hand, with every weight (LayerNorm
// gains and biases included) uniform in [-1, 1], so each nonlinearity works far from its linear
// regime; the names and shapes are those of `like`.
std::vector<NamedTensor> write_checkpoint_by_hand(const std::string& path, const GPTConfig& c,
                                                  const std::vector<NamedTensor>& like) {
  std::mt19937_64 rng(1);
  std::vector<NamedTensor> params = like;
  nlohmann::json table = nlohmann::json::array();
  for (NamedTensor& t : params) {
    for (float& v : t.data) v = std::uniform_real_distribution<float>(-1, 1)(rng);
    table.push_back({{"name", t.name}, {"shape", t.shape}});
  }
  const nlohmann::json info = {
      {"config", c}, {"vocab_hash", "by-hand"}, {"language_version", 0}, {"stage", "base"},
      {"step", 0},   {"tokens_seen", 0},        {"val_loss", 0.0},       {"extra", nullptr}};
  const std::string header = nlohmann::json{{"info", info}, {"tensors", table}}.dump();
  std::string bytes = "tlm-ckpt";
  const uint32_t version = 1;
  const uint64_t header_size = header.size();
  bytes.append(reinterpret_cast<const char*>(&version), 4);
  bytes.append(reinterpret_cast<const char*>(&header_size), 8);
  bytes += header;
  for (const NamedTensor& t : params)
    bytes.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * sizeof(float));
  uint64_t h = 14695981039346656037ull;  // FNV-1a 64 of everything before it
  for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
  bytes.append(reinterpret_cast<const char*>(&h), 8);
  std::ofstream(path, std::ios::binary) << bytes;
  return params;
}

TEST(GPT, MatchesNaiveForwardWithLargeWeightsAndBiases) {
  const GPTConfig c = hand_sized(true);
  const std::string path =
      ::testing::TempDir() + "tlm_gpt_test_" + std::to_string(getpid()) + ".ckpt";
  const std::vector<NamedTensor> params =
      write_checkpoint_by_hand(path, c, LanguageModel(c, 0).parameters());
  auto m = LanguageModel::load(path, nullptr);
  std::remove(path.c_str());
  Reference ref;
  ref.c = c;
  for (const NamedTensor& t : params) ref.p[t.name] = t;
  EXPECT_EQ(ref.p.size(), 16u);  // 9 weights, 7 biases
  const std::vector<int> ids = {1, 6, 3, 4, 10, 2, 2, 7};
  const Matrix want = ref.forward(ids);
  const std::vector<float> got = m->next_token_logprobs(ids);
  double spread = 0;  // the test means something only if the distributions are far from uniform
  for (size_t t = 0; t < ids.size(); ++t)
    for (int v = 0; v < c.vocab_size; ++v) {
      ASSERT_NEAR(got[t * c.vocab_size + v], want[t][v], 1e-4)
          << "position " << t << " token " << v;
      spread = std::max(spread, std::abs(want[t][v] + std::log(double(c.vocab_size))));
    }
  EXPECT_GT(spread, 1.0);
}

TEST(GPT, ParameterCountIsAnalytic) {
  const GPTConfig tiny = GPTConfig::tiny(4096, 256);
  LanguageModel t(tiny, 0);
  EXPECT_EQ(tiny.param_count(), t.parameter_count());
  EXPECT_GT(tiny.param_count(), 2000000);
  EXPECT_LT(tiny.param_count(), 6000000);

  GPTConfig with_bias = hand_sized(true);
  EXPECT_EQ(with_bias.param_count(), LanguageModel(with_bias, 0).parameter_count());

  // A real GPT-2 Small shaped model (small vocabulary to keep it at ~87M parameters).
  const GPTConfig small = GPTConfig::gpt2_small(64, 1024);
  EXPECT_EQ(small.param_count(), LanguageModel(small, 0).parameter_count());
  // With GPT-2's vocabulary the formula gives GPT-2 Small's well-known 124M (with biases).
  GPTConfig gpt2 = GPTConfig::gpt2_small(50257, 1024);
  gpt2.bias = true;
  EXPECT_EQ(gpt2.param_count(), 124439808);
}

TEST(GPT, InitIsDeterministicAndNanoGPTScaled) {
  GPTConfig c = hand_sized(false);
  c.n_layer = 2, c.n_embd = 64, c.vocab_size = 500;
  LanguageModel a(c, 5), b(c, 5), d(c, 6);
  const auto pa = a.parameters(), pb = b.parameters(), pd = d.parameters();
  EXPECT_EQ(pa[0].data, pb[0].data);
  EXPECT_NE(pa[0].data, pd[0].data);
  auto stddev = [](const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += double(x) * x;
    return std::sqrt(s / v.size());
  };
  for (const NamedTensor& t : pa) {
    if (t.name == "wte.weight" || t.name.find("c_fc.weight") != std::string::npos) {
      EXPECT_NEAR(stddev(t.data), 0.02, 0.002) << t.name;
    }
    if (t.name.find("c_proj.weight") != std::string::npos) {
      EXPECT_NEAR(stddev(t.data), 0.01, 0.001) << t.name;  // 0.02 / sqrt(2 * 2 layers)
    }
    if (t.name.find("ln_") != std::string::npos) {
      EXPECT_EQ(stddev(t.data), 1.0) << t.name;
    }
  }
}

TEST(GPT, RejectsBadInput) {
  LanguageModel m(hand_sized(false), 0);
  try {
    m.next_token_logprobs({1, 11});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("token id 11 is outside the model's vocabulary of 11"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(m.next_token_logprobs(std::vector<int>(9, 1)), UserError);  // context is 8
  GPTConfig bad = hand_sized(false);
  bad.n_head = 3;
  EXPECT_THROW(LanguageModel(bad, 0), UserError);
}

}  // namespace
}  // namespace tlm
