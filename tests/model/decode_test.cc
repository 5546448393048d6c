// Incremental decoding with the KV cache equals full recomputation at every step (shared feeds,
// per-row steps, beam-search reorders); the context limit is a UserError; generate() is the
// argmax chain at temperature 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "model/lm.h"
#include "support/error.h"

namespace tlm {
namespace {

GPTConfig small_config() {
  GPTConfig c;
  c.vocab_size = 13;
  c.block_size = 12;
  c.n_layer = 2;
  c.n_head = 2;
  c.n_embd = 16;
  return c;
}

// Row `row` of a [batch x V] decoding result against the last position of full recomputation.
void expect_same_as_full(const LanguageModel& m, const std::vector<float>& got, int row,
                         const std::vector<int>& seq) {
  const int V = m.config().vocab_size;
  const std::vector<float> full = m.next_token_logprobs(seq);
  for (int v = 0; v < V; ++v)
    ASSERT_NEAR(got[row * V + v], full[(seq.size() - 1) * V + v], 1e-5)
        << "row " << row << " after " << seq.size() << " tokens, token " << v;
}

TEST(Decode, KVCacheMatchesFullRecomputation) {
  LanguageModel m(small_config(), 11);
  auto s = m.start_decoding(3);
  std::vector<std::vector<int>> seqs(3, std::vector<int>{1, 5, 7});
  const std::vector<float>* out = &s->feed_shared({1, 5, 7});
  EXPECT_EQ(s->length(), 3);
  ASSERT_EQ(out->size(), 3u * 13);
  auto check_all = [&] {
    for (int r = 0; r < s->batch(); ++r) expect_same_as_full(m, *out, r, seqs[r]);
  };
  check_all();
  for (int i = 0; i < 3; ++i) {  // the rows diverge
    std::vector<int> ids = {(2 + i) % 13, (5 + 3 * i) % 13, (11 + 2 * i) % 13};
    for (int r = 0; r < 3; ++r) seqs[r].push_back(ids[r]);
    out = &s->step(ids);
    check_all();
  }
  s->reorder({2, 0, 0, 1});  // beam search: keep row 2, duplicate row 0, keep row 1
  seqs = {seqs[2], seqs[0], seqs[0], seqs[1]};
  EXPECT_EQ(s->batch(), 4);
  check_all();  // the last result is reordered too
  out = &s->step({3, 4, 9, 12});
  for (int r = 0; r < 4; ++r) seqs[r].push_back(std::vector<int>{3, 4, 9, 12}[r]);
  check_all();
  out = &s->feed_shared({6, 8});  // forced tokens after divergence
  for (auto& q : seqs) q.insert(q.end(), {6, 8});
  check_all();
  s->reorder({3});
  seqs = {seqs[3]};
  out = &s->step({0});
  seqs[0].push_back(0);
  check_all();
  EXPECT_EQ(s->length(), 10);
}

TEST(Decode, StepsWithoutSharedPrefix) {
  LanguageModel m(small_config(), 2);
  auto s = m.start_decoding(2);
  std::vector<std::vector<int>> seqs = {{4}, {9}};
  const std::vector<float>* out = &s->step({4, 9});
  for (int r = 0; r < 2; ++r) expect_same_as_full(m, *out, r, seqs[r]);
  out = &s->step({1, 2});
  seqs[0].push_back(1), seqs[1].push_back(2);
  for (int r = 0; r < 2; ++r) expect_same_as_full(m, *out, r, seqs[r]);
}

TEST(Decode, ContextOverflowIsUserError) {
  LanguageModel m(small_config(), 0);
  auto s = m.start_decoding(2);
  s->feed_shared(std::vector<int>(10, 3));
  s->step({1, 2});
  s->step({1, 2});
  ASSERT_EQ(s->length(), 12);
  try {
    s->step({1, 2});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("12 + 1 tokens exceed the model's context of 12"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(s->length(), 12);  // nothing was appended
  EXPECT_THROW(m.start_decoding(1)->feed_shared(std::vector<int>(13, 3)), UserError);
  EXPECT_THROW(m.start_decoding(1)->feed_shared({13}), UserError);  // outside the vocabulary
}

TEST(Decode, GreedyGenerateIsTheArgmaxChain) {
  LanguageModel m(small_config(), 4);
  std::vector<int> seq = {1, 2};
  std::vector<int> want;
  for (;;) {
    const std::vector<float> lp = m.next_token_logprobs(seq);
    want.push_back(std::max_element(lp.end() - 13, lp.end()) - (lp.end() - 13));
    if (seq.size() == 12) break;  // the context is full: the last token is emitted, not fed
    seq.push_back(want.back());
  }
  ASSERT_EQ(want.size(), 11u);
  EXPECT_EQ(generate(m, {1, 2}, 100, 0.0, 0), want);
  EXPECT_EQ(generate(m, {1, 2}, 3, 0.0, 0), std::vector<int>(want.begin(), want.begin() + 3));
  // Sampling is deterministic given the seed.
  EXPECT_EQ(generate(m, {1, 2}, 8, 1.0, 42), generate(m, {1, 2}, 8, 1.0, 42));
}

}  // namespace
}  // namespace tlm
