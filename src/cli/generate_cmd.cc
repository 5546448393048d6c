// `tlm generate MODEL --task ID|all -n K`: programs for a task (or every task) of a model, written by the language
// model under the space's constraints (model/generate.h), printed as sentences (one per line, so
// `tlm measure` and `tlm show` read them). Every sentence is parsed back and re-validated before
// it is printed.
#include <cstdio>
#include <fstream>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "model/generate.h"
#include "model/tlm_model.h"
#include "partition/partition.h"
#include "support/threads.h"

namespace tlm {
namespace {

struct GenerateCliOptions {
  std::string model;
  std::string layout = "auto";  // --layout: as `tlm extract` numbers the tasks (a suffix kept)
  std::vector<std::string> dims;
  uint64_t seed = 0;
  std::string task;  // an id, or "all"
  std::string checkpoint;
  std::string out;       // empty: stdout
  std::string hardware;  // empty: this machine
  bool expert = false;   // the space's expert programs instead of the model's
  GenerateOptions gen;
};

// One task's programs (the model's, or its expert programs), each parsed back and re-validated,
// written to out; false when one was not.
bool generate_for_task(const Task& task, const HardwareInfo& hw, const TlmModel* m,
                       const GenerateCliOptions& o, std::FILE* out) {
  LoweredTask lt = lower_subgraph(task.sub);
  TaskSpace space = build_space(lt, hw);
  TaskPrinter printer(task.sub, hw, space);
  std::vector<GeneratedProgram> progs;
  GenerateStats st;
  std::string source = "the space's expert programs";
  if (o.expert) {
    for (Program& p : expert_programs(space, hw)) progs.push_back({std::move(p)});
  } else {
    source = "checkpoint " + m->info.loaded_from;
    progs = generate_programs(*m->lm, m->tok, printer, o.gen, &st);
  }
  int valid = 0;
  for (const GeneratedProgram& gp : progs) {
    std::string text = printer.text(gp.program);
    ParsedSentence ps = parse_sentence(text);  // throws if the sentence were not valid
    valid += ps.program == gp.program;
    std::fprintf(out, "%s\n", text.c_str());
  }
  std::fprintf(stderr,
               "generate: task %d (%s) on %s: %zu programs (%d valid) from %lld decoded "
               "sequences (%lld duplicates) in %.2f s = %.1f programs/s; %s\n",
               task.id, task.sub.kind.c_str(), hardware_key(hw).c_str(), progs.size(), valid,
               (long long)st.sequences, (long long)st.duplicates, st.seconds,
               st.seconds > 0 ? progs.size() / st.seconds : 0.0, source.c_str());
  return valid == (int)progs.size();
}

int run_generate(GenerateCliOptions& o) {
  set_model_threads(compute_threads());
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed, o.layout);
  Partition p = partition_graph(g);
  std::vector<const Task*> tasks;
  if (o.task == "all") {
    for (const Task& t : p.tasks) tasks.push_back(&t);
  } else {
    int id = -1;
    try {
      size_t used = 0;
      id = std::stoi(o.task, &used);
      if (used != o.task.size()) id = -1;
    } catch (const std::exception&) {
    }
    for (const Task& t : p.tasks)
      if (t.id == id) tasks.push_back(&t);
    TLM_USER_CHECK(!tasks.empty()) << "generate: the model has no task '" << o.task << "' (it has "
                                   << p.tasks.size()
                                   << " tasks, 0 to " << (int)p.tasks.size() - 1
                                   << "; `tlm extract` lists them; or --task all)";
  }
  HardwareInfo hw = o.hardware.empty() ? detect_hardware() : parse_hardware_key(o.hardware);
  if (o.expert && o.task != "all") {
    TaskSpace space = build_space(lower_subgraph(tasks[0]->sub), hw);
    TLM_USER_CHECK(!expert_programs(space, hw).empty())
        << "generate: task " << o.task << " (" << tasks[0]->sub.kind
        << ") has no expert programs (its space has a single program)";
  }
  o.gen.seed = o.seed;
  std::unique_ptr<TlmModel> m;
  if (!o.expert) m = std::make_unique<TlmModel>(load_model_or_default(o.checkpoint));
  std::FILE* out = stdout;
  if (!o.out.empty()) {
    out = std::fopen(o.out.c_str(), "w");
    TLM_USER_CHECK(out) << "generate: cannot write " << o.out;
  }
  bool ok = true;
  for (const Task* t : tasks) ok = generate_for_task(*t, hw, m.get(), o, out) && ok;
  if (out != stdout) {
    const bool closed = std::fclose(out) == 0;
    TLM_USER_CHECK(closed) << "generate: cannot write " << o.out;
  }
  return ok ? 0 : 1;
}

}  // namespace

Command add_generate_command(CLI::App& app) {
  auto o = std::make_shared<GenerateCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "generate",
      "write programs for one task with the language model (always valid: every value is "
      "chosen among the space's options) and print them as sentences");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout, "seed of the weights and of sampling");
  cmd->add_option("--task", o->task,
                  "task id (`tlm extract MODEL` lists them), or all (every task of the model; "
                  "with --expert, tasks without expert programs write nothing)")
      ->required();
  CLI::Option* n = cmd->add_option("-n", o->gen.n, "distinct programs to write")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  CLI::Option* model = cmd->add_option(
      "--model", o->checkpoint, "language-model checkpoint (default: the shipped models/tlm.ckpt)");
  CLI::Option* batch = cmd->add_option("--batch", o->gen.batch, "sequences decoded together")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  CLI::Option* temperature =
      cmd->add_option("--temperature", o->gen.temperature, "sampling temperature")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  CLI::Option* top_k =
      cmd->add_option("--top-k", o->gen.top_k, "sample among the k most likely values (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  CLI::Option* beam = cmd->add_option("--beam", o->gen.beam,
                  "beam search of this width instead of sampling (1: greedy, the most likely "
                  "program)")
      ->check(CLI::Range(1, 4096));
  // The expert programs are a fixed list: the model's flags would be silently ignored.
  cmd->add_flag("--expert", o->expert,
                "print the space's expert programs (register-blocked, written without the model "
                "or measurement) instead of the model's")
      ->excludes(n)
      ->excludes(model)
      ->excludes(batch)
      ->excludes(temperature)
      ->excludes(top_k)
      ->excludes(beam);
  cmd->add_option("--hardware", o->hardware, "hardware key to write for (default: this machine)");
  cmd->add_option("-o,--out", o->out, "write the sentences to this file instead of stdout");
  return {cmd, [o] { return run_generate(*o); }};
}

}  // namespace tlm
