// Demonstration data from records: the best error-free program per task and machine (errors,
// autoscheduler markers and held-out tasks skipped, machines never compared), the top k distinct
// sentences, speed weighting; nothing to learn from is one UserError with the counts; a records
// file of another tensor-language version is refused. Also the convergence rows and the round of
// a loop record.
#include "loop/demonstrations.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "language/sentence.h"
#include "loop/loop.h"
#include "model/tlm_model.h"
#include "support/hash.h"
#include "lower/autoschedule.h"
#include "support/error.h"

namespace tlm {
namespace {

const std::string kAvx2 = "isa=avx2,cores=1,vec=8,l1=32k,l2=512k,l3=8m";
const std::string kAvx512 = "isa=avx512,cores=1,vec=16,l1=32k,l2=2m,l3=64m";

MeasureRecord rec(const std::string& task, const std::string& sentence, double median,
                  const std::string& hw = kAvx2, ErrorKind err = ErrorKind::None, int64_t t = 0) {
  MeasureRecord r;
  r.task_key = task;
  r.task_kind = "kind_" + task;
  r.workload = "w";
  r.sentence = sentence;
  r.hardware = hw;
  r.error = error_field(err);
  if (err == ErrorKind::None) r.latencies_s = {median}, r.median_s = median;
  r.strategy = "test";
  r.timestamp_ms = t;
  return r;
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no UserError";
}

std::vector<MeasureRecord> records() {
  return {
      rec("a", "a1", 3e-3),
      rec("a", "a2", 1e-3),
      rec("a", "a3", 1e-4, kAvx2, ErrorKind::WrongResult),  // fast but wrong: never
      rec("a", autoscheduler_marker(HalideAutoscheduler::Adams2019), 1e-5),  // not a sentence
      rec("a", "a2", 0.9e-3),                                                // re-measured
      rec("a", "a4", 2e-3),
      rec("a", "a5", 5e-4, kAvx512),  // another machine: its own best, never compared
      rec("a", "a6", 1e-3, kAvx512),
      rec("b", "b1", 0, kAvx2, ErrorKind::Crash),
      rec("b", "b2", 0, kAvx2, ErrorKind::CompileTimeout),
      rec("held", "h1", 1e-3),
  };
}

TEST(Demonstrations, BestPerTaskAndMachine) {
  DemoOptions o;
  o.exclude_tasks = {"held"};
  DemoSet s = select_demonstrations(records(), o);
  ASSERT_EQ(s.demos.size(), 2u);
  EXPECT_EQ(s.demos[0].demo.sentence, "a2");
  EXPECT_EQ(s.demos[0].hardware, kAvx2);
  EXPECT_DOUBLE_EQ(s.demos[0].median_s, 0.9e-3);
  EXPECT_EQ(s.demos[1].demo.sentence, "a5");
  EXPECT_EQ(s.demos[1].hardware, kAvx512);
  EXPECT_NE(s.demos[0].demo.group, s.demos[1].demo.group);
  EXPECT_EQ(s.records, 11);
  EXPECT_EQ(s.errors, 3);
  EXPECT_EQ(s.markers, 1);
  EXPECT_EQ(s.excluded, 1);
  EXPECT_EQ(s.groups_per_hardware.at(kAvx2), 1);
  EXPECT_EQ(s.groups_per_hardware.at(kAvx512), 1);

  o.hardware = {kAvx512};
  s = select_demonstrations(records(), o);
  ASSERT_EQ(s.demos.size(), 1u);
  EXPECT_EQ(s.demos[0].demo.sentence, "a5");
  EXPECT_EQ(s.other_hardware, 4);
}

TEST(Demonstrations, TopKDistinctAndSpeedWeighting) {
  DemoOptions o;
  o.top_k = 3;
  o.hardware = {kAvx2};
  o.exclude_tasks = {"held"};
  o.weighting = DemoWeighting::Speed;
  DemoSet s = select_demonstrations(records(), o);
  ASSERT_EQ(s.demos.size(), 3u);
  // a2 (0.9 ms, its re-measurement), a4 (2 ms), a1 (3 ms): a2 once, though measured twice.
  EXPECT_EQ(s.demos[0].demo.sentence, "a2");
  EXPECT_EQ(s.demos[1].demo.sentence, "a4");
  EXPECT_EQ(s.demos[2].demo.sentence, "a1");
  EXPECT_EQ(s.demos[0].demo.copies, 4);  // the best: max_copies
  EXPECT_EQ(s.demos[1].demo.copies, 2);  // 4 * 0.9 / 2 = 1.8
  EXPECT_EQ(s.demos[2].demo.copies, 1);  // 4 * 0.9 / 3 = 1.2
  o.weighting = DemoWeighting::Uniform;
  for (const ChosenDemo& d : select_demonstrations(records(), o).demos) EXPECT_EQ(d.demo.copies, 1);
  EXPECT_EQ(parse_demo_weighting("speed"), DemoWeighting::Speed);
  EXPECT_NE(user_error_of([] { parse_demo_weighting("fast"); }).find("uniform"), std::string::npos);
}

TEST(Demonstrations, NothingToLearnFromIsOneMessage) {
  std::string msg = user_error_of([] { select_demonstrations({}, DemoOptions()); });
  EXPECT_NE(msg.find("no demonstration"), std::string::npos) << msg;
  msg = user_error_of([] {
    select_demonstrations({rec("b", "b1", 0, kAvx2, ErrorKind::Crash),
                           rec("b", autoscheduler_marker(HalideAutoscheduler::Li2018), 1e-3)},
                          DemoOptions());
  });
  EXPECT_NE(msg.find("no demonstration"), std::string::npos) << msg;
  EXPECT_NE(msg.find("2 records: 1 errors, 1 autoscheduler markers"), std::string::npos) << msg;
  DemoOptions held;
  held.exclude_tasks = {"held"};
  msg = user_error_of([&] { select_demonstrations({rec("held", "h1", 1e-3)}, held); });
  EXPECT_NE(msg.find("1 of held-out"), std::string::npos) << msg;
}

TEST(Demonstrations, RecordsOfAnotherLanguageAreRefused) {
  const std::string p = ::testing::TempDir() + "demo_lang_" + std::to_string(getpid()) + ".jsonl";
  std::string line = record_to_json_line(rec("a", "a1", 1e-3));
  const std::string lang = "\"language\":" + std::to_string(kLanguageVersion);
  ASSERT_NE(line.find(lang), std::string::npos) << line;
  std::string other = line;
  other.replace(other.find(lang), lang.size(), "\"language\":1");
  std::ofstream(p) << line << "\n" << other << "\n";
  std::string msg = user_error_of([&] { load_record_files({p}); });
  EXPECT_NE(msg.find(p + ":2: a record of tensor-language version 1"), std::string::npos) << msg;
  std::remove(p.c_str());
}

// Held out means held out, checked on what ships: the fine-tuned models/tlm.ckpt lists the tasks
// it learned from (extra.finetune.task_hashes), and none of them is a task of a held-out
// workload. A chosen demonstration set lists exactly its tasks.
TEST(Demonstrations, ShippedModelLearnedFromNoHeldOutTask) {
  std::vector<MeasureRecord> rs = {rec("a", "a1", 1e-3), rec("a", "a2", 2e-3),
                                   rec("b", "b1", 3e-3)};
  DemoOptions o;
  o.top_k = 2;
  std::vector<std::string> h = select_demonstrations(rs, o).task_hashes();
  std::vector<std::string> want = {hex_hash("a"), hex_hash("b")};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(h, want);

  const std::string shipped = default_model_path();
  ASSERT_FALSE(shipped.empty()) << "no shipped models/tlm.ckpt";
  TlmModel m = load_tlm_model(shipped);
  std::set<std::string> learned;
  ASSERT_TRUE(finetuned_task_hashes(m, &learned)) << shipped << " does not list its tasks";
  EXPECT_GE(learned.size(), 100u) << "the shipped model learned from few tasks";
  int heldout = 0;
  for (const std::string& key : heldout_task_keys()) heldout += learned.count(hex_hash(key)) ? 1 : 0;
  EXPECT_EQ(heldout, 0) << shipped << " was fine-tuned on held-out tasks";
}

TEST(Convergence, BestSoFarNormalized) {
  auto loop_rec = [](const std::string& task, double median, int round, int64_t t,
                     ErrorKind err = ErrorKind::None) {
    MeasureRecord r = rec(task, task + std::to_string(t), median, kAvx2, err, t * 1000);
    r.strategy = "loop-r" + std::to_string(round);
    return r;
  };
  std::vector<MeasureRecord> rs = {
      loop_rec("a", 4e-3, 0, 0),
      loop_rec("a", 2e-3, 0, 1),
      loop_rec("b", 0, 1, 2, ErrorKind::Crash),
      loop_rec("b", 1e-3, 1, 3),
      loop_rec("a", 1e-3, 2, 4),     // a improves in a later round
      rec("a", "x", 1e-9, kAvx512),  // another machine: never counted
  };
  EXPECT_EQ(loop_round_of(rs[4]), 2);
  EXPECT_EQ(loop_round_of(rs[5]), -1);
  std::istringstream csv(convergence_csv(rs, kAvx2, 2));
  std::vector<std::string> lines;
  for (std::string l; std::getline(csv, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "measurements,ok,tasks,total_best_s,vs_best,vs_first,elapsed_s");
  // After 2: a = 2 ms (its final best 1 ms, first-round best 2 ms).
  EXPECT_EQ(lines[1], "2,2,1,0.002,2.000000,1.000000,1.0");
  // After 4: a = 2, b = 1 (first and final best 1): (2+1)/(1+1), (2+1)/(2+1).
  EXPECT_EQ(lines[2], "4,3,2,0.003,1.500000,1.000000,3.0");
  // After 5: a = 1: (1+1)/(1+1), 2/3.
  EXPECT_EQ(lines[3], "5,4,2,0.002,1.000000,0.666667,4.0");
}

}  // namespace
}  // namespace tlm
