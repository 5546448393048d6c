// `tlm ranker train --records FILE... -o RANKER.json`: the zero-shot ranker (tune/ranker.h), a
// cost model trained across the training tasks' measured programs (never a held-out task's), which
// `--zero-shot ranker` uses to choose among the language model's candidates with no measurement.
// Before the final fit on every group it reports a validation split: one task in --validate-every
// is left out, a ranker is fit on the rest and measured on them (how close its top-scored program
// comes to each task's best, beside the first program measured and the average one).
//
// --validate-on FILE... reports the same split on those records' groups alone (e.g. the expert
// programs: the candidates the zero-shot mode chooses among).
//
// `tlm ranker eval --ranker R --records FILE...`: the same numbers for a saved ranker on other
// records (e.g. the held-out models' expert-evolutionary records, which measure every expert
// program of every task); --worst N lists the N tasks where its choice loses most.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "loop/demonstrations.h"
#include "support/hash.h"
#include "tune/ranker.h"

namespace tlm {
namespace {

struct RankerCliOptions {
  std::vector<std::string> records;
  std::vector<std::string> validate_on;
  int worst = 0;
  std::string out;
  std::string ranker;
  int validate_every = 5;  // 0: no validation split
  RankerOptions r;
};

void print_eval(const char* what, const RankerEval& e, bool with_ranker) {
  std::printf("%s: %d tasks; best / chosen latency, mean over tasks:", what, e.groups);
  if (with_ranker)
    std::printf(" ranker %.3f (the best in %.0f%%),", e.ranker, 100.0 * e.ranker_top1);
  std::printf(" first measured %.3f, average program %.3f\n", e.first, e.average);
  std::printf("  time-weighted (sum of best / sum of chosen):");
  if (with_ranker) std::printf(" ranker %.3f,", e.ranker_time);
  std::printf(" first measured %.3f\n", e.first_time);
}

RankerData load_data(const std::vector<std::string>& files, bool exclude_heldout) {
  const std::vector<MeasureRecord> records = load_record_files(files);
  std::set<std::string> exclude;
  if (exclude_heldout) exclude = heldout_task_keys();
  RankerData d = ranker_data(records, exclude);
  size_t programs = 0;
  for (const RankerGroup& g : d.groups) programs += g.x.size();
  std::printf("ranker: %lld records -> %zu task-machine groups, %zu distinct programs (%lld not "
              "programs of ours, %lld of held-out tasks left out)\n",
              (long long)d.records, d.groups.size(), programs, (long long)d.skipped,
              (long long)d.excluded);
  std::fflush(stdout);
  return d;
}

std::vector<const RankerGroup*> all_of(const RankerData& d) {
  std::vector<const RankerGroup*> v;
  for (const RankerGroup& g : d.groups) v.push_back(&g);
  return v;
}

// The tasks where the ranker's choice loses the most time: the time lost, best / chosen, the
// machine, the task.
void print_worst(const RankerEval& e, int n) {
  std::vector<RankerEval::Choice> v = e.chosen;
  std::stable_sort(v.begin(), v.end(), [](const RankerEval::Choice& a, const RankerEval::Choice& b) {
    return a.lost_s > b.lost_s;
  });
  for (int i = 0; i < n && i < (int)v.size(); i++) {
    const RankerGroup& g = *v[i].group;
    // The task's anchor: its first operation line ("%0 = ...").
    const size_t at = g.task_key.find("%0 = ");
    const std::string op = at == std::string::npos
                               ? g.task_key.substr(0, 100)
                               : g.task_key.substr(at, g.task_key.find('\n', at) - at);
    std::printf("  %8.3f ms  %.3f  %3zu programs  %s  %s  %s\n", 1e3 * v[i].lost_s, v[i].rel,
                g.x.size(), g.hardware.substr(g.hardware.rfind('=') + 1).c_str(),
                g.task_kind.c_str(), op.c_str());
  }
}

// One task in `every` by a hash of its key (every machine's group of a task on the same side).
bool in_validation(const RankerGroup& g, const RankerCliOptions& o) {
  return (fnv1a(g.task_key) + o.r.seed) % (uint64_t)o.validate_every == 0;
}

int run_train(const RankerCliOptions& o) {
  RankerData d = load_data(o.records, true);
  // Read before any fit: a bad file fails now, not after minutes of boosting.
  const RankerData on = o.validate_on.empty() ? RankerData{} : load_data(o.validate_on, true);
  if (o.validate_every > 0) {
    std::vector<const RankerGroup*> train, val;
    for (const RankerGroup& g : d.groups) (in_validation(g, o) ? val : train).push_back(&g);
    if (!val.empty() && !train.empty()) {
      Ranker r = Ranker::train(train, o.r);
      print_eval("validation (tasks left out of this fit)", evaluate_ranker(&r, val), true);
      print_eval("training tasks (fit on them)", evaluate_ranker(&r, train), true);
      if (!o.validate_on.empty()) {
        std::vector<const RankerGroup*> on_train, on_val;
        for (const RankerGroup& g : on.groups) (in_validation(g, o) ? on_val : on_train).push_back(&g);
        print_eval("  --validate-on, validation tasks", evaluate_ranker(&r, on_val), true);
        print_eval("  --validate-on, training tasks", evaluate_ranker(&r, on_train), true);
      }
    }
  }
  Ranker r = Ranker::train(all_of(d), o.r);
  r.save(o.out);
  std::printf("ranker: trained on %s; wrote %s\n", r.trained_on().c_str(), o.out.c_str());
  return 0;
}

int run_eval(const RankerCliOptions& o) {
  Ranker r = Ranker::load(o.ranker.empty() ? default_ranker_path() : o.ranker);
  RankerData d = load_data(o.records, false);
  TLM_USER_CHECK(!d.groups.empty())
      << "ranker eval: no measured program of ours in " << o.records.size()
      << " records file(s): nothing to evaluate";
  const RankerEval e = evaluate_ranker(&r, all_of(d));
  print_eval("eval", e, true);
  if (o.worst > 0) {
    std::printf("where its choice loses most (time lost, best / chosen latency, programs, machine, "
                "task):\n");
    print_worst(e, o.worst);
  }
  return 0;
}

}  // namespace

Command add_ranker_command(CLI::App& app) {
  auto o = std::make_shared<RankerCliOptions>();
  auto which = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "ranker",
      "the zero-shot ranker: a cost model trained across tasks that chooses among the language "
      "model's candidates with no measurement (`--zero-shot ranker`)");
  cmd->require_subcommand(1);
  CLI::App* train = cmd->add_subcommand(
      "train", "fit it on measurement records (held-out tasks left out), report a validation "
               "split, write RANKER.json");
  train->add_option("--records", o->records, "records files (.jsonl or .jsonl.gz)")
      ->required()
      ->take_all();
  train->add_option("-o,--out", o->out, "the ranker to write (.json)")->required();
  train->add_option("--validate-every", o->validate_every,
                    "leave one task in N out for the validation report (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  train->add_option("--validate-on", o->validate_on,
                    "also report the validation split on these records' tasks alone (e.g. the "
                    "expert programs: the zero-shot mode's candidates)")
      ->take_all();
  train->add_option("--rounds", o->r.rounds, "boosting rounds")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  train->add_option("--max-depth", o->r.max_depth, "tree depth")
      ->capture_default_str()
      ->check(CLI::Range(1, 20));
  train->add_option("--seed", o->r.seed, "validation split and XGBoost's seed")
      ->capture_default_str();
  train->callback([which] { *which = "train"; });
  CLI::App* eval = cmd->add_subcommand(
      "eval", "how close a ranker's choice comes to each task's best in some records");
  eval->add_option("--ranker", o->ranker, "the ranker (default: the shipped models/ranker.json)");
  eval->add_option("--records", o->records, "records files (.jsonl or .jsonl.gz)")
      ->required()
      ->take_all();
  eval->add_option("--worst", o->worst, "list the N tasks where its choice loses most")
      ->check(CLI::Range(0, 100000));
  eval->callback([which] { *which = "eval"; });
  return {cmd, [o, which] {
            if (*which == "eval") return run_eval(*o);
            const bool json = o->out.size() > 5 && o->out.rfind(".json") == o->out.size() - 5;
            TLM_USER_CHECK(json) << "ranker train: -o must name a .json file, not '" << o->out
                                 << "'";
            return run_train(*o);
          }};
}

}  // namespace tlm
