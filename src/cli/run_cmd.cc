// `tlm run MODEL`: compile with the default schedules, run on seeded random (or given) inputs,
// verify against the reference interpreter, print per-task and end-to-end latency.
//
// `--schedules SET...`: compile the model once more per schedule set, verify every one and time
// them all in one run, taking --turns turns (so every set sees the same machine; each set's time is
// the lowest of its turns' medians, and every turn's end-to-end median is printed), per task and
// end to end beside the default schedules (ratios measured in one run: what the benchmarks
// report). A set is
//   tlm             every task's program chosen by the language model (--model, default the
//                   shipped checkpoint; --zero-shot, tune/lm_search.h): no measurement
//   NAME=CKPT.ckpt  the same with another checkpoint; a model set may end in @MODE, its own
//                   zero-shot mode (so modes compare in one run)
//   NAME=R.jsonl    every task's best recorded program on this machine (a tuning run's records);
//                   tasks the records lack get the default schedule (counted in the output)
//   NAME=default    the default schedules once more (for @copies)
// and any set may end in @copies: the same programs with every pure reshape task run as a copy
// instead of a view of its input (runtime/memory_plan.h; A/B in one run, as TLM_RESHAPE_VIEWS=0
// does for the whole process).
// `--csv FILE` writes the table (one row per task and set, then the end-to-end rows).
// `--alone` then times every task of every set by itself (in a row; after a 64 MiB cache flush;
// after the flush with its weights read back in; after a 2 ms idle pause) beside its in-model
// time: what running inside the model costs a task, and how much of it is the weights' first read.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/lm_schedules.h"
#include "cli/model_source.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "measure/recorded_schedules.h"
#include "partition/partition.h"
#include "runtime/executor.h"
#include "support/cache_flush.h"
#include "support/clock.h"
#include "support/threads.h"
#include "tune/lm_search.h"

namespace tlm {
namespace {

struct RunOptions {
  std::string model;
  std::string layout = "auto";  // --layout
  std::vector<std::string> dims;
  uint64_t seed = 0;                // zoo weights and random inputs
  std::vector<std::string> inputs;  // --input IN.pb, graph-input order; empty: random inputs
  std::string output;               // --output OUT.pb: the first output as a TensorProto
  int repeat = 10;                  // timed runs; the median is reported
  int warmup = 2;                   // untimed runs before them
  int turns = 2;                    // with --schedules: the sets take this many turns of
                                    // repeat / turns runs each
  bool verify = true;               // compare with the reference interpreter
  // Verification passes when |got - ref| <= atol + rtol * |ref| everywhere (max_rel_violation
  // <= 1). Both sides compute in f32 but sum in different orders; 1e-3 leaves room for that
  // over deep networks while still catching any indexing or fusion bug.
  double atol = 1e-3;
  double rtol = 1e-3;
  std::vector<std::string> schedules;  // schedule sets beside the default ones (see the top)
  std::string model_path;              // the `tlm` set's checkpoint ("": the shipped one)
  std::string zero_shot = "ranker";    // how model sets choose programs (tune/lm_search.h)
  std::string ranker_path;             // mode ranker's ranker ("": models/ranker.json)
  std::string csv;                     // --csv FILE
  bool alone = false;                  // --alone: each task in the model vs by itself
};

// One schedule set: how every task of the model is scheduled.
struct ScheduleSet {
  enum Kind { Default, Model, Records } kind = Default;
  std::string label = "default";  // "default", "tlm", or the NAME of NAME=PATH
  std::string path;               // checkpoint or records file ("" for the shipped checkpoint)
  std::string zero_shot;          // Model sets: the zero-shot mode (SET@MODE, else --zero-shot)
  std::vector<std::string> best;  // per task: a sentence, a marker, or "" (default schedule)
  std::unique_ptr<CompiledModel> compiled;
  std::vector<Tensor> outputs;
  double compile_s = 0;
  std::vector<Timing> timings;  // one per turn
  bool reshape_views = true;    // false for SET@copies
};

ScheduleSet parse_schedule_set(std::string spec, const RunOptions& o) {
  ScheduleSet s;
  if (spec == "default") return s;
  s.zero_shot = o.zero_shot;
  const std::string copies = "@copies";  // SET@copies: reshape tasks run as copies (A/B)
  if (spec.size() > copies.size() &&
      spec.compare(spec.size() - copies.size(), copies.size(), copies) == 0) {
    s.reshape_views = false;
    spec.resize(spec.size() - copies.size());
  }
  const size_t at = spec.rfind('@');
  if (at != std::string::npos) {  // SET@MODE: a model set with its own zero-shot mode
    s.zero_shot = spec.substr(at + 1);
    spec = spec.substr(0, at);
    zero_shot_mode(s.zero_shot);  // a clear error now rather than after compiling others
  }
  if (spec == "tlm") {
    s.kind = ScheduleSet::Model, s.label = "tlm", s.path = o.model_path;
    return s;
  }
  const size_t eq = spec.find('=');
  TLM_USER_CHECK(eq != std::string::npos && eq > 0 && eq + 1 < spec.size())
      << "--schedules: '" << spec
      << "' is not a schedule set: default, tlm, NAME=CKPT.ckpt or NAME=RECORDS.jsonl";
  s.label = spec.substr(0, eq), s.path = spec.substr(eq + 1);
  TLM_USER_CHECK(s.label != "default")
      << "--schedules: the name 'default' is taken by the default schedules";
  TLM_USER_CHECK(s.label.find_first_of(" ,\t") == std::string::npos)
      << "--schedules: the name '" << s.label << "' has a space or comma";
  if (s.path == "default") {  // NAME=default: the default schedules again (with @copies: A/B)
    TLM_USER_CHECK(at == std::string::npos)
        << "--schedules " << s.label << ": @MODE applies to checkpoints, not to default";
    s.path.clear();
    return s;
  }
  const bool ckpt = s.path.size() > 5 && s.path.compare(s.path.size() - 5, 5, ".ckpt") == 0;
  s.kind = ckpt ? ScheduleSet::Model : ScheduleSet::Records;
  TLM_USER_CHECK(ckpt || at == std::string::npos)
      << "--schedules " << s.label << ": @MODE applies to checkpoints, not to records";
  std::ifstream f(s.path);
  TLM_USER_CHECK(f.good()) << "--schedules " << s.label << ": cannot read " << s.path;
  return s;
}

// Fills set.best: written by the model, or read from the records.
void choose_schedules(ScheduleSet& set, const Partition& p, const HardwareInfo& hw,
                      const std::string& ranker_path) {
  const double t0 = now_s();
  if (set.kind == ScheduleSet::Model) {
    set.best = lm_schedules(p, hw, set.path, set.label, set.zero_shot, ranker_path);
    std::printf("%s: %zu schedules written in %.1f s (no measurement)\n", set.label.c_str(),
                set.best.size(), now_s() - t0);
  } else if (set.kind == ScheduleSet::Records) {
    set.best = best_sentences_from_records(p, set.path, hw);
    size_t missing = 0;
    for (const std::string& b : set.best) missing += b.empty() ? 1 : 0;
    std::printf("%s: the best recorded program of %zu of %zu tasks on %s (%s)%s\n",
                set.label.c_str(), set.best.size() - missing, set.best.size(),
                hardware_key(hw).c_str(), set.path.c_str(),
                missing ? "; the others get the default schedule" : "");
  }
  std::fflush(stdout);
}

// True when every output is within tolerance of the reference; else prints what differs.
bool verify_outputs(const Graph& g, const std::vector<Tensor>& outputs,
                    const std::vector<Tensor>& ref, const RunOptions& o, const std::string& which) {
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
      which.c_str(), pass ? "PASS" : "FAIL", worst, wv.name.c_str(), type_str(wv).c_str(), o.atol,
      o.rtol);
  if (!pass) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: output '%s'%s differs from the reference interpreter\n",
                 wv.name.c_str(), which.c_str());
  }
  return pass;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The lowest of the turns' medians: per instance and end to end.
Timing best_of_turns(const std::vector<Timing>& turns) {
  Timing r = turns.front();
  for (size_t k = 1; k < turns.size(); k++) {
    for (size_t i = 0; i < r.instance_ms.size(); i++)
      r.instance_ms[i] = std::min(r.instance_ms[i], turns[k].instance_ms[i]);
    r.end_to_end_ms = std::min(r.end_to_end_ms, turns[k].end_to_end_ms);
    r.repeat += turns[k].repeat;
  }
  return r;
}

// Per task and set: the median ms per instance (sets[0] is the default schedules), the speedup
// of each set over the default; then the sums. Also the rows of --csv.
std::string comparison_table(const Partition& p, const std::vector<ScheduleSet>& sets,
                             const std::vector<Timing>& t, std::vector<std::string>* csv) {
  const size_t nt = p.tasks.size(), ns = sets.size();
  std::vector<std::vector<std::vector<double>>> ms(ns, std::vector<std::vector<double>>(nt));
  for (size_t s = 0; s < ns; s++)
    for (size_t k = 0; k < p.instances.size(); k++)
      ms[s][p.instances[k].task].push_back(t[s].instance_ms[k]);
  std::string out;
  char cell[256];
  std::snprintf(cell, sizeof cell, "%4s  %-24s %9s", "task", "kind", "instances");
  out += cell;
  for (size_t s = 0; s < ns; s++) {
    std::snprintf(cell, sizeof cell, " %12.12s", (sets[s].label + " ms").c_str());
    out += cell;
    if (s > 0) out += "  speedup";
  }
  out += "\n";
  std::vector<double> sum(ns, 0);
  const std::vector<bool> all_views = view_only_tasks(p, t[0].view);
  for (size_t i = 0; i < nt; i++) {
    if (ms[0][i].empty()) continue;
    const std::string kind = p.tasks[i].sub.kind + (all_views[i] ? " (view)" : "");
    std::snprintf(cell, sizeof cell, "%4d  %-24.24s %9zu", p.tasks[i].id, kind.c_str(),
                  ms[0][i].size());
    out += cell;
    const double base = median_of(ms[0][i]);
    for (size_t s = 0; s < ns; s++) {
      const double v = median_of(ms[s][i]);
      sum[s] += v * (double)ms[s][i].size();
      std::snprintf(cell, sizeof cell, " %12.3f", v);
      out += cell;
      if (s > 0) {
        if (v > 0)
          std::snprintf(cell, sizeof cell, " %7.2fx", base / v);
        else  // a view: it does not run (runtime/memory_plan.h)
          std::snprintf(cell, sizeof cell, " %8s", base > 0 ? "-" : "view");
        out += cell;
      }
      std::snprintf(cell, sizeof cell, "%d,%s,%zu,%s,%.6f,%.4f", p.tasks[i].id,
                    p.tasks[i].sub.kind.c_str(), ms[s][i].size(), sets[s].label.c_str(), v,
                    v > 0 ? base / v : 0.0);
      csv->push_back(cell);
    }
    out += "\n";
  }
  std::snprintf(cell, sizeof cell, "%4s  %-24s %9zu", "", "sum", p.instances.size());
  out += cell;
  for (size_t s = 0; s < ns; s++) {
    std::snprintf(cell, sizeof cell, " %12.3f", sum[s]);
    out += cell;
    if (s > 0) {
      std::snprintf(cell, sizeof cell, " %7.2fx", sum[s] > 0 ? sum[0] / sum[s] : 0.0);
      out += cell;
    }
  }
  out += "  (ms per instance; sum: instances x median)\n";
  return out;
}

// --alone: per task, the in-model median per instance next to the same instance timed by itself
// (hot: in a row; cold: after every thread rewrote its share of 64 MiB, more than any last-level
// cache of this machine kind; cold+w: the same, then the instance's weights read back in; idle:
// after a 2 ms sleep, so the pool's workers have gone to sleep), then the sums.
std::string alone_table(const Partition& p, CompiledModel& m, const std::vector<Tensor>& inputs,
                        const Timing& in_model, int repeat) {
  AloneOptions hot, cold, cold_w, idle;
  hot.repeat = cold.repeat = cold_w.repeat = idle.repeat = repeat;
  cold.flush_bytes = cold_w.flush_bytes = kModelFlushBytes;
  cold_w.touch_constants = true;
  idle.pause_us = 2000;
  std::fprintf(stderr, "timing %zu instances alone, cold and idle...\n", p.instances.size());
  const std::vector<std::vector<double>> t = {
      in_model.instance_ms, m.time_alone(inputs, hot), m.time_alone(inputs, cold),
      m.time_alone(inputs, cold_w), m.time_alone(inputs, idle)};
  // total[c][task]: column c's ms summed over the task's instances; count[task]: instances.
  const size_t nt = p.tasks.size();
  std::vector<std::vector<double>> total(t.size(), std::vector<double>(nt, 0.0));
  std::vector<size_t> count(nt, 0);
  for (size_t k = 0; k < p.instances.size(); k++) {
    count[p.instances[k].task]++;
    for (size_t c = 0; c < t.size(); c++) total[c][p.instances[k].task] += t[c][k];
  }
  std::string out;
  char cell[256];
  std::snprintf(cell, sizeof cell, "%4s  %-24s %9s %10s %10s %10s %10s %10s %9s\n", "task", "kind",
                "instances", "in-model", "alone", "cold", "cold+w", "idle", "in/alone");
  out += cell;
  auto row = [&](const char* id, const char* kind, size_t n, const std::vector<double>& v) {
    std::snprintf(cell, sizeof cell, "%4s  %-24.24s %9zu", id, kind, n);
    out += cell;
    for (double x : v) {
      std::snprintf(cell, sizeof cell, " %10.3f", x);
      out += cell;
    }
    std::snprintf(cell, sizeof cell, " %8.2fx\n", v[1] > 0 ? v[0] / v[1] : 0.0);
    out += cell;
  };
  std::vector<double> sum(t.size(), 0.0);
  for (size_t i = 0; i < nt; i++) {
    if (count[i] == 0) continue;
    std::vector<double> v;
    for (size_t c = 0; c < t.size(); c++) {
      v.push_back(total[c][i]);
      sum[c] += total[c][i];
    }
    row(std::to_string(p.tasks[i].id).c_str(), p.tasks[i].sub.kind.c_str(), count[i], v);
  }
  row("", "sum", p.instances.size(), sum);
  out +=
      "  (ms summed over each task's instances, each a median; alone: the instance run by "
      "itself in a row; cold: after every thread rewrote its share of 64 MiB; cold+w: the same, "
      "then its weights read back in; idle: after a 2 ms sleep)\n";
  return out;
}

void write_csv(const std::string& path, const std::vector<ScheduleSet>& sets,
               const std::vector<Timing>& t, std::vector<std::string> rows) {
  std::ofstream f(path);
  TLM_USER_CHECK(f.good()) << "--csv: cannot write " << path;
  f << "task,kind,instances,schedules,ms,speedup_over_default\n";
  for (const std::string& r : rows) f << r << "\n";
  for (size_t s = 0; s < sets.size(); s++)
    f << "e2e,model,1," << sets[s].label << "," << t[s].end_to_end_ms << ","
      << t[0].end_to_end_ms / t[s].end_to_end_ms << "\n";
  TLM_USER_CHECK(f.good()) << "--csv: cannot write " << path;
}

int run_run(const RunOptions& o) {
  // Read and check everything the user gave before the slow part.
  std::vector<ScheduleSet> sets(1);  // sets[0]: the default schedules
  for (const std::string& spec : o.schedules) {
    if (spec == "default") continue;
    sets.push_back(parse_schedule_set(spec, o));
    for (size_t k = 0; k + 1 < sets.size(); k++)
      TLM_USER_CHECK(sets[k].label != sets.back().label)
          << "--schedules: the name '" << sets.back().label << "' appears twice";
  }
  TLM_USER_CHECK(o.csv.empty() || sets.size() > 1)
      << "--csv writes the comparison of schedule sets: give --schedules too";
  if (!o.csv.empty()) {
    std::ofstream f(o.csv);
    TLM_USER_CHECK(f.good()) << "--csv: cannot write " << o.csv;
  }
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed, o.layout);
  std::vector<Tensor> inputs =
      o.inputs.empty() ? random_inputs(g, o.seed) : read_inputs(g, o.inputs);
  TLM_USER_CHECK(!g.outputs.empty()) << "model '" << o.model << "' has no outputs";
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fflush(stdout);
  const HardwareInfo hw = detect_hardware();
  for (ScheduleSet& s : sets) choose_schedules(s, p, hw, o.ranker_path);

  for (ScheduleSet& s : sets) {
    CompileOptions co;
    co.progress = true;
    co.reshape_views = co.reshape_views && s.reshape_views;
    if (s.kind != ScheduleSet::Default) co.schedule = best_schedule_hook(p, s.best, hw);
    const double t0 = now_s();
    s.compiled = std::make_unique<CompiledModel>(compile_model(g, p, co));
    s.compile_s = now_s() - t0;
    s.outputs = s.compiled->run(inputs);
  }
  const bool several = sets.size() > 1;
  auto which = [&](const ScheduleSet& s) {
    return several ? " (" + s.label + " schedules)" : std::string();
  };

  if (o.verify) {
    std::vector<Tensor> ref = interpret(g, inputs);
    bool ok = true;
    for (const ScheduleSet& s : sets) ok = verify_outputs(g, s.outputs, ref, o, which(s)) && ok;
    if (!ok) return 1;
  } else {
    std::printf("verify: skipped (--no-verify)\n");
  }

  if (!several) {
    Timing t = sets[0].compiled->time(inputs, o.warmup, o.repeat);
    std::printf("\n%s", latency_table(p, t).c_str());
    std::printf("end-to-end: %.3f ms (median of %d runs after %d warm-up)\n", t.end_to_end_ms,
                t.repeat, o.warmup);
    if (o.alone)
      std::printf("\nin the model vs alone:\n%s",
                  alone_table(p, *sets[0].compiled, inputs, t, o.repeat).c_str());
  } else {
    // o.turns turns; within a turn every set runs repeat / turns times in a row, so that all
    // see the same machine (this VM's speed drifts within seconds; BENCHMARKS.md, session 40).
    // Each set's result is the lowest of its turns' medians, per instance and end to end.
    const int per_turn = std::max(1, o.repeat / o.turns);
    for (int turn = 0; turn < o.turns; turn++)
      for (ScheduleSet& s : sets)
        s.timings.push_back(s.compiled->time(inputs, turn == 0 ? o.warmup : 0, per_turn));
    std::vector<Timing> t;
    for (const ScheduleSet& s : sets) t.push_back(best_of_turns(s.timings));
    // Each turn's end-to-end median: a set slow in every turn is slow; one slow turn is the VM.
    std::string per = "turns (end-to-end median of each, ms):";
    for (const ScheduleSet& s : sets) {
      per += (&s == &sets[0] ? " " : "; ") + s.label;
      for (const Timing& x : s.timings) {
        char ms[32];
        std::snprintf(ms, sizeof ms, " %.3f", x.end_to_end_ms);
        per += ms;
      }
    }
    std::printf("%s\n", per.c_str());
    std::vector<std::string> rows;
    std::printf("\n%s", comparison_table(p, sets, t, &rows).c_str());
    char buf[160];
    std::snprintf(buf, sizeof buf, "end-to-end: default %.3f ms", t[0].end_to_end_ms);
    std::string e2e = buf;
    for (size_t s = 1; s < sets.size(); s++) {
      std::snprintf(buf, sizeof buf, ", %s %.3f ms: %.2fx", sets[s].label.c_str(),
                    t[s].end_to_end_ms, t[0].end_to_end_ms / t[s].end_to_end_ms);
      e2e += buf;
    }
    std::snprintf(buf, sizeof buf,
                  " (the lowest of %d medians of %d runs each, taking turns, "
                  "after %d warm-up)",
                  o.turns, per_turn, o.warmup);
    std::printf("%s%s\n", e2e.c_str(), buf);
    std::string compile = "compile:";
    for (size_t s = 0; s < sets.size(); s++) {
      std::snprintf(buf, sizeof buf, "%s %s %.1f s", s ? "," : "", sets[s].label.c_str(),
                    sets[s].compile_s);
      compile += buf;
    }
    std::printf("%s\n", compile.c_str());
    if (o.alone)
      for (size_t s = 0; s < sets.size(); s++)
        std::printf("\nin the model vs alone (%s schedules):\n%s", sets[s].label.c_str(),
                    alone_table(p, *sets[s].compiled, inputs, t[s], o.repeat).c_str());
    if (!o.csv.empty()) {
      write_csv(o.csv, sets, t, rows);
      std::printf("wrote %s\n", o.csv.c_str());
    }
  }
  std::printf("memory: %s\n", memory_plan_summary(sets[0].compiled->memory_plan()).c_str());

  if (!o.output.empty()) {
    write_tensor_proto_file(o.output, sets[0].outputs[0], g.value(g.outputs[0]).name);
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
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout);
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
  cmd->add_option("--turns", o->turns,
                  "with --schedules: the sets take this many turns of repeat/turns runs each; "
                  "each set's time is the lowest of its turns' medians")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--atol", o->atol, "absolute tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--rtol", o->rtol, "relative tolerance of the verification")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-verify", *no_verify, "skip the comparison with the reference interpreter");
  cmd->add_option("--schedules", o->schedules,
                  "schedule sets to compile, verify and time beside the default schedules, taking "
                  "turns (comma-separated or repeated): tlm (each task's program chosen by the "
                  "language model, no measurement), NAME=CKPT.ckpt (the same with that "
                  "checkpoint), NAME=RECORDS.jsonl (each task's best recorded program on this "
                  "machine), NAME=default (the default schedules again); a model set may end in "
                  "@MODE (its --zero-shot mode); any set may end "
                  "in @copies (its reshape tasks run as copies, not as views: an A/B knob)")
      ->delimiter(',');
  cmd->add_option("--zero-shot", o->zero_shot,
                  "how model sets choose each task's program without measurement: ranker (the "
                  "model's greedy program and the expert programs (and 32 of its samples for "
                  "untiled tasks), ranked by "
                  "the zero-shot ranker, --ranker), experts (only the expert programs, ranked by "
                  "the model), greedy (the model's greedy decoding), ranked (the most likely, as "
                  "the model scores whole programs, among its 4-wide beam and the expert "
                  "programs)")
      ->capture_default_str()
      ->check(CLI::IsMember(kZeroShotModeNames));
  cmd->add_option("--ranker", o->ranker_path,
                  "the zero-shot ranker of mode ranker (default: the shipped models/ranker.json)");
  cmd->add_option("--model", o->model_path,
                  "the checkpoint of the `tlm` schedule set (default: models/tlm.ckpt)");
  cmd->add_flag("--alone", o->alone,
                "after timing, time every task by itself too (hot, after a cache flush, after a "
                "flush with its weights read back in, after an idle pause) beside its in-model "
                "time: what running inside the model costs");
  cmd->add_option("--csv", o->csv,
                  "with --schedules: write the per-task and end-to-end table as CSV");
  return {cmd, [o, no_verify] {
            o->verify = !*no_verify;
            return run_run(*o);
          }};
}

}  // namespace tlm
