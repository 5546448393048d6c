// Checkpoints: a round trip keeps the logits and the info; each kind of bad file (missing,
// truncated at many offsets, garbage, damaged, another format version) is a UserError whose
// message names the file and the problem; check_compatible names what to rerun.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "model/lm.h"
#include "support/error.h"

namespace tlm {
namespace {

class CheckpointTest : public ::testing::Test {
 protected:
  std::string temp_path(const std::string& name) {
    std::string p = ::testing::TempDir() + "tlm_ckpt_" + std::to_string(getpid()) + "_" + name;
    paths_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (const std::string& p : paths_) std::remove(p.c_str());
  }
  static GPTConfig config() {
    GPTConfig c;
    c.vocab_size = 17, c.block_size = 10, c.n_layer = 2, c.n_head = 2, c.n_embd = 8;
    return c;
  }
  static CheckpointInfo info() {
    CheckpointInfo i;
    i.vocab_hash = "v-1234";
    i.language_version = 3;
    i.stage = "finetune";
    i.step = 1500, i.tokens_seen = 123456789012;
    i.val_loss = 0.25;
    i.extra = {{"data", "records.jsonl"}, {"lr", 3e-4}};
    return i;
  }
  // The message of the UserError that loading `path` throws ("" if none).
  static std::string load_error(const std::string& path) {
    try {
      LanguageModel::load(path, nullptr);
    } catch (const UserError& e) {
      return e.what();
    }
    return "";
  }

 private:
  std::vector<std::string> paths_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
void spit(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// Replaces the trailing checksum (FNV-1a 64 of everything before it) by the right one.
std::string with_checksum(std::string bytes) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i + 8 < bytes.size(); ++i)
    h = (h ^ (unsigned char)bytes[i]) * 1099511628211ull;
  bytes.replace(bytes.size() - 8, 8, reinterpret_cast<const char*>(&h), 8);
  return bytes;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

TEST_F(CheckpointTest, RoundTrip) {
  LanguageModel m(config(), 9);
  const std::string path = temp_path("a.ckpt");
  m.save(path, info());
  CheckpointInfo got;
  auto back = LanguageModel::load(path, &got);
  const std::vector<int> ids = {1, 16, 4, 4, 0, 7};
  EXPECT_EQ(m.next_token_logprobs(ids), back->next_token_logprobs(ids));  // bit-identical
  EXPECT_EQ(nlohmann::json(got.config), nlohmann::json(config()));
  EXPECT_EQ(got.vocab_hash, "v-1234");
  EXPECT_EQ(got.language_version, 3);
  EXPECT_EQ(got.stage, "finetune");
  EXPECT_EQ(got.step, 1500);
  EXPECT_EQ(got.tokens_seen, 123456789012);
  EXPECT_EQ(got.val_loss, 0.25);
  EXPECT_EQ(got.extra, info().extra);
  EXPECT_EQ(got.loaded_from, path);
  EXPECT_EQ(LanguageModel::load(path, nullptr)->parameter_count(), m.parameter_count());

  CheckpointInfo nan_loss = info();  // a model never validated
  nan_loss.val_loss = NAN;
  m.save(path, nan_loss);
  LanguageModel::load(path, &got);
  EXPECT_TRUE(std::isnan(got.val_loss));
}

TEST_F(CheckpointTest, SaveIsAtomic) {
  LanguageModel m(config(), 1);
  const std::string path = temp_path("atomic.ckpt");
  m.save(path, info());
  // Saving over an existing checkpoint leaves no temporary file behind.
  m.save(path, info());
  EXPECT_FALSE(std::ifstream(path + ".tmp" + std::to_string(getpid())).good());
  EXPECT_THROW(m.save("/nonexistent-dir/x.ckpt", info()), UserError);
}

TEST_F(CheckpointTest, MissingFile) {
  const std::string path = temp_path("missing.ckpt");
  const std::string msg = load_error(path);
  EXPECT_CONTAINS(msg, "cannot open checkpoint " + path);
  EXPECT_CONTAINS(msg, "No such file");
}

TEST_F(CheckpointTest, TruncatedAtManyOffsets) {
  LanguageModel m(config(), 2);
  const std::string good = temp_path("good.ckpt"), cut = temp_path("cut.ckpt");
  m.save(good, info());
  const std::string bytes = slurp(good);
  for (size_t n : {size_t(0), size_t(3), size_t(8), size_t(10), size_t(19), size_t(20), size_t(100),
                   bytes.size() / 2, bytes.size() - 9, bytes.size() - 1}) {
    spit(cut, bytes.substr(0, n));
    const std::string msg = load_error(cut);
    EXPECT_CONTAINS(msg, "checkpoint " + cut + " is truncated");
    EXPECT_CONTAINS(msg, "(" + std::to_string(n) + " bytes");
  }
}

TEST_F(CheckpointTest, GarbageDamagedAndTrailingBytes) {
  const std::string path = temp_path("bad.ckpt");
  spit(path, "step,loss\n1,2.5\n");
  EXPECT_CONTAINS(load_error(path), path + " is not a tlm checkpoint");

  LanguageModel m(config(), 3);
  m.save(path, info());
  std::string bytes = slurp(path);
  bytes[bytes.size() - 100] ^= 0x10;  // one flipped bit in the weights
  spit(path, bytes);
  EXPECT_CONTAINS(load_error(path), "checkpoint " + path + " is corrupt (checksum mismatch");

  m.save(path, info());
  spit(path, slurp(path) + "xx");
  EXPECT_CONTAINS(load_error(path), "checkpoint " + path + " is corrupt (2 unexpected trailing");

  m.save(path, info());
  bytes = slurp(path);
  const size_t at = bytes.find("\"vocab_hash\"");
  ASSERT_NE(at, std::string::npos);
  bytes.replace(at, 12, "\"vocab_hasx\"");
  spit(path, with_checksum(bytes));  // a well-formed file whose header has an unknown key
  EXPECT_CONTAINS(load_error(path), "checkpoint " + path + " has a malformed header");
  EXPECT_CONTAINS(load_error(path), "vocab_hasx");
}

TEST_F(CheckpointTest, OtherFormatVersion) {
  LanguageModel m(config(), 4);
  const std::string path = temp_path("v2.ckpt");
  m.save(path, info());
  std::string bytes = slurp(path);
  ASSERT_EQ(bytes.substr(0, 8), "tlm-ckpt");
  ASSERT_EQ(bytes[8], char(kCheckpointFormatVersion));
  bytes[8] = char(kCheckpointFormatVersion + 1);
  spit(path, bytes);
  const std::string msg = load_error(path);
  EXPECT_CONTAINS(msg, "checkpoint " + path + " has format version " +
                           std::to_string(kCheckpointFormatVersion + 1));
  EXPECT_CONTAINS(msg, "train it again");
}

TEST_F(CheckpointTest, CheckCompatible) {
  LanguageModel m(config(), 5);
  const std::string path = temp_path("c.ckpt");
  m.save(path, info());
  CheckpointInfo got;
  LanguageModel::load(path, &got);
  EXPECT_NO_THROW(check_compatible(got, "v-1234", 3, "tlm pretrain"));
  try {
    check_compatible(got, "v-9999", 3, "tlm pretrain");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "checkpoint " + path + " was trained with vocabulary v-1234");
    EXPECT_CONTAINS(e.what(), "v-9999: rerun tlm pretrain");
  }
  try {
    check_compatible(got, "v-1234", 4, "tlm pretrain");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "tensor language version 3, but this build speaks version 4");
  }
}

}  // namespace
}  // namespace tlm
