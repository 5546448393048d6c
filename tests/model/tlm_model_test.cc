// Loading a checkpoint for use: it must carry its tokenizer and speak this language version;
// anything else is one UserError that says what to re-run.
#include "model/tlm_model.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "language/sentence.h"

namespace tlm {
namespace {

std::string path(const std::string& name) {
  return std::string(TLM_BINARY_DIR) + "/tlm_model_test_" + name;
}

CheckpointInfo info_for(const Tokenizer& tok) {
  CheckpointInfo i;
  i.vocab_hash = tok.hash();
  i.language_version = kLanguageVersion;
  i.extra = {{"tokenizer", tok.to_json()}};
  return i;
}

LanguageModel tiny_model(const Tokenizer& tok) {
  GPTConfig c;
  c.vocab_size = tok.size();
  c.block_size = 32;
  c.n_layer = 1;
  c.n_head = 2;
  c.n_embd = 16;
  return LanguageModel(c, 1);
}

std::string load_error(const std::string& p) {
  try {
    load_tlm_model(p);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<loaded>";
}

TEST(TlmModel, LoadsWhatTrainWrites) {
  Tokenizer tok = TokenizerBuilder().build();
  LanguageModel m = tiny_model(tok);
  m.save(path("ok.ckpt"), info_for(tok));
  TlmModel t = load_tlm_model(path("ok.ckpt"));
  EXPECT_EQ(t.tok.hash(), tok.hash());
  EXPECT_EQ(t.lm->config().vocab_size, tok.size());
  std::remove(path("ok.ckpt").c_str());
}

TEST(TlmModel, OtherLanguageVersionOrTokenizerSaysWhatToRerun) {
  Tokenizer tok = TokenizerBuilder().build();
  LanguageModel m = tiny_model(tok);
  CheckpointInfo old = info_for(tok);
  old.language_version = kLanguageVersion - 1;
  m.save(path("old.ckpt"), old);
  std::string e = load_error(path("old.ckpt"));
  EXPECT_NE(e.find("version"), std::string::npos) << e;
  EXPECT_NE(e.find("tlm sample"), std::string::npos) << e;

  CheckpointInfo bare = info_for(tok);
  bare.extra = nlohmann::json::object();
  m.save(path("bare.ckpt"), bare);
  e = load_error(path("bare.ckpt"));
  EXPECT_NE(e.find("no tokenizer"), std::string::npos) << e;

  CheckpointInfo other = info_for(tok);
  other.vocab_hash = "0123456789abcdef";
  m.save(path("other.ckpt"), other);
  e = load_error(path("other.ckpt"));
  EXPECT_NE(e.find("tlm train"), std::string::npos) << e;
  for (const char* n : {"old.ckpt", "bare.ckpt", "other.ckpt"}) std::remove(path(n).c_str());
}

// The checkpoint shipped in models/ must load with this build: same language version, its own
// tokenizer consistent with the network. A change to the space or the language fails here until
// the model is retrained. Without a shipped checkpoint, asking for the default is a UserError.
TEST(TlmModel, ShippedCheckpointMatchesThisBuild) {
  const std::string shipped = default_model_path();
  if (shipped.empty()) {
    EXPECT_THROW(load_model_or_default(""), UserError);
    return;
  }
  TlmModel t = load_model_or_default("");
  EXPECT_EQ(t.info.language_version, kLanguageVersion);
  EXPECT_EQ(t.info.vocab_hash, t.tok.hash());
  EXPECT_EQ(t.lm->config().vocab_size, t.tok.size());
  // The pre-trained base that fine-tuning starts from ships beside it, on the same language.
  const std::string base = default_base_path();
  ASSERT_FALSE(base.empty()) << "models/tlm-base.ckpt is missing beside " << shipped;
  TlmModel b = load_tlm_model(base);
  EXPECT_EQ(b.info.language_version, kLanguageVersion);
  EXPECT_EQ(b.tok.hash(), t.tok.hash());
  // The model that writes schedules is the base fine-tuned on measured programs (tlm finetune
  // records its base and demonstrations in the checkpoint).
  ASSERT_TRUE(t.info.extra.contains("finetune")) << shipped << " is not a fine-tuned checkpoint";
  EXPECT_FALSE(b.info.extra.contains("finetune")) << base << " should be the pre-trained base";
}

}  // namespace
}  // namespace tlm
