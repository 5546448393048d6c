// Demonstration data (paper §5.3): from measurement records, the best programs of each task on
// each machine -- what the language model is fine-tuned to write. Machines differ (the best
// program on one CPU is not the best on another), so programs are ranked per (task, hardware)
// and latencies of different machines are never compared; the sentence's own hardware tokens
// tell the model which machine it writes for.
//
//   select_demonstrations(records, o)  per (task_key, hardware), the top_k distinct error-free
//                                      sentences by median latency (ties: the earlier record),
//                                      skipping error records, autoscheduler markers (no sentence
//                                      of ours) and held-out tasks; speed weighting repeats each
//                                      in proportion to best / its median. UserError, with the
//                                      counts, when nothing is left (a known crash of the
//                                      paper's own code)
//   load_record_files(paths)           every file's records, in order (records.h errors: another
//                                      records or language version is one message)
//   heldout_task_keys()                the keys of every task of the held-out workloads, which
//                                      must never become demonstrations
//
// Which is better, the single best program per task or the top few (weighted by speed)? Both are
// selectable (tlm finetune --top-k, --weighting); docs/finetune.md says how to compare them.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "measure/records.h"
#include "model/finetune.h"

namespace tlm {

enum class DemoWeighting {
  Uniform,  // every demonstration once
  Speed,    // copies = round(max_copies * best / median), at least 1
};
// "uniform" / "speed"; UserError for anything else.
DemoWeighting parse_demo_weighting(const std::string& s);
const char* demo_weighting_name(DemoWeighting w);

struct DemoOptions {
  int top_k = 1;  // distinct sentences per (task, hardware); the paper keeps the best one
  DemoWeighting weighting = DemoWeighting::Uniform;
  int max_copies = 4;                   // Speed: copies of each group's best
  std::vector<std::string> hardware;    // only these machines (empty: every machine)
  std::set<std::string> exclude_tasks;  // task keys never used (the held-out ones)
  std::set<std::string> include_tasks;  // when non-empty: only these task keys
};

struct ChosenDemo {
  Demonstration demo;  // group = task_key + "@" + hardware
  std::string task_key, task_kind, hardware;
  double median_s = 0, best_s = 0;  // this program's and its group's best
};

struct DemoSet {
  std::vector<ChosenDemo> demos;  // grouped, groups in (task_key, hardware) order, best first
  int64_t records = 0;            // records looked at
  int64_t errors = 0;             // skipped: error records (or a non-finite median)
  int64_t markers = 0;            // skipped: autoscheduler markers
  int64_t excluded = 0;           // skipped: held-out (or not included) tasks
  int64_t other_hardware = 0;     // skipped: machines not asked for
  std::map<std::string, int64_t> groups_per_hardware;
  std::vector<Demonstration> demonstrations() const;
  std::string summary() const;  // one line
  // hex_hash of every task key with a demonstration, sorted: stored in the fine-tuned checkpoint
  // (extra.finetune.task_hashes), so a benchmark can check mechanically that no evaluation task
  // was learned from (finetuned_task_hashes, model/tlm_model.h)
  std::vector<std::string> task_hashes() const;
};

DemoSet select_demonstrations(const std::vector<MeasureRecord>& records, const DemoOptions& o);

std::vector<MeasureRecord> load_record_files(const std::vector<std::string>& paths);

std::set<std::string> heldout_task_keys();

}  // namespace tlm
