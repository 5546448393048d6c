// Ranker over XGBoost's C API (the same library as the per-task cost model): rank:pairwise with
// one query group per (task, machine), saved as XGBoost JSON whose attributes say what it is.
#include "tune/ranker.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include "language/sentence.h"
#include "measure/harness.h"
#include "model/tlm_model.h"
#include "space/features.h"
#include "support/error.h"
#include "support/hash.h"
#include "tune/xgb.h"

namespace tlm {
namespace {

constexpr const char* kKindAttr = "tlm_kind";
constexpr const char* kKindValue = "zero-shot ranker";

std::string get_attr(void* booster, const char* key) {
  const char* out = nullptr;
  int ok = 0;
  if (XGBoosterGetAttr(booster, key, &out, &ok) != 0 || !ok || !out) return "";
  return out;
}

// Labels within a group: best / median, failures 0.
std::vector<float> group_labels(const RankerGroup& g) {
  double best = INFINITY;
  for (double m : g.median_s)
    if (m > 0) best = std::min(best, m);
  std::vector<float> y;
  for (double m : g.median_s) y.push_back(m > 0 ? (float)(best / m) : 0.f);
  return y;
}

// Sittings. The same programs on the same kind of machine run 2-25% faster or slower from one
// sitting to the next (BENCHMARKS.md), so a program measured only in a slow sitting would look
// worse than one measured in a fast one. Within a group, measurements more than kSittingGapMs
// apart belong to different sittings; going from the latest sitting back, each older one's
// latencies are scaled by the geometric mean ratio (later / older) over the programs measured in
// both, when at least kSittingBridge were (else left as they are); a program's latency is then
// its best scaled median.
constexpr int64_t kSittingGapMs = 15 * 60 * 1000;
constexpr size_t kSittingBridge = 3;

std::map<std::string, double> calibrated_best(
    const std::map<std::string, std::vector<std::pair<int64_t, double>>>& meas) {
  std::vector<int64_t> times;
  for (const auto& [sentence, ms] : meas)
    for (const auto& [t, m] : ms) times.push_back(t);
  std::sort(times.begin(), times.end());
  std::vector<int64_t> starts;  // each sitting's first timestamp
  for (size_t i = 0; i < times.size(); i++)
    if (i == 0 || times[i] - times[i - 1] > kSittingGapMs) starts.push_back(times[i]);
  // Each sitting's best per program, in one pass.
  std::vector<std::map<std::string, double>> sittings(starts.size());
  for (const auto& [sentence, ms] : meas)
    for (const auto& [t, m] : ms) {
      const size_t s = std::upper_bound(starts.begin(), starts.end(), t) - starts.begin() - 1;
      auto [it, fresh] = sittings[s].emplace(sentence, m);
      if (!fresh) it->second = std::min(it->second, m);
    }
  std::map<std::string, double> best;  // calibrated, over the sittings done so far
  for (auto here = sittings.rbegin(); here != sittings.rend(); ++here) {
    double log_sum = 0;
    size_t bridge = 0;
    for (const auto& [sentence, m] : *here)
      if (auto it = best.find(sentence); it != best.end()) {
        log_sum += std::log(it->second / m);
        bridge++;
      }
    const double scale = bridge >= kSittingBridge ? std::exp(log_sum / (double)bridge) : 1.0;
    for (const auto& [sentence, m] : *here) {
      auto [it, fresh] = best.emplace(sentence, m * scale);
      if (!fresh) it->second = std::min(it->second, m * scale);
    }
  }
  return best;
}

}  // namespace

RankerData ranker_data(const std::vector<MeasureRecord>& records,
                       const std::set<std::string>& exclude_tasks) {
  RankerData d;
  // Per (task, machine), per distinct sentence: its valid measurements (time, median); its
  // latency is the best after calibrating the sittings (0 while only failures).
  struct Acc {
    std::string kind;
    std::vector<std::string> order;
    std::map<std::string, std::vector<std::pair<int64_t, double>>> meas;
    std::map<std::string, double> best;
  };
  // Keyed (task, machine, cache mode): hot and model-cache latencies are never compared.
  std::map<std::tuple<std::string, std::string, std::string>, Acc> acc;
  for (const MeasureRecord& r : records) {
    d.records++;
    if (exclude_tasks.count(r.task_key)) {
      d.excluded++;
      continue;
    }
    if (r.sentence.empty()) {
      d.skipped++;
      continue;
    }
    Acc& a = acc[{r.task_key, r.hardware, r.cache}];
    a.kind = r.task_kind;
    auto it = a.meas.find(r.sentence);
    if (it == a.meas.end()) {
      a.order.push_back(r.sentence);
      it = a.meas.emplace(r.sentence, std::vector<std::pair<int64_t, double>>{}).first;
    }
    if (r.ok() && r.median_s > 0 && std::isfinite(r.median_s))
      it->second.push_back({r.timestamp_ms, r.median_s});
  }
  for (auto& [key, a] : acc) a.best = calibrated_best(a.meas);
  for (auto& [key, a] : acc) {
    // The space comes from the group's first sentence that parses (markers and foreign text do
    // not); every other sentence must be a program of the same task and machine.
    std::unique_ptr<ParsedSentence> parsed;
    size_t first = 0;
    for (; first < a.order.size() && !parsed; first++) {
      try {
        parsed = std::make_unique<ParsedSentence>(parse_sentence(a.order[first]));
      } catch (const UserError&) {
        d.skipped++;
      }
    }
    if (!parsed) continue;
    TaskPrinter printer(parsed->sub, parsed->hw, parsed->space);
    RankerGroup g;
    g.task_key = std::get<0>(key), g.hardware = std::get<1>(key), g.task_kind = a.kind;
    g.cache = std::get<2>(key);
    for (size_t i = first - 1; i < a.order.size(); i++) {
      Program p;
      if (!program_from_sentence(printer, a.order[i], &p)) {
        d.skipped++;
        continue;
      }
      g.sentences.push_back(a.order[i]);
      g.x.push_back(cross_task_features(parsed->space, p, parsed->hw));
      g.median_s.push_back(a.best[a.order[i]]);
    }
    if (!g.sentences.empty()) d.groups.push_back(std::move(g));
  }
  return d;
}

Ranker::Ranker() = default;
Ranker::~Ranker() {
  if (booster_) XGBoosterFree(booster_);
}
Ranker::Ranker(Ranker&& o) noexcept
    : booster_(o.booster_),
      trained_on_(std::move(o.trained_on_)),
      task_hashes_(std::move(o.task_hashes_)) {
  o.booster_ = nullptr;
}
Ranker& Ranker::operator=(Ranker&& o) noexcept {
  if (this != &o) {
    if (booster_) XGBoosterFree(booster_);
    booster_ = o.booster_, o.booster_ = nullptr;
    trained_on_ = std::move(o.trained_on_);
    task_hashes_ = std::move(o.task_hashes_);
  }
  return *this;
}

Ranker Ranker::train(const std::vector<const RankerGroup*>& groups, const RankerOptions& o) {
  std::vector<std::vector<float>> x;
  std::vector<float> y;
  std::vector<unsigned> sizes;
  for (const RankerGroup* g : groups) {
    if (g->x.size() < 2) continue;
    std::vector<float> l = group_labels(*g);
    x.insert(x.end(), g->x.begin(), g->x.end());
    y.insert(y.end(), l.begin(), l.end());
    sizes.push_back((unsigned)g->x.size());
  }
  TLM_USER_CHECK(!sizes.empty()) << "ranker: no task has two measured programs to compare ("
                                 << groups.size() << " task-machine groups)";
  xgb::Matrix m(x, kCrossTaskFeatures);
  xgb::check(XGDMatrixSetFloatInfo(m.get(), "label", y.data(), y.size()), "labels");
  xgb::check(XGDMatrixSetUIntInfo(m.get(), "group", sizes.data(), sizes.size()), "groups");
  Ranker r;
  DMatrixHandle dm = m.get();
  xgb::check(XGBoosterCreate(&dm, 1, &r.booster_), "booster");
  const std::pair<const char*, std::string> params[] = {
      {"objective", "rank:pairwise"},
      {"max_depth", std::to_string(o.max_depth)},
      {"eta", std::to_string(o.eta)},
      {"nthread", "1"},  // as the cost model: the tuner forks measurement workers
      {"verbosity", "0"},
      {"seed", std::to_string(o.seed)},
  };
  for (const auto& [k, v] : params) xgb::check(XGBoosterSetParam(r.booster_, k, v.c_str()), k);
  for (int i = 0; i < o.rounds; i++) xgb::check(XGBoosterUpdateOneIter(r.booster_, i, dm), "update");
  r.task_hashes_.clear();
  r.trained_on_ = std::to_string(sizes.size()) + " groups, " + std::to_string(x.size()) + " programs";
  std::set<std::string> tasks;  // what the held-out check reads back (task_hashes())
  for (const RankerGroup* g : groups)
    if (g->x.size() >= 2) tasks.insert(hex_hash(g->task_key));
  std::string joined;
  for (const std::string& h : tasks) joined += (joined.empty() ? "" : ",") + h;
  const std::pair<const char*, std::string> attrs[] = {
      {kKindAttr, kKindValue},
      {"tlm_ranker_format", std::to_string(kRankerFormat)},
      {"tlm_features_version", std::to_string(kCrossTaskFeaturesVersion)},
      {"tlm_language_version", std::to_string(kLanguageVersion)},
      {"tlm_trained_on", r.trained_on_},
      {"tlm_task_hashes", joined},
  };
  for (const auto& [k, v] : attrs) xgb::check(XGBoosterSetAttr(r.booster_, k, v.c_str()), k);
  return r;
}

void Ranker::save(const std::string& path) const {
  TLM_CHECK(booster_) << "save of an untrained ranker";
  const std::string tmp = path + ".tmp.json";  // XGBoost picks JSON by the name
  TLM_USER_CHECK(XGBoosterSaveModel(booster_, tmp.c_str()) == 0)
      << "cannot write the ranker to " << path << ": " << XGBGetLastError();
  TLM_USER_CHECK(std::rename(tmp.c_str(), path.c_str()) == 0) << "cannot write " << path;
}

Ranker Ranker::load(const std::string& path) {
  TLM_USER_CHECK(std::ifstream(path).good()) << "ranker " << path << ": cannot read the file";
  TLM_USER_CHECK(path.size() > 5 && path.compare(path.size() - 5, 5, ".json") == 0)
      << "ranker " << path << ": expected a .json file written by `tlm ranker train`";
  Ranker r;
  xgb::check(XGBoosterCreate(nullptr, 0, &r.booster_), "booster");
  TLM_USER_CHECK(XGBoosterLoadModel(r.booster_, path.c_str()) == 0)
      << "ranker " << path << ": not a readable XGBoost model (damaged file?): "
      << xgb::first_line(XGBGetLastError());
  TLM_USER_CHECK(get_attr(r.booster_, kKindAttr) == kKindValue)
      << "ranker " << path << ": an XGBoost model, but not one written by `tlm ranker train`";
  const auto need = [&](const char* key, int want, const char* what) {
    const std::string got = get_attr(r.booster_, key);
    TLM_USER_CHECK(got == std::to_string(want))
        << "ranker " << path << " has " << what << " " << (got.empty() ? "?" : got)
        << ", this build " << want << ": re-train it with `tlm ranker train`";
  };
  need("tlm_ranker_format", kRankerFormat, "file format");
  need("tlm_features_version", kCrossTaskFeaturesVersion, "features version");
  need("tlm_language_version", kLanguageVersion, "tensor-language version");
  xgb::check(XGBoosterSetParam(r.booster_, "nthread", "1"), "nthread");
  r.trained_on_ = get_attr(r.booster_, "tlm_trained_on");
  std::stringstream ss(get_attr(r.booster_, "tlm_task_hashes"));
  for (std::string h; std::getline(ss, h, ',');)
    if (!h.empty()) r.task_hashes_.insert(h);
  return r;
}

std::vector<float> Ranker::score(const std::vector<std::vector<float>>& x) const {
  TLM_CHECK(booster_) << "score with an untrained ranker";
  if (x.empty()) return {};
  xgb::Matrix m(x, kCrossTaskFeatures);
  bst_ulong n = 0;
  const float* out = nullptr;
  xgb::check(XGBoosterPredict(booster_, m.get(), 0, 0, 0, &n, &out), "predict");
  TLM_CHECK(n == x.size()) << "XGBoost returned " << n << " scores for " << x.size();
  return std::vector<float>(out, out + n);
}

std::vector<float> Ranker::score(const TaskSpace& space, const HardwareInfo& hw,
                                 const std::vector<Program>& programs) const {
  std::vector<std::vector<float>> x;
  for (const Program& p : programs) x.push_back(cross_task_features(space, p, hw));
  return score(x);
}

RankerEval evaluate_ranker(const Ranker* ranker, const std::vector<const RankerGroup*>& groups) {
  RankerEval e;
  double best_sum = 0, first_sum = 0, ranker_sum = 0;
  for (const RankerGroup* g : groups) {
    std::vector<float> rel = group_labels(*g);  // best / median, failures 0
    if (rel.size() < 2 || *std::max_element(rel.begin(), rel.end()) <= 0) continue;
    e.groups++;
    e.first += rel[0];
    double avg = 0;
    for (float v : rel) avg += v;
    e.average += avg / (double)rel.size();
    double best = INFINITY, slowest = 0;
    for (double m : g->median_s)
      if (m > 0) best = std::min(best, m), slowest = std::max(slowest, m);
    const auto time_of = [&](size_t i) { return g->median_s[i] > 0 ? g->median_s[i] : slowest; };
    best_sum += best;
    first_sum += time_of(0);
    if (ranker) {
      std::vector<float> s = ranker->score(g->x);
      const size_t top = std::max_element(s.begin(), s.end()) - s.begin();  // first of ties
      ranker_sum += time_of(top);
      e.ranker += rel[top];
      e.chosen.push_back({g, rel[top], rel[top] > 0 ? g->median_s[top] - best : INFINITY});
      e.ranker_top1 += rel[top] >= 1.f ? 1 : 0;
    }
  }
  if (e.groups) {
    e.first /= e.groups, e.average /= e.groups, e.ranker /= e.groups, e.ranker_top1 /= e.groups;
    e.first_time = best_sum / first_sum;
    e.ranker_time = ranker_sum > 0 ? best_sum / ranker_sum : 0;
  }
  return e;
}

std::string default_ranker_path() { return shipped_path("ranker.json"); }

}  // namespace tlm
