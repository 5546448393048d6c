// The iterative loop on three tiny tasks with a tiny untrained base: two rounds measure every
// written program once and end with a fine-tuned model; a second run with the same rounds does
// nothing; more rounds continue where it stopped; a round cut short (state not yet advanced)
// measures nothing twice; a directory of another configuration is refused naming the field.
#include "loop/loop.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "fixtures/tiny_base.h"
#include "language/sentence.h"
#include "model/tlm_model.h"
#include "support/error.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;

struct Dir {
  std::string path = std::string(TLM_BINARY_DIR) + "/loop_test_" + std::to_string(getpid());
  Dir() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
};

int64_t lines_of(const std::string& p) {
  std::ifstream in(p);
  int64_t n = 0;
  for (std::string l; std::getline(in, l);) n += !l.empty();
  return n;
}

// A loop of bert-tiny's first 3 tasks in 2 batches, with a tiny base, quick to run.
LoopOptions tiny_loop(const std::string& root) {
  LoopOptions o;
  o.dir = root + "/loop";
  o.base = write_tiny_base(root + "/base.ckpt");
  o.tasks.workloads = {"bert-tiny:seq=16"};
  o.tasks.max_tasks = 3;
  o.k_b = 2;
  o.finetune.train.batch_size = 4;
  o.measure.timing.repeats = 2;
  o.measure.timing.min_repeat_ms = 1;
  o.progress = false;
  return o;
}

TEST(Loop, RunsResumesAndRefusesAnotherConfiguration) {
  Dir d;
  LoopOptions o = tiny_loop(d.path);
  o.out = d.path + "/out.ckpt";
  o.k_p = 2;
  o.rounds = 2;
  o.finetune.epochs = 2;
  o.expert = false;  // the expert pass has its own test

  std::vector<RoundReport> seen;
  LoopReport r = run_loop(o, [&](const RoundReport& x) { seen.push_back(x); });
  EXPECT_EQ(r.rounds_done, 2);
  EXPECT_EQ(r.rounds_run, 2);
  EXPECT_TRUE(r.finished);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].batch, 0);
  EXPECT_EQ(seen[1].batch, 1);
  EXPECT_EQ(seen[0].measured, lines_of(o.dir + "/round-0000.txt"));
  EXPECT_GT(seen[0].measured, 0);
  EXPECT_EQ(seen[0].generated, lines_of(o.dir + "/round-0001.txt"));  // written during round 0
  for (const char* f : {"/loop.json", "/state.json", "/records.jsonl", "/convergence.csv",
                        "/rounds.csv", "/model-0003.ckpt"})
    EXPECT_TRUE(fs::exists(o.dir + f)) << f;
  EXPECT_EQ(r.model, o.dir + "/model-0003.ckpt");
  TlmModel out = load_tlm_model(o.out);  // the final model, fine-tuned from the base
  EXPECT_EQ(out.info.stage, "finetune");

  std::vector<MeasureRecord> rs = load_records(o.dir + "/records.jsonl");
  EXPECT_EQ((int64_t)rs.size(), seen[0].measured + seen[1].measured);
  std::set<std::string> sentences;
  for (const MeasureRecord& x : rs) {
    EXPECT_TRUE(sentences.insert(x.sentence).second) << "measured twice: " << x.sentence;
    EXPECT_TRUE(loop_round_of(x) == 0 || loop_round_of(x) == 1) << x.strategy;
  }

  // The same command again: nothing to do.
  r = run_loop(o);
  EXPECT_EQ(r.rounds_run, 0);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ((int64_t)load_records(o.dir + "/records.jsonl").size(), (int64_t)rs.size());

  // More rounds continue at round 2 (batch 0 again, programs not measured before).
  o.rounds = 3;
  r = run_loop(o);
  EXPECT_EQ(r.rounds_run, 1);
  EXPECT_EQ(r.rounds_done, 3);
  rs = load_records(o.dir + "/records.jsonl");
  sentences.clear();
  int64_t round2 = 0;
  for (const MeasureRecord& x : rs) {
    EXPECT_TRUE(sentences.insert(x.sentence).second) << "measured twice: " << x.sentence;
    round2 += loop_round_of(x) == 2;
  }
  EXPECT_GT(round2, 0);

  // Cut short after measuring round 2, before the state said so: nothing is measured again.
  std::ofstream(o.dir + "/state.json") << "{\"rounds_done\": 2}\n";
  seen.clear();
  r = run_loop(o, [&](const RoundReport& x) { seen.push_back(x); });
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].measured, 0);
  EXPECT_EQ(seen[0].already, round2);
  EXPECT_EQ(load_records(o.dir + "/records.jsonl").size(), rs.size());

  // Another configuration: one message naming the field.
  o.k_p = 3;
  try {
    run_loop(o);
    ADD_FAILURE() << "no UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("its k_p is 2, this run's is 3"), std::string::npos)
        << e.what();
  }
}

// The expert pass: turned on when a loop resumes (an option that may change), every task's
// expert programs are measured once, before the next round, and never again.
TEST(Loop, ExpertProgramsAreMeasuredOnceWhenTurnedOn) {
  Dir d;
  LoopOptions o = tiny_loop(d.path);
  o.k_p = 1;
  o.rounds = 1;
  o.finetune.epochs = 1;
  o.expert = false;
  run_loop(o);
  auto experts = [&] {
    int64_t n = 0;
    std::set<std::string> distinct;
    for (const MeasureRecord& x : load_records(o.dir + "/records.jsonl"))
      if (x.strategy == "expert") {
        n++;
        distinct.insert(x.sentence);
        EXPECT_TRUE(x.ok()) << x.error_msg;
      }
    EXPECT_EQ((int64_t)distinct.size(), n) << "an expert program measured twice";
    return n;
  };
  EXPECT_EQ(experts(), 0);

  o.expert = true;
  o.rounds = 2;
  LoopReport r = run_loop(o);
  EXPECT_EQ(r.rounds_run, 1);
  const int64_t n = experts();
  EXPECT_GT(n, 0);  // bert-tiny's dense tasks are tiled anchors
  std::ifstream config(o.dir + "/loop.json");
  EXPECT_EQ(nlohmann::json::parse(config).at("expert"), true);  // the change is kept

  o.rounds = 3;
  run_loop(o);
  EXPECT_EQ(experts(), n);
}

}  // namespace
}  // namespace tlm
