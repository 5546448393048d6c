// The language-model commands through the built binary: sample -> train -> generate -> tune with
// the `tlm` strategy and no measurement, on a tiny workload; and every bad checkpoint (missing,
// garbage, truncated) is one message and exit code 1.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "testing/run_tlm.h"
#include "language/sentence.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;

using testing::Result;
using testing::run_tlm;

// Per process (ctest runs each test in its own process, two at a time), removed at exit.
struct TempDir {
  std::string path;
  TempDir() : path(std::string(TLM_BINARY_DIR) + "/lm_cli_test_" + std::to_string(getpid())) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

std::string dir() {
  static TempDir d;
  return d.path;
}

// A small trained checkpoint, made once per test binary run.
const std::string& checkpoint() {
  static const std::string ckpt = [] {
    const std::string data = dir() + "/data", out = dir() + "/m.ckpt";
    Result s = run_tlm("sample --out " + data +
                       " --sentences 600 --seed 1 --workloads bert-tiny:seq=16 --keep-heldout");
    EXPECT_EQ(s.code, 0) << s.output;
    Result t = run_tlm("train --data " + data + " -o " + out +
                       " --steps 40 --eval-every 20 --batch 8 --layers 1 --embd 32 --heads 2 "
                       "--heldout-per-task 0 --quiet");
    EXPECT_EQ(t.code, 0) << t.output;
    EXPECT_NE(t.output.find("best validation loss"), std::string::npos) << t.output;
    return out;
  }();
  return ckpt;
}

TEST(LmCli, TrainGenerateAndTuneWithoutMeasurement) {
  const std::string& ckpt = checkpoint();
  ASSERT_TRUE(fs::exists(ckpt));
  EXPECT_TRUE(fs::exists(ckpt + ".csv"));
  Result g = run_tlm("generate bert-tiny:seq=16 --task 1 -n 5 --model " + ckpt + " --seed 2");
  ASSERT_EQ(g.code, 0) << g.output;
  std::istringstream lines(g.output);
  int sentences = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("generate:", 0) == 0) {
      EXPECT_NE(line.find("5 programs (5 valid)"), std::string::npos) << line;
      continue;
    }
    ParsedSentence ps = parse_sentence(line);  // throws on an invalid sentence
    EXPECT_EQ(ps.sentence.to_text(), line);
    sentences++;
  }
  EXPECT_EQ(sentences, 5);
  // Beam 1: the most likely program, the same twice.
  const std::string beam = dir() + "/beam";
  Result b1 = run_tlm("generate bert-tiny:seq=16 --task 1 -n 1 --beam 1 --model " + ckpt + " -o " +
                      beam + "1.txt");
  Result b2 = run_tlm("generate bert-tiny:seq=16 --task 1 -n 1 --beam 1 --model " + ckpt + " -o " +
                      beam + "2.txt --seed 9");
  ASSERT_EQ(b1.code, 0) << b1.output;
  std::ifstream f1(beam + "1.txt"), f2(beam + "2.txt");
  std::string s1, s2;
  std::getline(f1, s1);
  std::getline(f2, s2);
  EXPECT_FALSE(s1.empty());
  EXPECT_EQ(s1, s2) << "greedy decoding does not depend on the seed";

  Result t = run_tlm("tune bert-tiny:seq=16 --strategy tlm --trials-per-task 0 --model " + ckpt +
                     " --records " + dir() + "/zero.jsonl --quiet");
  ASSERT_EQ(t.code, 0) << t.output;
  EXPECT_NE(t.output.find("verify PASS"), std::string::npos) << t.output;
  EXPECT_NE(t.output.find("no measurement"), std::string::npos) << t.output;
}

TEST(LmCli, BadCheckpointsAreOneMessage) {
  Result missing = run_tlm("generate bert-tiny:seq=16 --task 1 --model " + dir() + "/none.ckpt");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.output.find("none.ckpt"), std::string::npos) << missing.output;

  const std::string garbage = dir() + "/garbage.ckpt";
  std::ofstream(garbage) << "this is not a checkpoint\n";
  Result g = run_tlm("generate bert-tiny:seq=16 --task 1 --model " + garbage);
  EXPECT_EQ(g.code, 1);
  EXPECT_NE(g.output.find("garbage.ckpt"), std::string::npos) << g.output;

  const std::string ckpt = std::string(TLM_SOURCE_DIR) + "/models/tlm.ckpt";  // the shipped one
  const std::string cut = dir() + "/cut.ckpt";
  std::ifstream in(ckpt, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  Result t = run_tlm("tune bert-tiny:seq=16 --strategy tlm --trials-per-task 0 --model " + cut +
                     " --records " + dir() + "/cut.jsonl");
  EXPECT_EQ(t.code, 1);
  EXPECT_NE(t.output.find("cut.ckpt"), std::string::npos) << t.output;
  for (const Result* r : {&missing, &g, &t}) {
    EXPECT_EQ(r->output.find("internal error"), std::string::npos) << r->output;
    EXPECT_EQ(r->output.find("Aborted"), std::string::npos) << r->output;
  }
}

}  // namespace
}  // namespace tlm
