// sample_dataset(): extract -> spaces -> sample -> shuffle -> write. Each phase is a parallel
// loop over independent items (workloads, tasks) whose results land in per-item slots, so the
// output never depends on the thread count.
//
// Shares: every task first gets an equal share of the requested sentences. A task whose space is
// smaller than its share (a reshape has a handful of programs) stops when draws keep repeating
// ("exhausted"); what it could not deliver is shared again among the others, round after round,
// until the total is reached or every task is exhausted.
#include "language/dataset.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>
#include <unordered_set>

#include "language/sentence.h"
#include "language/vocab.h"
#include "language/workloads.h"

namespace tlm {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestFormat = "tlm-sentences";
constexpr const char* kManifestFile = "manifest.json";
constexpr const char* kVocabFile = "vocab.json";
// A round of sampling gives up on a task after this many draws per sentence still owed (plus a
// constant for tiny shares): by then nearly every program of a small space has been seen.
constexpr int64_t kDrawsPerSentence = 20;
constexpr int64_t kExtraDraws = 1000;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs fn(i) for i in [0, n) on `threads` threads; rethrows the first exception.
template <typename F>
void parallel_for(size_t n, int threads, F fn) {
  std::atomic<size_t> next{0};
  std::exception_ptr error;
  std::mutex mu;
  auto work = [&] {
    for (size_t i; (i = next++) < n;) {
      try {
        fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        next = n;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, (int)n); t++) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Progress on stderr, at most every two seconds.
class Progress {
 public:
  Progress(bool on, const char* what, size_t total) : on_(on), what_(what), total_(total) {}
  void tick(size_t n = 1) {
    size_t done = done_ += n;
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (seconds_since(last_) < 2 && done < total_) return;
    last_ = Clock::now();
    std::fprintf(stderr, "sample: %s %zu/%zu (%.0fs)\n", what_, done, total_, seconds_since(t0_));
  }

 private:
  bool on_;
  const char* what_;
  size_t total_;
  std::atomic<size_t> done_{0};
  std::mutex mu_;
  Clock::time_point t0_ = Clock::now(), last_ = Clock::now();
};

struct WorkloadRow {
  std::string spec;
  int64_t tasks = 0, new_tasks = 0, heldout_tasks = 0;
};

struct TaskEntry {
  Subgraph sub;
  std::string error;  // non-empty: the space could not be built
  TaskSpace space;
  std::unique_ptr<TaskPrinter> printer;
  size_t length = 0;  // values per program
  std::mt19937_64 rng;
  std::unordered_set<std::string> seen;
  std::vector<int64_t> values;  // `count` programs, flattened
  int64_t count = 0;
  int64_t duplicates = 0;
  bool exhausted = false;
};

// Draws until the task holds `target` distinct programs or the round's draw budget is spent.
void sample_task(TaskEntry& t, int64_t target) {
  int64_t budget = (target - t.count) * kDrawsPerSentence + kExtraDraws;
  std::string packed(t.length * sizeof(int64_t), '\0');
  while (t.count < target) {
    if (budget-- <= 0) {
      t.exhausted = true;
      return;
    }
    Program p = sample_program(t.space, t.rng);
    TLM_CHECK(p.values.size() == t.length) << "sample_program returned a short program";
    std::memcpy(&packed[0], p.values.data(), packed.size());
    if (!t.seen.insert(packed).second) {
      t.duplicates++;
      continue;
    }
    t.values.insert(t.values.end(), p.values.begin(), p.values.end());
    t.count++;
  }
}

// Bounded uniform integer in [0, n) from a 64-bit generator (Lemire's method), so the shuffle is
// the same with every standard library.
uint64_t below(std::mt19937_64& rng, uint64_t n) {
  unsigned __int128 m = (unsigned __int128)rng() * n;
  uint64_t low = (uint64_t)m;
  if (low < n) {
    uint64_t threshold = -n % n;
    while (low < threshold) {
      m = (unsigned __int128)rng() * n;
      low = (uint64_t)m;
    }
  }
  return (uint64_t)(m >> 64);
}

std::string shard_name(int64_t k) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "shard-%05lld.txt", (long long)k);
  return buf;
}

void check_options(const SampleOptions& o) {
  TLM_USER_CHECK(!o.out_dir.empty()) << "sample: --out DIR is required";
  TLM_USER_CHECK(o.sentences >= 1) << "sample: --sentences must be at least 1";
  TLM_USER_CHECK(o.threads >= 1 && o.threads <= 1024) << "sample: --threads must be in [1, 1024]";
  TLM_USER_CHECK(o.shard_lines >= 1) << "sample: --shard-lines must be at least 1";
  TLM_USER_CHECK(!o.workloads.empty()) << "sample: no workloads given";
}

}  // namespace

std::string key_hash(const std::string& key) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)fnv1a(key));
  return buf;
}

SampleReport sample_dataset(const SampleOptions& o) {
  check_options(o);
  Clock::time_point t_start = Clock::now();
  SampleReport rep;
  HardwareInfo hw = o.hardware.empty() ? detect_hardware() : parse_hardware_key(o.hardware);
  std::vector<std::string> specs = expand_workloads(o.workloads);
  std::vector<std::string> heldout = heldout_workloads();
  if (o.exclude_heldout) {
    std::unordered_set<std::string> held;
    for (const std::string& s : heldout) held.insert(canonical_workload(s));
    for (const std::string& s : specs)
      TLM_USER_CHECK(!held.count(canonical_workload(s)))
          << "sample: workload " << s << " is held out for evaluation; sampling it for training "
          << "would leak it (pass --keep-heldout to sample it anyway, e.g. for an evaluation set)";
  }

  // 1. Tasks of every workload (held-out ones first, only for their keys).
  std::vector<std::string> all = o.exclude_heldout ? heldout : std::vector<std::string>{};
  size_t n_heldout = all.size();
  all.insert(all.end(), specs.begin(), specs.end());
  std::vector<std::vector<Subgraph>> extracted(all.size());
  {
    Progress prog(o.progress, "workloads extracted", all.size());
    parallel_for(all.size(), o.threads, [&](size_t i) {
      extracted[i] = workload_tasks(all[i]);
      prog.tick();
    });
  }
  std::unordered_set<std::string> heldout_keys;
  for (size_t i = 0; i < n_heldout; i++)
    for (const Subgraph& s : extracted[i]) heldout_keys.insert(s.key);
  std::vector<WorkloadRow> rows;
  std::vector<std::unique_ptr<TaskEntry>> tasks;
  std::unordered_set<std::string> seen_keys, excluded_keys;
  for (size_t i = n_heldout; i < all.size(); i++) {
    WorkloadRow row;
    row.spec = all[i];
    for (Subgraph& s : extracted[i]) {
      row.tasks++;
      if (heldout_keys.count(s.key)) {
        row.heldout_tasks++;
        excluded_keys.insert(s.key);
        continue;
      }
      if (!seen_keys.insert(s.key).second) continue;
      row.new_tasks++;
      tasks.push_back(std::make_unique<TaskEntry>());
      tasks.back()->sub = std::move(s);
    }
    rows.push_back(row);
  }
  extracted.clear();
  rep.excluded_tasks = (int64_t)excluded_keys.size();
  TLM_USER_CHECK(!tasks.empty()) << "sample: the workloads have no task left to sample";
  rep.extract_s = seconds_since(t_start);

  // 2. One space per task.
  Clock::time_point t0 = Clock::now();
  {
    Progress prog(o.progress, "task spaces built", tasks.size());
    parallel_for(tasks.size(), o.threads, [&](size_t i) {
      TaskEntry& t = *tasks[i];
      try {
        LoweredTask lt = lower_subgraph(t.sub);
        t.space = build_space(lt, hw);
        t.printer = std::make_unique<TaskPrinter>(t.sub, hw, t.space);
        t.length = program_length(t.space);
      } catch (const UserError& e) {
        t.error = e.what();
      }
      t.rng.seed(mix(o.seed) ^ fnv1a(t.sub.key));
      prog.tick();
    });
  }
  std::vector<TaskEntry*> live;
  for (auto& t : tasks) {
    if (!t->error.empty()) {
      rep.failed_tasks++;
      if (o.progress)
        std::fprintf(stderr, "sample: warning: task %s skipped: %s\n", t->sub.kind.c_str(),
                     t->error.c_str());
      continue;
    }
    live.push_back(t.get());
  }
  TLM_USER_CHECK(!live.empty()) << "sample: no task space could be built";
  rep.tasks = (int64_t)live.size();
  rep.spaces_s = seconds_since(t0);

  // 3. Sampling, in rounds (see the top of the file).
  t0 = Clock::now();
  {
    Progress prog(o.progress, "sentences sampled", (size_t)o.sentences);
    for (;;) {
      int64_t have = 0;
      std::vector<TaskEntry*> open;
      for (TaskEntry* t : live) {
        have += t->count;
        if (!t->exhausted) open.push_back(t);
      }
      int64_t owed = o.sentences - have;
      if (owed <= 0 || open.empty()) break;
      std::vector<int64_t> target(open.size());
      for (size_t k = 0; k < open.size(); k++)
        target[k] = open[k]->count + owed / (int64_t)open.size() +
                    ((int64_t)k < owed % (int64_t)open.size() ? 1 : 0);
      parallel_for(open.size(), o.threads, [&](size_t k) {
        int64_t before = open[k]->count;
        sample_task(*open[k], target[k]);
        prog.tick(open[k]->count - before);
      });
    }
  }
  for (TaskEntry* t : live) {
    rep.sentences += t->count;
    rep.duplicates += t->duplicates;
    rep.exhausted_tasks += t->exhausted;
  }
  rep.sample_s = seconds_since(t0);

  // 4. Shuffle and write.
  t0 = Clock::now();
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  TLM_USER_CHECK(fs::is_directory(o.out_dir)) << "sample: cannot create directory " << o.out_dir;
  for (const auto& e : fs::directory_iterator(o.out_dir)) {  // stale shards of an earlier run
    std::string name = e.path().filename().string();
    if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".txt") fs::remove(e.path());
  }
  std::vector<std::pair<uint32_t, uint32_t>> order;  // (task, program) per sentence
  order.reserve(rep.sentences);
  for (size_t k = 0; k < live.size(); k++)
    for (int64_t i = 0; i < live[k]->count; i++) order.emplace_back((uint32_t)k, (uint32_t)i);
  std::mt19937_64 shuffle_rng(mix(o.seed ^ 0x5348554646ull));
  for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[below(shuffle_rng, i)]);

  json shards = json::array();
  std::string line;
  for (size_t begin = 0; begin < order.size(); begin += o.shard_lines) {
    size_t end = std::min(order.size(), begin + (size_t)o.shard_lines);
    std::string name = shard_name(rep.shards++);
    std::string path = (fs::path(o.out_dir) / name).string();
    FILE* f = std::fopen(path.c_str(), "wb");
    TLM_USER_CHECK(f) << "sample: cannot write " << path;
    for (size_t i = begin; i < end; i++) {
      const TaskEntry& t = *live[order[i].first];
      line.clear();
      t.printer->append_text(&t.values[order[i].second * t.length], &line);
      line += '\n';
      if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) {
        std::fclose(f);
        TLM_USER_ERROR() << "sample: error while writing " << path;
      }
    }
    TLM_USER_CHECK(std::fclose(f) == 0) << "sample: error while writing " << path;
    shards.push_back({{"file", name}, {"lines", end - begin}});
    if (o.progress)
      std::fprintf(stderr, "sample: wrote %s (%zu lines)\n", path.c_str(), end - begin);
  }

  // Vocabulary: prompts and headers repeat per sentence; values are counted one by one.
  VocabBuilder vb;
  std::vector<std::pair<size_t, int64_t>> length_counts;  // (tokens per sentence, sentences)
  for (TaskEntry* t : live) {
    if (t->count == 0) continue;
    vb.add_tokens(t->printer->prompt(), t->count);
    for (size_t s = 0; s < t->space.slots.size(); s++)
      vb.add_tokens(t->printer->header(s), t->count);
    std::map<int64_t, int64_t> vc;
    for (int64_t v : t->values) vc[v]++;
    for (const auto& [v, c] : vc) vb.add_token(value_token(v), c);
    length_counts.emplace_back(t->printer->sentence_size(), t->count);
  }
  Vocab vocab = vb.build();
  save_vocab(vocab, (fs::path(o.out_dir) / kVocabFile).string());
  rep.vocab_size = vocab.size();
  std::sort(length_counts.begin(), length_counts.end());
  int64_t seen = 0;
  for (const auto& [len, c] : length_counts) {
    if (seen <= rep.sentences / 2 && seen + c > rep.sentences / 2) rep.median_tokens = len;
    seen += c;
    rep.max_tokens = std::max(rep.max_tokens, len);
  }
  rep.write_s = seconds_since(t0);
  rep.total_s = seconds_since(t_start);

  json m;
  m["format"] = kManifestFormat;
  m["version"] = kDatasetVersion;
  m["language_version"] = kLanguageVersion;
  m["seed"] = o.seed;
  m["threads"] = o.threads;
  m["hardware"] = hardware_key(hw);
  m["requested_sentences"] = o.sentences;
  m["sentences"] = rep.sentences;
  m["shards"] = shards;
  m["vocab"] = kVocabFile;
  m["vocab_size"] = rep.vocab_size;
  m["heldout"] = o.exclude_heldout ? heldout : std::vector<std::string>{};
  m["heldout_excluded_tasks"] = rep.excluded_tasks;
  json wl = json::array();
  for (const WorkloadRow& r : rows)
    wl.push_back({{"spec", r.spec},
                  {"tasks", r.tasks},
                  {"new_tasks", r.new_tasks},
                  {"heldout_tasks", r.heldout_tasks}});
  m["workloads"] = wl;
  json tl = json::array();
  for (TaskEntry* t : live)
    tl.push_back({{"kind", t->sub.kind},
                  {"key_hash", key_hash(t->sub.key)},
                  {"sentences", t->count},
                  {"tokens", t->printer->sentence_size()},
                  {"log10_space", t->space.log10_size},
                  {"exhausted", t->exhausted}});
  m["tasks"] = tl;
  json failed = json::array();
  for (auto& t : tasks)
    if (!t->error.empty()) failed.push_back({{"kind", t->sub.kind}, {"error", t->error}});
  m["failed_tasks"] = failed;
  m["counts"] = {{"tasks", rep.tasks},
                 {"failed_tasks", rep.failed_tasks},
                 {"exhausted_tasks", rep.exhausted_tasks},
                 {"duplicates_rejected", rep.duplicates},
                 {"max_tokens", rep.max_tokens},
                 {"median_tokens", rep.median_tokens}};
  m["timing_s"] = {{"extract", rep.extract_s}, {"spaces", rep.spaces_s},
                   {"sample", rep.sample_s},   {"write", rep.write_s},
                   {"total", rep.total_s},     {"sentences_per_s", rep.sentences_per_s()}};
  std::string mpath = (fs::path(o.out_dir) / kManifestFile).string();
  std::ofstream mf(mpath);
  TLM_USER_CHECK(mf.good()) << "sample: cannot write " << mpath;
  mf << m.dump(1) << "\n";
  TLM_USER_CHECK(mf.good()) << "sample: error while writing " << mpath;
  return rep;
}

DatasetManifest load_manifest(const std::string& dir) {
  const std::string path = (fs::path(dir) / kManifestFile).string();
  const std::string fix = "; re-create the dataset with this tlm: `tlm sample --out " + dir + "`";
  std::ifstream f(path);
  TLM_USER_CHECK(f.good()) << "cannot read " << path << " (is " << dir << " a dataset directory?)";
  json m;
  try {
    m = json::parse(f);
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << " is not JSON: " << e.what();
  }
  TLM_USER_CHECK(m.is_object() && m.value("format", "") == kManifestFormat)
      << path << " is not a tlm dataset manifest";
  TLM_USER_CHECK(m.value("version", -1) == kDatasetVersion)
      << path << ": dataset version " << m.value("version", -1) << ", this tlm reads version "
      << kDatasetVersion << fix;
  TLM_USER_CHECK(m.value("language_version", -1) == kLanguageVersion)
      << path << ": sentences of tensor-language version " << m.value("language_version", -1)
      << ", this tlm reads version " << kLanguageVersion << fix;
  DatasetManifest d;
  d.dir = dir;
  try {
    d.seed = m.at("seed").get<uint64_t>();
    d.sentences = m.at("sentences").get<int64_t>();
    for (const json& s : m.at("shards"))
      d.shards.push_back((fs::path(dir) / s.at("file").get<std::string>()).string());
    d.vocab = (fs::path(dir) / m.at("vocab").get<std::string>()).string();
    for (const json& w : m.at("workloads")) d.workloads.push_back(w.at("spec").get<std::string>());
    d.heldout = m.at("heldout").get<std::vector<std::string>>();
    d.excluded_tasks = m.at("heldout_excluded_tasks").get<int64_t>();
    for (const json& t : m.at("tasks"))
      d.task_hashes.push_back(t.at("key_hash").get<std::string>());
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << ": malformed manifest: " << e.what() << fix;
  }
  return d;
}

}  // namespace tlm
