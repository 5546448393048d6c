// `tlm run MODEL`: compile with the default schedules, run on seeded random (or given) inputs,
// verify against the reference interpreter, print per-task and end-to-end latency.
// `--schedules tlm`: also compile every task with the language model's most likely program (no
// measurement; --model, default the shipped checkpoint), verify that model too, and print both
// side by side (timed alternately, so both see the same machine).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "measure/recorded_schedules.h"
#include "model/tlm_model.h"
#include "partition/partition.h"
#include "support/clock.h"
#include "support/progress.h"
#include "support/threads.h"
#include "tune/lm_search.h"
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
  std::string schedules = "default";  // or "tlm"
  std::string model_path;             // --schedules tlm: the checkpoint ("": the shipped one)
};

// Per task, the language model's most likely program as a sentence (tune's zero-shot strategy).
std::vector<std::string> tlm_schedules(const Partition& p, const HardwareInfo& hw,
                                       const std::string& model_path) {
  set_model_threads(compute_threads());
  TlmModel m = load_model_or_default(model_path);
  std::vector<std::string> out(p.tasks.size());
  ProgressLine progress(true, "tlm: writing schedules", (int64_t)p.tasks.size());
  for (size_t i = 0; i < p.tasks.size(); i++) {
    LoweredTask lt = lower_subgraph(p.tasks[i].sub);
    TaskSpace space = build_space(lt, hw);
    TaskPrinter printer(p.tasks[i].sub, hw, space);
    out[i] = printer.text(most_likely_program(*m.lm, m.tok, printer));
    progress.update((int64_t)i + 1, "task " + std::to_string(p.tasks[i].id));
  }
  progress.finish();
  return out;
}

// True when every output is within tolerance of the reference; else prints what differs.
bool verify_outputs(const Graph& g, const std::vector<Tensor>& outputs,
                    const std::vector<Tensor>& ref, const RunOptions& o, const char* which) {
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
      "verify%s: %s  worst violation %.3g at output '%s' %s (1 = |got-ref| reaches "
      "atol %g + rtol %g * |ref|)\n",
      which, pass ? "PASS" : "FAIL", worst, wv.name.c_str(), type_str(wv).c_str(), o.atol, o.rtol);
  if (!pass) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: output '%s'%s differs from the reference interpreter\n",
                 wv.name.c_str(), which);
  }
  return pass;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Per task: median ms per instance under both schedules and the speedup; then end to end.
std::string comparison_table(const Partition& p, const Timing& d, const Timing& t) {
  const size_t nt = p.tasks.size();
  std::vector<std::vector<double>> bd(nt), bt(nt);
  for (size_t k = 0; k < p.instances.size(); k++) {
    bd[p.instances[k].task].push_back(d.instance_ms[k]);
    bt[p.instances[k].task].push_back(t.instance_ms[k]);
  }
  std::string s;
  char line[256];
  std::snprintf(line, sizeof line, "%4s  %-28s %9s %13s %13s %8s\n", "task", "kind", "instances",
                "default ms", "tlm ms", "speedup");
  s += line;
  double sd = 0, st = 0;
  for (size_t i = 0; i < nt; i++) {
    if (bd[i].empty()) continue;
    double a = median_of(bd[i]), b = median_of(bt[i]);
    sd += a * (double)bd[i].size();
    st += b * (double)bt[i].size();
    std::snprintf(line, sizeof line, "%4d  %-28.28s %9zu %13.3f %13.3f %7.2fx\n", p.tasks[i].id,
                  p.tasks[i].sub.kind.c_str(), bd[i].size(), a, b, b > 0 ? a / b : 0.0);
    s += line;
  }
  std::snprintf(line, sizeof line, "%4s  %-28s %9zu %13.3f %13.3f %7.2fx  (ms per instance; sum: "
                "instances x median)\n", "", "sum", p.instances.size(), sd, st, st > 0 ? sd / st : 0.0);
  s += line;
  return s;
}

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

  const bool with_tlm = o.schedules == "tlm";
  std::vector<std::string> best;
  if (with_tlm) {
    const double t0 = now_s();
    best = tlm_schedules(p, detect_hardware(), o.model_path);
    std::printf("tlm: %zu schedules written in %.1f s (most likely program per task, no "
                "measurement)\n", best.size(), now_s() - t0);
    std::fflush(stdout);
  }

  CompileOptions co;
  co.progress = true;
  double t0 = now_s();
  CompiledModel m = compile_model(g, p, co);
  const double default_compile_s = now_s() - t0;
  std::vector<Tensor> outputs = m.run(inputs);
  std::unique_ptr<CompiledModel> tm;
  std::vector<Tensor> tlm_outputs;
  double tlm_compile_s = 0;
  if (with_tlm) {
    CompileOptions tco = co;
    tco.schedule = best_schedule_hook(p, best, detect_hardware());
    t0 = now_s();
    tm = std::make_unique<CompiledModel>(compile_model(g, p, tco));
    tlm_compile_s = now_s() - t0;
    tlm_outputs = tm->run(inputs);
  }

  if (o.verify) {
    std::vector<Tensor> ref = interpret(g, inputs);
    bool ok = verify_outputs(g, outputs, ref, o, with_tlm ? " (default schedules)" : "");
    if (with_tlm) ok = verify_outputs(g, tlm_outputs, ref, o, " (tlm schedules)") && ok;
    if (!ok) return 1;
  } else {
    std::printf("verify: skipped (--no-verify)\n");
  }

  if (!with_tlm) {
    Timing t = m.time(inputs, o.warmup, o.repeat);
    std::printf("\n%s", latency_table(p, t).c_str());
    std::printf("end-to-end: %.3f ms (median of %d runs after %d warm-up)\n", t.end_to_end_ms,
                t.repeat, o.warmup);
  } else {
    // Alternate halves, so that both see the same machine; medians over both halves.
    const int half = std::max(1, o.repeat / 2);
    Timing d1 = m.time(inputs, o.warmup, half), t1 = tm->time(inputs, o.warmup, half);
    Timing d2 = m.time(inputs, 0, half), t2 = tm->time(inputs, 0, half);
    auto merge = [](const Timing& a, const Timing& b) {
      Timing r;
      for (size_t i = 0; i < a.instance_ms.size(); i++)
        r.instance_ms.push_back(std::min(a.instance_ms[i], b.instance_ms[i]));
      r.end_to_end_ms = std::min(a.end_to_end_ms, b.end_to_end_ms);
      r.repeat = a.repeat + b.repeat;
      return r;
    };
    Timing d = merge(d1, d2), t = merge(t1, t2);
    std::printf("\n%s", comparison_table(p, d, t).c_str());
    std::printf("end-to-end: default %.3f ms, tlm %.3f ms: %.2fx (the lower of two medians of %d "
                "runs each, alternating, after %d warm-up)\n",
                d.end_to_end_ms, t.end_to_end_ms, d.end_to_end_ms / t.end_to_end_ms, half,
                o.warmup);
    std::printf("compile: default %.1f s, tlm %.1f s\n", default_compile_s, tlm_compile_s);
  }
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
  cmd->add_option("--schedules", o->schedules,
                  "default: the default schedules; tlm: also each task's most likely program "
                  "from the language model (no measurement), both verified and timed")
      ->capture_default_str()
      ->check(CLI::IsMember({"default", "tlm"}));
  cmd->add_option("--model", o->model_path,
                  "--schedules tlm: the language-model checkpoint (default: models/tlm.ckpt)");
  return {cmd, [o, no_verify] {
            o->verify = !*no_verify;
            return run_run(*o);
          }};
}

}  // namespace tlm
