// The tokenizer is total and lossless: every sentence of every zoo task and held-out workload,
// and text no training corpus had, encodes without <unk> and decodes back; every decision value
// is one token; values above 999 spell as "/k" or "#i" and parse back; tokenizer files are
// versioned and checked.
#include "language/tokenizer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>

#include "language/sentence.h"
#include "language/workloads.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

HardwareInfo avx2() { return parse_hardware_key("isa=avx2,cores=2,vec=8,l1=32k,l2=512k,l3=8m"); }
HardwareInfo avx512() {
  return parse_hardware_key("isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m");
}

// A tokenizer from the prompts and headers of a few training workloads only.
const Tokenizer& small_tokenizer() {
  static const Tokenizer t = [] {
    TokenizerBuilder b;
    for (const char* spec : {"resnet18:image=64", "bert-tiny:seq=32"})
      for (const Subgraph& s : workload_tasks(spec)) {
        LoweredTask lt = lower_subgraph(s);
        TaskSpace space = build_space(lt, avx2());
        TaskPrinter p(s, avx2(), space);
        b.add_tokens(p.prompt());
        for (size_t k = 0; k < space.slots.size(); k++) b.add_tokens(p.header(k));
      }
    return b.build();
  }();
  return t;
}

void expect_round_trip(const Tokenizer& t, const std::vector<std::string>& text) {
  std::vector<int> ids = t.encode(text, true);
  for (int id : ids) ASSERT_NE(id, kUnkId) << join_tokens(text);
  ASSERT_EQ(t.decode(ids), text);
}

TEST(Tokenizer, NumbersWordsAndBytesRoundTrip) {
  const Tokenizer& t = small_tokenizer();
  expect_round_trip(t, {"0", "7", "999", "1000", "1024", "50257", "9223372036854775807"});
  expect_round_trip(t, {"007", "0.044715", "1e-05", "-1", "-42", "in12", "n3", "w0", "c1"});
  expect_round_trip(t, {"Conv", "ZzNeverSeen", "f1_conv.d0", "isa=avx512", "l2=2m", "/29", "#3"});
  expect_round_trip(t, {"caf\xc3\xa9", std::string("tab\x01", 4), "x"});
  // Numbers below 1000 are one piece; larger ones compose from groups.
  EXPECT_EQ(t.encode({"56"}).size(), 1u);
  EXPECT_EQ(t.encode({"50257"}).size(), 2u);
  EXPECT_EQ(t.encode({"1000000"}).size(), 3u);
}

TEST(Tokenizer, EveryValueTokenIsOnePiece) {
  const Tokenizer& t = small_tokenizer();
  std::set<int> ids;
  for (int v = -1; v <= kMaxPlainValue; v++) ids.insert(t.value_id(std::to_string(v)));
  for (int k = 1; k <= kMaxPlainValue; k++) ids.insert(t.value_id("/" + std::to_string(k)));
  for (int i = 0; i < kMaxRankValues; i++) ids.insert(t.value_id("#" + std::to_string(i)));
  EXPECT_EQ(ids.size(), (size_t)(1 + 1000 + kMaxPlainValue + kMaxRankValues));
  EXPECT_THROW(t.value_id("1000"), InternalError);
}

// Every task of every zoo model (training and held-out alike) on both machine kinds: the
// sentences of a random program encode without <unk> through a tokenizer that never saw them,
// decode back, and each value is one id.
TEST(Tokenizer, TotalOnEveryZooAndHeldOutTask) {
  const Tokenizer& t = small_tokenizer();
  std::vector<std::string> specs;
  for (const ZooInfo& m : zoo_models()) specs.push_back(m.name);
  for (const std::string& h : heldout_workloads()) specs.push_back(h);
  std::set<std::string> keys;
  std::mt19937_64 rng(5);
  size_t tasks = 0;
  for (const std::string& spec : specs)
    for (const Subgraph& s : workload_tasks(spec)) {
      if (!keys.insert(s.key).second) continue;
      LoweredTask lt = lower_subgraph(s);
      for (const HardwareInfo& hw : {avx2(), avx512()}) {
        TaskSpace space = build_space(lt, hw);
        TaskPrinter p(s, hw, space);
        Sentence sent = p.sentence(sample_program(space, rng));
        expect_round_trip(t, sent.to_tokens());
        // Values: the tokens after "->" (and after other values) are single ids.
        bool in_values = false;
        for (const std::string& tok : sent.decisions) {
          if (tok == kArrow) {
            in_values = true;
            continue;
          }
          bool header = false;
          for (int k = 0; k < kStepKindCount; k++) header |= tok == step_kind_name((StepKind)k);
          if (header) in_values = false;
          if (in_values) {
            std::vector<int> ids;
            t.encode_token(tok, &ids);
            ASSERT_EQ(ids.size(), 1u) << tok;
          }
        }
      }
      tasks++;
    }
  EXPECT_GT(tasks, 300u);
}

TEST(Tokenizer, BigValuesSpellRelativeToTheRest) {
  Slot s;
  s.kind = StepKind::Tile;
  s.extent = 50257;  // 29 x 1733
  s.arity = 3;
  EXPECT_EQ(value_token(s, nullptr, 0, 50257), "/1");
  EXPECT_EQ(value_token(s, nullptr, 0, 1733), "/29");
  EXPECT_EQ(value_token(s, nullptr, 0, 29), "29");
  int64_t v = 0;
  EXPECT_TRUE(value_from_token(s, nullptr, 0, "/29", &v));
  EXPECT_EQ(v, 1733);
  EXPECT_FALSE(value_from_token(s, nullptr, 0, "1733", &v));   // not the canonical spelling
  EXPECT_FALSE(value_from_token(s, nullptr, 0, "/2", &v));     // 2 does not divide 50257
  EXPECT_FALSE(value_from_token(s, nullptr, 0, "/1733", &v));  // 29 is spelled "29"
  // After a first factor of 29, the rest is 1733: "/1" is all of it.
  int64_t first = 29;
  EXPECT_EQ(value_token(s, &first, 1, 1733), "/1");
  // Both the factor and the quotient above 999: the rank among the divisors.
  Slot big;
  big.kind = StepKind::Tile;
  big.extent = 1024 * 2048;
  big.arity = 1;
  std::string tok = value_token(big, nullptr, 0, 2048);
  EXPECT_EQ(tok[0], '#');
  EXPECT_TRUE(value_from_token(big, nullptr, 0, tok, &v));
  EXPECT_EQ(v, 2048);
}

// A sentence with a factor above 999 (GPT-2's 50257-wide logits) parses back to its program.
TEST(Tokenizer, SentencesWithBigValuesParseBack) {
  std::mt19937_64 rng(3);
  int big = 0;
  for (const Subgraph& s : workload_tasks("gpt2:layers=1")) {
    LoweredTask lt = lower_subgraph(s);
    TaskSpace space = build_space(lt, avx2());
    TaskPrinter p(s, avx2(), space);
    for (int i = 0; i < 40; i++) {
      Program prog = sample_program(space, rng);
      std::string text = p.text(prog);
      big += text.find(" /") != std::string::npos || text.find(" #") != std::string::npos;
      ParsedSentence ps = parse_sentence(text);
      ASSERT_EQ(ps.program, prog) << text;
      ASSERT_EQ(ps.sentence.to_text(), text);
    }
  }
  EXPECT_GT(big, 0) << "no sentence had a value above 999";
}

TEST(Tokenizer, FileRoundTripAndErrors) {
  const Tokenizer& t = small_tokenizer();
  std::string path = std::string(TLM_BINARY_DIR) + "/language_test_tokenizer.json";
  save_tokenizer(t, path);
  Tokenizer u = load_tokenizer(path);
  EXPECT_EQ(u.hash(), t.hash());
  EXPECT_EQ(u.size(), t.size());
  nlohmann::json j = t.to_json();
  j["version"] = 99;
  std::ofstream(path) << j.dump();
  try {
    load_tokenizer(path);
    ADD_FAILURE() << "version 99 accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("tlm sample"), std::string::npos) << e.what();
  }
  j = t.to_json();
  j["words"].push_back("zz_extra");  // the hash no longer matches
  std::ofstream(path) << j.dump();
  EXPECT_THROW(load_tokenizer(path), UserError);
  std::ofstream(path) << "{not json";
  EXPECT_THROW(load_tokenizer(path), UserError);
  EXPECT_THROW(load_tokenizer(path + ".missing"), UserError);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tlm
