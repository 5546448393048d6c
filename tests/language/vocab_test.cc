// The vocabulary: built from a corpus, saved, loaded; encode/decode; version errors say what to
// run.
#include "language/vocab.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "language/sentence.h"

namespace tlm {
namespace {

std::string temp_path(const std::string& name) {
  return std::string(TLM_BINARY_DIR) + "/language_test_" + name;
}

Vocab corpus_vocab() {
  VocabBuilder b;
  b.add_sentence("in0 1 64 Relu in0 isa=avx2 tile f0.d0 64 -> 8 2 4");
  b.add_sentence("in0 1 32 Relu in0 isa=avx2 tile f0.d0 32 -> 4 2 4");
  b.add_tokens({"16", "16"}, 3);
  return b.build();
}

TEST(Vocab, SpecialsFirstThenCorpusTokensInByteOrder) {
  Vocab v = corpus_vocab();
  ASSERT_GE(v.size(), kSpecialCount);
  EXPECT_EQ(v.token(kPadId), "<pad>");
  EXPECT_EQ(v.token(kBosId), "<bos>");
  EXPECT_EQ(v.token(kEosId), "<eos>");
  EXPECT_EQ(v.token(kUnkId), "<unk>");
  for (int i = kSpecialCount + 1; i < v.size(); i++) EXPECT_LT(v.token(i - 1), v.token(i));
  EXPECT_EQ(v.count(v.id("16")), 6);
  EXPECT_EQ(v.count(v.id("Relu")), 2);
  EXPECT_EQ(v.count(v.id("64")), 2);
  EXPECT_EQ(v.id("never-seen"), kUnkId);
}

TEST(Vocab, EncodeDecode) {
  Vocab v = corpus_vocab();
  std::vector<std::string> t = split_tokens("tile f0.d0 64 -> 8 2 4");
  std::vector<int> ids = v.encode(t, true);
  ASSERT_EQ(ids.size(), t.size() + 2);
  EXPECT_EQ(ids.front(), kBosId);
  EXPECT_EQ(ids.back(), kEosId);
  EXPECT_EQ(v.decode(ids), t);
  EXPECT_EQ(v.encode({"zzz"})[0], kUnkId);
  EXPECT_THROW(v.token(v.size()), UserError);
  EXPECT_THROW(v.decode({-1}), UserError);
}

TEST(Vocab, SaveLoadRoundTrip) {
  Vocab v = corpus_vocab();
  std::string path = temp_path("vocab.json");
  save_vocab(v, path);
  Vocab w = load_vocab(path);
  EXPECT_EQ(w.tokens(), v.tokens());
  for (int i = 0; i < v.size(); i++) EXPECT_EQ(w.count(i), v.count(i));
  std::remove(path.c_str());
}

void rewrite(const std::string& path, const std::string& key, const nlohmann::json& value) {
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  j[key] = value;
  std::ofstream(path) << j.dump();
}

std::string load_error(const std::string& path) {
  try {
    load_vocab(path);
  } catch (const UserError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(Vocab, OtherVersionsAreRejectedWithWhatToRun) {
  std::string path = temp_path("vocab_v.json");
  save_vocab(corpus_vocab(), path);
  rewrite(path, "version", kVocabVersion + 1);
  std::string e = load_error(path);
  EXPECT_NE(e.find("vocabulary format version " + std::to_string(kVocabVersion + 1)),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("tlm sample --out"), std::string::npos) << e;

  save_vocab(corpus_vocab(), path);
  rewrite(path, "language_version", kLanguageVersion + 1);
  e = load_error(path);
  EXPECT_NE(e.find("tensor-language version " + std::to_string(kLanguageVersion + 1)),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("tlm sample --out"), std::string::npos) << e;

  save_vocab(corpus_vocab(), path);
  rewrite(path, "tokens", nlohmann::json::array({"<pad>", "<bos>", "<eos>", "<unk>", "a", "a"}));
  rewrite(path, "counts", nlohmann::json::array({0, 0, 0, 0, 1, 1}));
  EXPECT_NE(load_error(path).find("appears twice"), std::string::npos);

  std::ofstream(path) << "not json";
  EXPECT_NE(load_error(path).find("not JSON"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_NE(load_error(path).find("cannot read"), std::string::npos);
}

}  // namespace
}  // namespace tlm
