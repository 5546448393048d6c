// Training: a tiny model learns a synthetic language far below the uniform entropy; the loss is the
// mean of -log p over the counted tokens only (checked against next_token_logprobs) and padding
// does not change it; a run killed mid-way and resumed from <out>.last ends with the same weights
// as an uninterrupted one; bad data and a foreign .last file are UserErrors.
#include "model/train.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <random>

#include "support/error.h"

namespace tlm {
namespace {

constexpr int kVocab = 16;

// [BOS=1, a, b] (a prompt: not counted), then x[t] = (3 x[t-1] + 5 x[t-2]) % 7 + 3, 8-16 tokens
// in all. Every counted token is determined by the two before it, so the ideal loss is 0.
std::vector<TokenSeq> synthetic(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<TokenSeq> out;
  for (int i = 0; i < n; ++i) {
    TokenSeq s;
    const int len = 8 + rng() % 9;
    s.ids = {1, int(3 + rng() % 7), int(3 + rng() % 7)};
    while (int(s.ids.size()) < len) {
      const size_t t = s.ids.size();
      s.ids.push_back((3 * s.ids[t - 1] + 5 * s.ids[t - 2]) % 7 + 3);
    }
    s.loss.assign(len, 1);
    s.loss[0] = s.loss[1] = s.loss[2] = 0;
    out.push_back(s);
  }
  return out;
}

GPTConfig micro() {
  GPTConfig c;
  c.vocab_size = kVocab, c.block_size = 16, c.n_layer = 2, c.n_head = 2, c.n_embd = 32;
  return c;
}

// One intra-op thread: deterministic, and immune to the collapse of OpenMP's spinning barriers
// when other processes occupy the cores (lm.h).
class TrainTest : public ::testing::Test {
 protected:
  void SetUp() override { set_model_threads(1); }
  std::string temp_path(const std::string& name) {
    std::string p = ::testing::TempDir() + "tlm_train_" + std::to_string(getpid()) + "_" + name;
    for (const char* suffix : {"", ".last"}) std::remove((p + suffix).c_str());
    paths_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (const std::string& p : paths_)
      for (const char* suffix : {"", ".last", ".csv"}) std::remove((p + suffix).c_str());
  }
  static TrainOptions options(const std::string& out) {
    TrainOptions o;
    o.out_path = out;
    o.batch_size = 16, o.lr = 3e-3, o.min_lr = 3e-4, o.warmup_steps = 20;
    o.max_steps = 600, o.eval_every = 200, o.weight_decay = 0.01, o.seed = 1;
    return o;
  }

 private:
  std::vector<std::string> paths_;
};

TEST_F(TrainTest, LearnsASyntheticLanguage) {
  const auto train = synthetic(400, 1), val = synthetic(64, 2), heldout = synthetic(64, 3);
  LanguageModel m(micro(), 0);
  const double uniform = std::log(double(kVocab));
  EXPECT_NEAR(evaluate_loss(m, val, 32), uniform, 0.3);  // an untrained model is near uniform

  const std::string out = temp_path("learn.ckpt");
  TrainOptions o = options(out);
  o.log_csv = out + ".csv";
  int64_t calls = 0;
  o.on_progress = [&](const TrainProgress& p) {
    ++calls;
    EXPECT_EQ(p.step, calls);
    EXPECT_GT(p.tokens_per_s, 0);
  };
  CheckpointInfo info;
  info.vocab_hash = "synthetic";
  const TrainReport r = train_language_model(m, info, train, val, heldout, o);
  EXPECT_EQ(r.steps, 600);
  EXPECT_EQ(calls, 600);
  EXPECT_FALSE(r.resumed);
  EXPECT_LT(r.best_val_loss, 0.15 * uniform) << "uniform: " << uniform;
  EXPECT_LT(r.last_heldout_loss, 0.15 * uniform);
  EXPECT_NEAR(evaluate_loss(m, val, 32), r.last_val_loss, 1e-5);  // m keeps the last weights

  CheckpointInfo best;
  auto loaded = LanguageModel::load(out, &best);
  EXPECT_EQ(best.vocab_hash, "synthetic");
  EXPECT_EQ(best.val_loss, r.best_val_loss);
  EXPECT_EQ(best.step % 200, 0);
  EXPECT_NEAR(evaluate_loss(*loaded, val, 32), r.best_val_loss, 1e-5);

  std::ifstream csv(o.log_csv);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(csv, line)) lines.push_back(line);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "step,tokens,train_loss,val_loss,heldout_loss,lr,elapsed_s");
  EXPECT_EQ(lines[3].substr(0, 4), "600,");
}

// The loss is the mean of -log p(ids[t] | ids[0..t)) over the counted positions: recomputed here
// from next_token_logprobs, and the same whether a sequence is batched with longer ones (padded)
// or alone.
TEST_F(TrainTest, LossCountsFlaggedTokensAndIgnoresPadding) {
  LanguageModel m(micro(), 3);
  auto seqs = synthetic(7, 4);
  double want = 0;
  int counted = 0;
  for (const TokenSeq& s : seqs) {
    const std::vector<float> lp = m.next_token_logprobs(s.ids);
    for (size_t t = 1; t < s.ids.size(); ++t)
      if (s.loss[t]) want -= lp[(t - 1) * kVocab + s.ids[t]], ++counted;
  }
  want /= counted;
  EXPECT_NEAR(evaluate_loss(m, seqs, 1), want, 1e-5);  // no padding
  EXPECT_NEAR(evaluate_loss(m, seqs, 7), want, 1e-5);  // padded to the longest of all
  EXPECT_NEAR(evaluate_loss(m, seqs, 3), want, 1e-5);
  seqs[0].loss.assign(seqs[0].loss.size(), 0);
  EXPECT_TRUE(std::isnan(evaluate_loss(m, {seqs[0]}, 1)));
}

// Killed after the step-40 save (an exception stands in for kill -9 at step 50), then resumed:
// the same weights as a run that never stopped, so the optimizer state and the batch order came
// back exactly.
TEST_F(TrainTest, ResumeReproducesTheUninterruptedRun) {
  const auto train = synthetic(100, 5), val = synthetic(16, 6);
  auto run = [&](const std::string& out, int kill_at, TrainReport* report) {
    LanguageModel m(micro(), 7);
    TrainOptions o = options(out);
    o.max_steps = 60, o.eval_every = 20;
    if (kill_at)
      o.on_progress = [&](const TrainProgress& p) {
        if (p.step == kill_at) throw std::runtime_error("killed");
      };
    *report = train_language_model(m, CheckpointInfo(), train, val, {}, o);
    return m.parameters();
  };
  TrainReport straight, killed, resumed;
  const auto want = run(temp_path("straight.ckpt"), 0, &straight);
  const std::string out = temp_path("killed.ckpt");
  EXPECT_THROW(run(out, 50, &killed), std::runtime_error);
  CheckpointInfo last;
  LanguageModel::load(out + ".last", &last);  // a .last file is a loadable checkpoint too
  EXPECT_EQ(last.step, 40);
  const auto got = run(out, 0, &resumed);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(resumed.steps, 60);
  EXPECT_EQ(resumed.tokens, straight.tokens);
  EXPECT_EQ(resumed.last_val_loss, straight.last_val_loss);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].data, want[i].data) << got[i].name;

  // Another data set: the .last file is refused with a clear message...
  LanguageModel m(micro(), 7);
  TrainOptions o = options(out);
  o.max_steps = 61;
  try {
    train_language_model(m, CheckpointInfo(), synthetic(100, 99), val, {}, o);
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(out + ".last was written while training on other data"),
              std::string::npos)
        << e.what();
  }
  // ... unless resuming is off; a time budget stops early, still saving.
  o.resume = false;
  o.time_budget_s = 1e-9;
  const TrainReport fresh =
      train_language_model(m, CheckpointInfo(), synthetic(100, 99), val, {}, o);
  EXPECT_FALSE(fresh.resumed);
  EXPECT_EQ(fresh.steps, 1);
  CheckpointInfo saved;
  LanguageModel::load(out, &saved);
  EXPECT_EQ(saved.step, 1);
}

TEST_F(TrainTest, BadDataIsUserError) {
  LanguageModel m(micro(), 0);
  const auto val = synthetic(4, 1);
  TrainOptions o = options(temp_path("bad.ckpt"));
  auto error_of = [&](std::vector<TokenSeq> train) -> std::string {
    try {
      train_language_model(m, CheckpointInfo(), train, val, {}, o);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  };
  TokenSeq too_long{std::vector<int>(17, 3), std::vector<uint8_t>(17, 1)};
  EXPECT_EQ(error_of({too_long}),
            "training sequence 0 has 17 tokens; the model's context holds 1 to 16");
  TokenSeq mismatched{{1, 2, 3}, {0, 1}};
  EXPECT_EQ(error_of({mismatched}), "training sequence 0 has 3 tokens but 2 loss flags");
  TokenSeq nothing{{1, 2, 3}, {1, 0, 0}};
  EXPECT_EQ(error_of({nothing}), "training: no token of the training data counts in the loss");
  TokenSeq foreign{{1, 16}, {0, 1}};
  EXPECT_EQ(error_of({foreign}),
            "training sequence 0 has token id 16, outside the vocabulary of 16");
}

}  // namespace
}  // namespace tlm
