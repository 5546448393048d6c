// Demonstrations from records (demonstrations.h).
#include "loop/demonstrations.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "language/workloads.h"
#include "lower/autoschedule.h"
#include "support/error.h"
#include "support/hash.h"

namespace tlm {

DemoWeighting parse_demo_weighting(const std::string& s) {
  if (s == "uniform") return DemoWeighting::Uniform;
  if (s == "speed") return DemoWeighting::Speed;
  TLM_USER_ERROR() << "--weighting must be 'uniform' or 'speed', got '" << s << "'";
}

const char* demo_weighting_name(DemoWeighting w) {
  return w == DemoWeighting::Speed ? "speed" : "uniform";
}

std::vector<Demonstration> DemoSet::demonstrations() const {
  std::vector<Demonstration> out;
  for (const ChosenDemo& d : demos) out.push_back(d.demo);
  return out;
}

std::vector<std::string> DemoSet::task_hashes() const {
  std::set<std::string> h;
  for (const ChosenDemo& c : demos) h.insert(hex_hash(c.task_key));
  return {h.begin(), h.end()};
}

std::string DemoSet::summary() const {
  std::ostringstream os;
  int64_t groups = 0;
  for (const auto& [hw, n] : groups_per_hardware) groups += n;
  os << demos.size() << " demonstrations of " << groups << " (task, machine) pairs from " << records
     << " records (skipped: " << errors << " errors, " << markers << " autoscheduler markers, "
     << excluded << " of held-out or unselected tasks, " << other_hardware << " of other machines)";
  for (const auto& [hw, n] : groups_per_hardware) os << "; " << hw << ": " << n << " tasks";
  return os.str();
}

DemoSet select_demonstrations(const std::vector<MeasureRecord>& records, const DemoOptions& o) {
  TLM_USER_CHECK(o.top_k >= 1) << "--top-k must be at least 1, got " << o.top_k;
  TLM_USER_CHECK(o.max_copies >= 1) << "max_copies must be at least 1";
  DemoSet set;
  // Per (task, hardware): the record indices of error-free programs, then ranked.
  std::map<std::pair<std::string, std::string>, std::vector<size_t>> groups;
  for (size_t i = 0; i < records.size(); i++) {
    const MeasureRecord& r = records[i];
    set.records++;
    if (!r.ok() || !std::isfinite(r.median_s) || r.median_s <= 0) {
      set.errors++;
    } else if (is_autoscheduler_marker(r.sentence)) {
      set.markers++;
    } else if (o.exclude_tasks.count(r.task_key) ||
               (!o.include_tasks.empty() && !o.include_tasks.count(r.task_key))) {
      set.excluded++;
    } else if (!o.hardware.empty() &&
               std::find(o.hardware.begin(), o.hardware.end(), r.hardware) == o.hardware.end()) {
      set.other_hardware++;
    } else {
      groups[{r.task_key, r.hardware}].push_back(i);
    }
  }
  for (auto& [key, idx] : groups) {
    // Lowest median first; ties: the earlier record (stable on file order, then timestamp).
    std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
      const MeasureRecord &x = records[a], &y = records[b];
      if (x.median_s != y.median_s) return x.median_s < y.median_s;
      return x.timestamp_ms < y.timestamp_ms;
    });
    const double best = records[idx[0]].median_s;
    std::set<std::string> taken;  // re-measurements repeat a sentence: keep its best only
    for (size_t i : idx) {
      const MeasureRecord& r = records[i];
      if ((int)taken.size() >= o.top_k) break;
      if (!taken.insert(r.sentence).second) continue;
      ChosenDemo d;
      d.task_key = r.task_key;
      d.task_kind = r.task_kind;
      d.hardware = r.hardware;
      d.median_s = r.median_s;
      d.best_s = best;
      d.demo.sentence = r.sentence;
      d.demo.group = r.task_key + "@" + r.hardware;
      d.demo.copies = o.weighting == DemoWeighting::Speed
                          ? std::max(1, (int)std::lround(o.max_copies * best / r.median_s))
                          : 1;
      set.demos.push_back(std::move(d));
    }
    set.groups_per_hardware[key.second]++;
  }
  TLM_USER_CHECK(!set.demos.empty())
      << "no demonstration: the records hold no error-free program of a training task to "
         "fine-tune on ("
      << set.records << " records: " << set.errors << " errors, " << set.markers
      << " autoscheduler markers, " << set.excluded << " of held-out or unselected tasks, "
      << set.other_hardware
      << " of other machines). Measure programs of training tasks first "
         "(`tlm tune`, `tlm measure` or `tlm loop`)";
  return set;
}

std::vector<MeasureRecord> load_record_files(const std::vector<std::string>& paths) {
  std::vector<MeasureRecord> all;
  for (const std::string& p : paths) {
    std::vector<MeasureRecord> rs = load_records(p);
    all.insert(all.end(), std::make_move_iterator(rs.begin()), std::make_move_iterator(rs.end()));
  }
  return all;
}

std::set<std::string> heldout_task_keys() {
  std::set<std::string> keys;
  // Both forms of a held-out model's narrow pointwise convolutions (flattened or not: records
  // of either may exist), graph/passes.h.
  for (const std::string& spec : heldout_workloads())
    for (bool flat : {true, false})
      for (const Subgraph& sub : workload_tasks(spec, flat)) keys.insert(sub.key);
  return keys;
}

}  // namespace tlm
