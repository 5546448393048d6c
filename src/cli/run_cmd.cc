// `tlm run MODEL`: compile with the default schedules, run on seeded random (or given) inputs,
// verify against the reference interpreter, print per-task and end-to-end latency.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "partition/partition.h"
#include "runtime/executor.h"

namespace tlm {
namespace {

struct RunOptions {
  std::string model;
  std::vector<std::string> dims;
  uint64_t seed = 0;                // zoo weights and random inputs
  std::vector<std::string> inputs;  // --input IN.pb, graph-input order; empty: random inputs
  std::string output;               // --output OUT.pb: the first output as a TensorProto
  int repeat = 10;                  // timed runs; the median is reported
  int warmup = 2;                   // untimed runs before them
  bool verify = true;               // compare with the reference interpreter
  // Verification passes when |got - ref| <= atol + rtol * |ref| everywhere (max_rel_violation
  // <= 1). Both sides compute in f32 but sum in different orders; 1e-3 leaves room for that
  // over deep networks while still catching any indexing or fusion bug.
  double atol = 1e-3;
  double rtol = 1e-3;
};

int run_run(const RunOptions& o) {
  // Read and check everything the user gave before the slow part.
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed);
  std::vector<Tensor> inputs =
      o.inputs.empty() ? random_inputs(g, o.seed) : read_inputs(g, o.inputs);
  TLM_USER_CHECK(!g.outputs.empty()) << "model '" << o.model << "' has no outputs";
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fflush(stdout);

  CompileOptions co;
  co.progress = true;
  CompiledModel m = compile_model(g, p, co);
  std::vector<Tensor> outputs = m.run(inputs);

  if (o.verify) {
    std::vector<Tensor> ref = interpret(g, inputs);
    TLM_CHECK(ref.size() == outputs.size()) << ref.size() << " reference outputs";
    double worst = 0;
    size_t worst_i = 0;
    for (size_t i = 0; i < ref.size(); i++) {
      double v = max_rel_violation(outputs[i], ref[i], o.atol, o.rtol);
      if (!(v <= worst)) {  // NaN-safe: a NaN violation is the worst
        worst = v;
        worst_i = i;
      }
    }
    bool pass = worst <= 1.0;
    const Value& wv = g.value(g.outputs[worst_i]);
    std::printf(
        "verify: %s  worst violation %.3g at output '%s' %s (1 = |got-ref| reaches "
        "atol %g + rtol %g * |ref|)\n",
        pass ? "PASS" : "FAIL", worst, wv.name.c_str(), type_str(wv).c_str(), o.atol, o.rtol);
    if (!pass) {
      std::fflush(stdout);
      std::fprintf(stderr, "error: output '%s' differs from the reference interpreter\n",
                   wv.name.c_str());
      return 1;
    }
  } else {
    std::printf("verify: skipped (--no-verify)\n");
  }

  Timing t = m.time(inputs, o.warmup, o.repeat);
  std::printf("\n%s", latency_table(p, t).c_str());
  std::printf("end-to-end: %.3f ms (median of %d runs after %d warm-up)\n", t.end_to_end_ms,
              t.repeat, o.warmup);
  std::printf("memory: %s\n", memory_plan_summary(m.memory_plan()).c_str());

  if (!o.output.empty()) {
    write_tensor_proto_file(o.output, outputs[0], g.value(g.outputs[0]).name);
    std::printf("wrote output '%s' %s to %s\n", g.value(g.outputs[0]).name.c_str(),
                type_str(g.value(g.outputs[0])).c_str(), o.output.c_str());
  }
  return 0;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  auto no_verify = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "run", "compile with default schedules, verify against the reference interpreter, time");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed);
  cmd->add_option("--input", o->inputs,
                  "input TensorProto .pb file, in graph-input order (repeatable)")
      ->take_all()
      ->check(CLI::ExistingFile);
  cmd->add_option("--output", o->output, "write the first output as a TensorProto .pb file");
  cmd->add_option("--repeat", o->repeat, "timed runs; the median is reported")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--warmup", o->warmup, "untimed runs before timing")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--atol", o->atol, "absolute tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", o->rtol, "relative tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-verify", *no_verify, "skip the comparison with the reference interpreter");
  return {cmd, [o, no_verify] {
            o->verify = !*no_verify;
            return run_run(*o);
          }};
}

}  // namespace tlm
