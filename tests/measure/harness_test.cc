// Safe measurement: a valid program gives latencies; a wrong answer, a crash in either phase and
// a hang give records with error kinds, and the parent goes on measuring afterwards.
#include "measure/harness.h"

#include <signal.h>
#include <unistd.h>

#include <random>

#include "fixtures/task_cases.h"

namespace tlm::testing_tune {
namespace {

class MeasureTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    harness_ = make_task_harness(only_task(matmul_graph()), detect_hardware(), "unit").release();
    warm_halide_jit();
  }
  static void TearDownTestSuite() {
    delete harness_;
    harness_ = nullptr;
  }
  Program sample(uint64_t seed) {
    std::mt19937_64 rng(seed);
    return sample_program(harness_->space, rng);
  }
  static TaskHarness* harness_;
};
TaskHarness* MeasureTest::harness_ = nullptr;

TEST_F(MeasureTest, ValidProgramGivesLatencies) {
  Program p = sample(1);
  MeasureRecord r = measure_candidate(*harness_, program_candidate(p, "unit"), fast_measure());
  ASSERT_TRUE(r.ok()) << r.error << ": " << r.error_msg;
  EXPECT_EQ(r.latencies_s.size(), 3u);
  EXPECT_GT(r.median_s, 0);
  for (double x : r.latencies_s) EXPECT_GT(x, 0);
  EXPECT_GT(r.compile_s, 0);
  EXPECT_EQ(r.task_key, harness_->sub.key);
  EXPECT_EQ(r.task_kind, "dense_relu");
  EXPECT_EQ(r.workload, "unit");
  EXPECT_EQ(r.strategy, "unit");
  EXPECT_EQ(r.hardware, hardware_key(detect_hardware()));
  EXPECT_GT(r.timestamp_ms, 0);
  // The record's sentence is the canonical sentence and reads back as the same program.
  EXPECT_EQ(r.sentence, make_sentence(harness_->sub, harness_->hw, harness_->space, p).to_text());
  Program back;
  ASSERT_TRUE(program_from_sentence(*harness_->printer, r.sentence, &back));
  EXPECT_EQ(back, p);
  // It survives the records round trip.
  EXPECT_EQ(parse_record_line(record_to_json_line(r), "test").sentence, r.sentence);
}

// Timed with the caches as in a model: one call per sample after a flush, recorded as such.
TEST_F(MeasureTest, ModelCacheTimingIsRecorded) {
  MeasureOptions o = fast_measure();
  o.model_cache = true;
  o.flush_bytes = 4 << 20;
  o.timing.repeats = 4;
  MeasureRecord r = measure_candidate(*harness_, program_candidate(sample(1), "unit"), o);
  ASSERT_TRUE(r.ok()) << r.error << ": " << r.error_msg;
  EXPECT_EQ(r.cache, kCacheModel);
  EXPECT_EQ(r.latencies_s.size(), 4u);
  for (double x : r.latencies_s) EXPECT_GT(x, 0);
  EXPECT_EQ(parse_record_line(record_to_json_line(r), "test").cache, kCacheModel);
}

TEST_F(MeasureTest, ProgramFromSentenceRejectsOtherText) {
  Program p = sample(2), out;
  std::string s = harness_->printer->text(p);
  EXPECT_FALSE(program_from_sentence(*harness_->printer, s + " 4", &out));
  EXPECT_FALSE(program_from_sentence(*harness_->printer, "tile x -> 3", &out));
  // A value outside next_options: replace the last value token by a huge number.
  std::string bad = s.substr(0, s.find_last_of(' ')) + " 99999";
  EXPECT_FALSE(program_from_sentence(*harness_->printer, bad, &out));
  // Non-canonical spelling of a value.
  std::string padded =
      s.substr(0, s.find_last_of(' ') + 1) + "0" + s.substr(s.find_last_of(' ') + 1);
  EXPECT_FALSE(program_from_sentence(*harness_->printer, padded, &out));
}

TEST_F(MeasureTest, WrongAnswerIsWrongResult) {
  // The candidate is right, the harness's reference is not: a stand-in for a program that
  // computes something else.
  TaskHarness* b = harness_;
  Tensor saved = b->reference;
  b->reference.data<float>()[5] += 1.0f;
  MeasureRecord r = measure_candidate(*b, program_candidate(sample(3), "unit"), fast_measure());
  b->reference = saved;
  EXPECT_EQ(r.error_kind(), ErrorKind::WrongResult) << r.error_msg;
  EXPECT_TRUE(r.latencies_s.empty());
  EXPECT_NE(r.error_msg.find("violation"), std::string::npos) << r.error_msg;
}

TEST_F(MeasureTest, CrashesAndHangsAreRecordsAndMeasuringGoesOn) {
  MeasureOptions crash_run = fast_measure();
  crash_run.child_hook = [](const Candidate&, int phase) {
    if (phase == 2) raise(SIGSEGV);
  };
  MeasureRecord r = measure_candidate(*harness_, program_candidate(sample(4), "unit"), crash_run);
  EXPECT_EQ(r.error_kind(), ErrorKind::Crash) << r.error_msg;
  EXPECT_NE(r.error_msg.find("signal 11"), std::string::npos) << r.error_msg;

  MeasureOptions crash_compile = fast_measure();
  crash_compile.child_hook = [](const Candidate&, int phase) {
    if (phase == 1) std::abort();
  };
  r = measure_candidate(*harness_, program_candidate(sample(5), "unit"), crash_compile);
  EXPECT_EQ(r.error_kind(), ErrorKind::Crash) << r.error_msg;

  MeasureOptions hang = fast_measure();
  hang.run_timeout_s = 1;
  hang.child_hook = [](const Candidate&, int phase) {
    if (phase == 2)
      for (;;) pause();
  };
  r = measure_candidate(*harness_, program_candidate(sample(6), "unit"), hang);
  EXPECT_EQ(r.error_kind(), ErrorKind::RunTimeout) << r.error_msg;

  MeasureOptions slow_compile = fast_measure();
  slow_compile.compile_timeout_s = 1;
  slow_compile.child_hook = [](const Candidate&, int phase) {
    if (phase == 1) sleep(30);
  };
  r = measure_candidate(*harness_, program_candidate(sample(7), "unit"), slow_compile);
  EXPECT_EQ(r.error_kind(), ErrorKind::CompileTimeout) << r.error_msg;

  MeasureOptions throws = fast_measure();
  throws.child_hook = [](const Candidate&, int phase) {
    if (phase == 2) throw std::runtime_error("bounds assertion");
  };
  r = measure_candidate(*harness_, program_candidate(sample(8), "unit"), throws);
  EXPECT_EQ(r.error_kind(), ErrorKind::RuntimeError) << r.error_msg;

  // The parent is intact: the next candidate measures fine.
  r = measure_candidate(*harness_, program_candidate(sample(9), "unit"), fast_measure());
  EXPECT_TRUE(r.ok()) << r.error << ": " << r.error_msg;
}

TEST_F(MeasureTest, BatchCompilesTogetherAndACrashCostsOneCandidate) {
  MeasureOptions o = fast_measure();
  o.parallel_compiles = 2;
  o.child_hook = [](const Candidate& c, int phase) {
    if (c.strategy == "crash" && phase == 2) raise(SIGSEGV);
    if (c.strategy == "hang" && phase == 1)
      for (;;) pause();
  };
  o.compile_timeout_s = 2;
  std::vector<MeasureJob> jobs;
  for (const char* s : {"ok", "crash", "ok", "hang", "ok"})
    jobs.push_back({harness_, program_candidate(sample(20 + jobs.size()), s)});
  std::vector<MeasureRecord> rs = measure_candidates(jobs, o);
  ASSERT_EQ(rs.size(), 5u);
  for (size_t i = 0; i < rs.size(); i++) EXPECT_EQ(rs[i].strategy, jobs[i].candidate.strategy);
  EXPECT_TRUE(rs[0].ok()) << rs[0].error_msg;
  EXPECT_EQ(rs[1].error_kind(), ErrorKind::Crash) << rs[1].error_msg;
  EXPECT_TRUE(rs[2].ok()) << rs[2].error_msg;
  EXPECT_EQ(rs[3].error_kind(), ErrorKind::CompileTimeout) << rs[3].error_msg;
  EXPECT_TRUE(rs[4].ok()) << rs[4].error_msg;
  EXPECT_EQ(rs[0].sentence, harness_->printer->text(jobs[0].candidate.program));
}

TEST(MeasureInputs, IndicesStayInRange) {
  Graph g;
  ValueId table = g.add_input("table", DType::F32, {7, 4});
  ValueId ids = g.add_input("ids", DType::I64, {3, 5});
  g.mark_output(g.add(Op::Gather, {table, ids}, {{"axis", int64_t(0)}}));
  Subgraph sub = partition_graph(g).tasks.at(0).sub;
  std::vector<Tensor> ins = subgraph_inputs(sub, 3);
  ASSERT_EQ(ins.size(), 2u);
  const Tensor& idx = ins[0].dtype() == DType::I64 ? ins[0] : ins[1];
  ASSERT_EQ(idx.dtype(), DType::I64);
  for (int64_t i = 0; i < idx.numel(); i++) {
    EXPECT_GE(idx.data<int64_t>()[i], 0);
    EXPECT_LT(idx.data<int64_t>()[i], 7);
  }
}

}  // namespace
}  // namespace tlm::testing_tune
