// `tlm compile`: an artifact from records builds with the system compiler, and its runner
// verifies the model against the interpreter's outputs.
#include "deploy/artifact.h"

#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "fixtures/task_cases.h"
#include "graph/interpreter.h"
#include "language/sentence.h"
#include "measure/recorded_schedules.h"
#include "runtime/memory_plan.h"
#include "tune/tuner.h"

namespace tlm::testing_tune {
namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Builds the artifact in `dir`, expects its runner to verify, and removes it.
void expect_builds_and_verifies(const std::string& dir) {
  ::testing::internal::CaptureStdout();
  int code = build_and_verify_artifact(dir);
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0) << out;
  std::system(("rm -rf '" + dir + "'").c_str());
}

// Artifact options for tiny_model with these best sentences, its input and the interpreter's
// output, in a fresh directory under TMPDIR named after `tag`.
ArtifactOptions tiny_artifact(const Graph& g, const std::vector<std::string>& best,
                              const std::string& tag) {
  ArtifactOptions ao;
  ao.dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/tlm_" + tag +
           "_artifact_" + std::to_string(getpid());
  ao.model_name = "tiny";
  ao.best = best;
  ao.inputs = {random_tensor(DType::F32, {1, 4, 8, 8}, 3)};
  ao.expected = interpret(g, ao.inputs);
  return ao;
}

// tiny_model's artifact with its default schedules, emitted while the environment variable
// `var` is `value` ("" = unset), as `tlm compile` would be run; `tag` names its directory.
ArtifactOptions emit_tiny_with_env(const char* var, const char* value, const std::string& tag) {
  Graph g = tiny_model();
  Partition p = partition_graph(g);
  std::vector<std::string> defaults(p.tasks.size());
  if (*value) setenv(var, value, 1);
  ArtifactOptions ao = tiny_artifact(g, defaults, tag + value);
  emit_artifact(g, p, detect_hardware(), ao);
  unsetenv(var);
  return ao;
}

TEST(Artifact, BuildsAndVerifiesWithRecordedPrograms) {
  Graph g = tiny_model();
  Partition p = partition_graph(g);
  HardwareInfo hw = detect_hardware();
  TempFile records("artifact");
  TuneOptions o;
  o.strategy = "random";
  o.records_path = records.path();
  o.trials_per_task = 2;
  o.batch = 2;
  o.remeasure_top = 0;
  o.measure = fast_measure();
  o.progress = false;
  TuneReport tuned = tune_model(g, p, o);
  std::vector<std::string> best = best_sentences_from_records(p, records.path(), hw);
  ASSERT_EQ(best.size(), p.tasks.size());
  int recorded = 0;
  for (const std::string& s : best) recorded += !s.empty();
  EXPECT_EQ(recorded, (int)p.tasks.size()) << tuned.table();

  ArtifactOptions ao = tiny_artifact(g, best, "tune");
  ArtifactReport r = emit_artifact(g, p, hw, ao);
  EXPECT_EQ(r.tasks, (int)p.tasks.size());
  EXPECT_EQ(r.tuned_tasks, recorded);
  EXPECT_GT(r.weight_bytes, 0);
  for (const char* f : {"model.h", "model.cc", "main.cc", "build.sh", "runtime.o", "weights.bin",
                        "input_0.bin", "expected_0.bin", "HalideRuntime.h", "par_for.cc",
                        "support/spin_pool.h", "support/spin_pool.cc"})
    EXPECT_TRUE(exists(ao.dir + "/" + f)) << f;
  for (const Task& t : p.tasks)
    EXPECT_TRUE(exists(ao.dir + "/task_" + std::to_string(t.id) + ".o")) << t.id;
  // schedules.txt: each task's program, as compiled.
  {
    std::ifstream f(ao.dir + "/schedules.txt");
    std::string line;
    size_t i = 0;
    for (; std::getline(f, line); i++) {
      ASSERT_LT(i, p.tasks.size()) << line;
      EXPECT_EQ(line, "task " + std::to_string(p.tasks[i].id) + " " + p.tasks[i].sub.kind + ": " +
                          best[i]);
    }
    EXPECT_EQ(i, p.tasks.size());
  }

  ::testing::internal::CaptureStdout();
  int code = build_and_verify_artifact(ao.dir);
  std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(code, 0) << out;
  EXPECT_TRUE(exists(ao.dir + "/runner"));

  // A wrong expected output makes the runner fail.
  Tensor wrong = ao.expected[0];
  wrong.data<float>()[0] += 1.0f;
  {
    std::ofstream f(ao.dir + "/expected_0.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(wrong.raw()), (std::streamsize)wrong.nbytes());
  }
  ::testing::internal::CaptureStdout();
  code = std::system(("'" + ao.dir + "/runner' '" + ao.dir + "' 1 > /dev/null").c_str());
  ::testing::internal::GetCapturedStdout();
  EXPECT_NE(code, 0);
  std::system(("rm -rf '" + ao.dir + "'").c_str());
}

// The tasks' parallel loops run on tlm's spin pool (support/spin_pool.h, copied into the
// artifact), unless `tlm compile` ran with TLM_SPIN_US=0; both build and verify.
TEST(Artifact, ThreadPoolHookFollowsTlmSpinUs) {
  for (const char* spin : {"", "0"}) {
    ArtifactOptions ao = emit_tiny_with_env("TLM_SPIN_US", spin, "spin");
    const std::string par_for = read_text(ao.dir + "/par_for.cc");
    if (*spin)
      EXPECT_NE(par_for.find("Halide's own pool"), std::string::npos) << par_for;
    else
      EXPECT_NE(par_for.find("halide_set_custom_do_par_for(spin_do_par_for)"), std::string::npos)
          << par_for;
    EXPECT_EQ(read_text(ao.dir + "/support/spin_pool.cc").find("#include \"support/threads.h\""),
              std::string::npos)
        << "the artifact's copy must build on its own";
    expect_builds_and_verifies(ao.dir);
  }
}

// An artifact puts its weights and arena on huge pages unless TLM_HUGE_PAGES=0 when it is
// compiled (support/huge_pages.h); it builds and verifies either way.
TEST(Artifact, HugePagesFollowTlmHugePages) {
  for (const char* huge : {"", "0"}) {
    ArtifactOptions ao = emit_tiny_with_env("TLM_HUGE_PAGES", huge, "huge");
    const std::string model = read_text(ao.dir + "/model.cc");
    EXPECT_NE(model.find(std::string("constexpr bool kHugePages = ") + (*huge ? "false" : "true")),
              std::string::npos);
    EXPECT_NE(model.find("weights = alloc_buffer("), std::string::npos);
    EXPECT_NE(model.find("arena = alloc_buffer("), std::string::npos);
    expect_builds_and_verifies(ao.dir);
  }
}

// The expert programs of tiny_model's conv and dense pack their weights at root, and sampled
// ones block them (InputLayout; tiny_model's channels are too few for the experts' register
// blocks): the artifact stores those weights packed (once, in weights.bin, blocked ones as
// rank + 1 buffers with a zero-padded last block) and the runner still verifies.
TEST(Artifact, PrepackedWeightsVerify) {
  Graph g = tiny_model();
  Partition p = partition_graph(g);
  HardwareInfo hw = detect_hardware();
  std::vector<std::string> best;
  int prepacked = 0, blocked = 0;
  for (const Task& t : p.tasks) {
    auto h = make_task_harness(t.sub, hw, "unit");
    std::string chosen;
    int rank = 0;  // of the chosen program: 0 no packing, 1 packed, 2 packed blocked
    std::vector<Program> candidates = expert_programs(h->space, hw);
    std::mt19937_64 rng(11);
    for (int k = 0; k < 400; k++) candidates.push_back(sample_program(h->space, rng));
    for (const Program& e : candidates) {
      LoweredTask l = lower_subgraph(t.sub);
      apply_program(l, h->space, e);
      int r = 0;
      for (const InputLayout& o : l.input_storage) r = std::max(r, o.block > 0 ? 2 : !o.dense());
      if (chosen.empty() || r > rank) chosen = h->printer->text(e), rank = r;
      if (rank == 2) break;
    }
    prepacked += rank >= 1;
    blocked += rank == 2;
    best.push_back(chosen);
  }
  EXPECT_GE(blocked, 1);
  ASSERT_GE(prepacked, 1);
  ArtifactOptions ao = tiny_artifact(g, best, "prepacked");
  ArtifactReport r = emit_artifact(g, p, hw, ao);
  EXPECT_EQ(r.tuned_tasks, (int)p.tasks.size());
  expect_builds_and_verifies(ao.dir);
}

// Graph outputs computed by tasks are written straight into the caller's buffers, except one
// named twice (copied): an output that a later task also reads, and a repeated output, still
// verify (default schedules).
TEST(Artifact, OutputsReadByLaterTasksAndRepeatedOutputsVerify) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 8, 8});
  ValueId a = g.add(Op::Relu, {x});
  ValueId b = g.add(Op::Add, {a, a});
  ValueId c = g.add(Op::Sigmoid, {b});
  g.mark_output(b);
  g.mark_output(c);
  g.mark_output(b);
  Partition p = partition_graph(g);
  ASSERT_GE(p.tasks.size(), 2u) << "b must be an output that a later task reads";
  ArtifactOptions ao = tiny_artifact(g, std::vector<std::string>(p.tasks.size()), "outputs");
  emit_artifact(g, p, detect_hardware(), ao);
  const std::string text = read_text(ao.dir + "/model.cc");
  EXPECT_NE(text.find("].buf.host = (uint8_t*)outputs[1];"), std::string::npos)
      << "the output named once is written in place";
  EXPECT_NE(text.find("std::memcpy(outputs[0]"), std::string::npos)
      << "the repeated output is copied";
  expect_builds_and_verifies(ao.dir);
}

// A standalone Reshape (a view: runtime/memory_plan.h) is not called in the generated code, its
// consumers read the dense output's bytes, and the model verifies.
TEST(Artifact, ReshapeViewsAreNotCalled) {
  Graph g = view_model();
  Partition p = partition_graph(g);
  ASSERT_EQ(plan_memory(g, p).views, 1);
  ArtifactOptions ao;
  ao.dir = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
           "/tlm_views_artifact_" + std::to_string(getpid());
  ao.model_name = "views";
  ao.best = std::vector<std::string>(p.tasks.size());
  ao.inputs = {random_tensor(DType::F32, {8, 16}, 3)};
  ao.expected = interpret(g, ao.inputs);
  emit_artifact(g, p, detect_hardware(), ao);
  const std::string text = read_text(ao.dir + "/model.cc");
  EXPECT_NE(text.find(" is a view of "), std::string::npos) << text;
  // Two Reshape tasks: the one read by the matmuls is a view, the graph output's one runs.
  int reshape_tasks = 0, called = 0;
  for (const Task& t : p.tasks)
    if (is_view_subgraph(t.sub.graph)) {
      reshape_tasks++;
      called += text.find("tlm_task_" + std::to_string(t.id) + "(") != std::string::npos;
    }
  EXPECT_EQ(reshape_tasks, 2);
  EXPECT_EQ(called, 1) << text;
  expect_builds_and_verifies(ao.dir);
}

}  // namespace
}  // namespace tlm::testing_tune
