// The zero-shot ranker: a cost model trained ACROSS tasks (TenSet's pre-trained cost model, in
// the place the world model will take), so that with no measurement of a new task it can say
// which of the language model's candidates (its greedy program and the task's expert programs,
// tune/lm_search.h) will run fastest. The evolutionary search's cost model (cost_model.h) is
// trained per task on that task's own measurements; this one never sees the task it ranks.
//
//   ranker_data(records, exclude)   measured programs grouped per (task, machine, cache mode:
//                                   hot or as in a model, measure/records.h): each group's
//                                   programs as cross_task_features (space/features.h) with
//                                   their best median; error records kept as failures (label
//                                   0), autoscheduler markers and excluded (held-out) tasks
//                                   skipped. Latencies of different machines are never compared:
//                                   labels are relative within a group. Sittings of one machine
//                                   (measurements > 15 min apart) are scaled to the latest by the
//                                   programs they share (a machine's speed drifts between them).
//   Ranker::train(groups, o)        XGBoost, pairwise ranking within each group (rank:pairwise;
//                                   labels best / median in (0, 1], failures 0)
//   Ranker::save / Ranker::load     XGBoost's JSON model with our attributes (format, features
//                                   version, language version, the tasks it learned from); load
//                                   refuses another version or a damaged file with one message
//   Ranker::score(space, hw, ps)    higher = predicted faster; only the order within a task counts
//   evaluate_ranker(r, groups)      per group, how close the top-scored program comes to the
//                                   group's best (best / chosen), beside the first program
//                                   measured (for expert records: the fixed first expert) and the
//                                   average program, and time-weighted (sum of the best over sum
//                                   of the chosen: the big tasks count more): how the ranker is
//                                   measured without a machine
//   default_ranker_path()           models/ranker.json when present (as models/tlm.ckpt)
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "measure/records.h"
#include "space/space.h"

namespace tlm {

// Bump when the file's meaning changes (objective, labels, attributes).
constexpr int kRankerFormat = 1;

struct RankerGroup {
  std::string task_key, task_kind, hardware;
  std::string cache;                      // the records' cache mode (measure/records.h)
  std::vector<std::string> sentences;     // distinct programs, in the order first measured
  std::vector<std::vector<float>> x;      // cross_task_features of each
  std::vector<double> median_s;           // each one's best median; 0 = every measurement failed
};

struct RankerData {
  std::vector<RankerGroup> groups;  // in (task_key, hardware, cache) order
  int64_t records = 0;              // looked at
  int64_t skipped = 0;              // not a program of ours (autoscheduler markers, unparsable)
  int64_t excluded = 0;             // records of excluded (held-out) tasks
};
RankerData ranker_data(const std::vector<MeasureRecord>& records,
                       const std::set<std::string>& exclude_tasks);

struct RankerOptions {
  int rounds = 300;
  int max_depth = 6;
  double eta = 0.1;
  uint64_t seed = 0;
};

class Ranker {
 public:
  Ranker();
  ~Ranker();
  Ranker(Ranker&&) noexcept;
  Ranker& operator=(Ranker&&) noexcept;

  // Groups with at least two programs; UserError when none has (nothing to rank).
  static Ranker train(const std::vector<const RankerGroup*>& groups, const RankerOptions& o);
  // UserError naming the file: missing, not a ranker, another format / features / language
  // version.
  static Ranker load(const std::string& path);
  void save(const std::string& path) const;

  std::vector<float> score(const std::vector<std::vector<float>>& x) const;
  std::vector<float> score(const TaskSpace& space, const HardwareInfo& hw,
                           const std::vector<Program>& programs) const;
  // What it was trained on: "<groups> groups, <programs> programs" (from the file's attributes).
  const std::string& trained_on() const { return trained_on_; }
  // The tasks it learned from (hex_hash of their keys, support/hash.h): the held-out check.
  const std::set<std::string>& task_hashes() const { return task_hashes_; }

 private:
  void* booster_ = nullptr;  // BoosterHandle
  std::string trained_on_;
  std::set<std::string> task_hashes_;
};

struct RankerEval {
  int groups = 0;  // groups with >= 2 programs and at least one success
  // Means over the groups of best / chosen latency (1 = the best; a failed choice counts 0).
  double ranker = 0, first = 0, average = 0;
  double ranker_top1 = 0;  // fraction of groups where the ranker's choice is the best
  // Time-weighted, as a model made of these tasks would see it: sum of the best latencies /
  // sum of the chosen ones (a failed choice counts as the group's slowest program).
  double ranker_time = 0, first_time = 0;
  // With a ranker, per group evaluated: its choice.
  struct Choice {
    const RankerGroup* group;
    double rel;     // best / chosen latency (0: a failure)
    double lost_s;  // chosen - best latency (a failure: infinity)
  };
  std::vector<Choice> chosen;
};
// ranker may be null (only the baselines).
RankerEval evaluate_ranker(const Ranker* ranker, const std::vector<const RankerGroup*>& groups);

// models/ranker.json beside the build or in the source tree; "" when absent.
std::string default_ranker_path();

}  // namespace tlm
