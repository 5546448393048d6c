// sample_dataset(): workloads -> extract -> spaces -> sample -> shards -> vocabulary -> manifest,
// one function per step. Each phase is a parallel
// loop over independent items (workloads, tasks) whose results land in per-item slots, so the
// output never depends on the thread count.
//
// Shares: every task first gets an equal share of the requested sentences. A task whose space is
// smaller than its share (a reshape has a handful of programs) stops when draws keep repeating
// ("exhausted"); what it could not deliver is shared again among the others, round after round,
// until the total is reached or every task is exhausted.
#include "language/dataset.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <unordered_set>

#include "language/sentence.h"
#include "language/tokenizer.h"
#include "language/workloads.h"
#include "support/clock.h"
#include "support/hash.h"
#include "support/parallel.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr const char* kManifestFormat = "tlm-sentences";
constexpr const char* kManifestFile = "manifest.json";
constexpr const char* kTokenizerFile = "tokenizer.json";
// A round of sampling gives up on a task after this many draws per sentence still owed (plus a
// constant for tiny shares): by then nearly every program of a small space has been seen.
constexpr int64_t kDrawsPerSentence = 20;
constexpr int64_t kExtraDraws = 1000;

struct WorkloadRow {
  std::string spec;
  int64_t tasks = 0, new_tasks = 0, heldout_tasks = 0;
};

struct TaskEntry {
  Subgraph sub;
  HardwareInfo hw;    // the machine the sentences are written for
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
  TLM_USER_CHECK(o.jobs >= 0 && o.jobs <= 1024) << "sample: --jobs must be in [0, 1024]";
  TLM_USER_CHECK(o.shard_lines >= 1) << "sample: --shard-lines must be at least 1";
  TLM_USER_CHECK(!o.workloads.empty()) << "sample: no workloads given";
}

}  // namespace

std::string key_hash(const std::string& key) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)fnv1a(key));
  return buf;
}

namespace {

// Everything one sample_dataset() call works on, filled step by step.
struct SampleRun {
  const SampleOptions& o;
  int jobs = 1;
  SteadyClock::time_point t_start = SteadyClock::now();
  std::vector<HardwareInfo> hws;  // one or more machines to write sentences for
  std::vector<std::string> specs, heldout;
  std::vector<WorkloadRow> rows;
  std::vector<std::unique_ptr<TaskEntry>> tasks;  // every distinct training task
  std::vector<TaskEntry*> live;                   // those whose space could be built
  nlohmann::json shards = nlohmann::json::array();
  SampleReport rep;
  explicit SampleRun(const SampleOptions& opts) : o(opts) {}
};

// Step 0: the workloads, and the refusal to sample a held-out one for training.
void resolve_workloads(SampleRun& run) {
  const SampleOptions& o = run.o;
  run.jobs = o.jobs > 0 ? o.jobs : compute_threads();
  if (o.hardware.empty()) run.hws.push_back(detect_hardware());
  for (const std::string& key : o.hardware) run.hws.push_back(parse_hardware_key(key));
  run.specs = expand_workloads(o.workloads);
  run.heldout = heldout_workloads();
  if (!o.exclude_heldout) return;
  std::unordered_set<std::string> held;
  for (const std::string& s : run.heldout) held.insert(canonical_workload(s));
  for (const std::string& s : run.specs)
    TLM_USER_CHECK(!held.count(canonical_workload(s)))
        << "sample: workload " << s << " is held out for evaluation; sampling it for training "
        << "would leak it (pass --keep-heldout to sample it anyway, e.g. for an evaluation set)";
}

// Step 1: the tasks of every workload (held-out ones first, only for their keys), de-duplicated,
// without any task whose key also occurs in a held-out workload.
void extract_tasks(SampleRun& run) {
  const SampleOptions& o = run.o;
  std::vector<std::string> all = o.exclude_heldout ? run.heldout : std::vector<std::string>{};
  size_t n_heldout = all.size();
  all.insert(all.end(), run.specs.begin(), run.specs.end());
  std::vector<std::vector<Subgraph>> extracted(all.size());
  {
    ProgressLine prog(o.progress, "sample: workloads extracted", (int64_t)all.size(), 2);
    parallel_for((int64_t)all.size(), run.jobs, [&](int64_t i) {
      extracted[i] = workload_tasks(all[i]);
      prog.advance();
    });
    prog.finish();
  }
  std::unordered_set<std::string> heldout_keys;
  for (size_t i = 0; i < n_heldout; i++)
    for (const Subgraph& s : extracted[i]) heldout_keys.insert(s.key);
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
      for (const HardwareInfo& hw : run.hws) {  // every task once per machine it is written for
        if (!workload_fits(all[i], hw.vector_bits / 32)) continue;
        run.tasks.push_back(std::make_unique<TaskEntry>());
        run.tasks.back()->sub = s;
        run.tasks.back()->hw = hw;
      }
    }
    run.rows.push_back(row);
  }
  run.rep.excluded_tasks = (int64_t)excluded_keys.size();
  TLM_USER_CHECK(!run.tasks.empty()) << "sample: the workloads have no task left to sample";
  run.rep.extract_s = seconds_since(run.t_start);
}

// Step 2: one space and printer per task; a task whose space cannot be built is skipped.
void build_spaces(SampleRun& run) {
  const SampleOptions& o = run.o;
  SteadyClock::time_point t0 = SteadyClock::now();
  {
    ProgressLine prog(o.progress, "sample: task spaces built", (int64_t)run.tasks.size(), 2);
    parallel_for((int64_t)run.tasks.size(), run.jobs, [&](int64_t i) {
      TaskEntry& t = *run.tasks[i];
      try {
        LoweredTask lt = lower_subgraph(t.sub);
        t.space = build_space(lt, t.hw);
        t.printer = std::make_unique<TaskPrinter>(t.sub, t.hw, t.space);
        t.length = program_length(t.space);
      } catch (const UserError& e) {
        t.error = e.what();
      }
      // Per (task, machine); the first machine's generator is the one a single-machine dataset
      // has always used.
      uint64_t hw_salt =
          hardware_key(t.hw) == hardware_key(run.hws[0]) ? 0 : fnv1a(hardware_key(t.hw));
      t.rng.seed(splitmix64(o.seed) ^ fnv1a(t.sub.key) ^ hw_salt);
      prog.advance();
    });
    prog.finish();
  }
  for (auto& t : run.tasks) {
    if (!t->error.empty()) {
      run.rep.failed_tasks++;
      if (o.progress)
        std::fprintf(stderr, "sample: warning: task %s skipped: %s\n", t->sub.kind.c_str(),
                     t->error.c_str());
      continue;
    }
    run.live.push_back(t.get());
  }
  TLM_USER_CHECK(!run.live.empty()) << "sample: no task space could be built";
  run.rep.tasks = (int64_t)run.live.size();
  run.rep.spaces_s = seconds_since(t0);
}

// Step 3: sampling, in rounds (see the top of the file).
void sample_programs(SampleRun& run) {
  const SampleOptions& o = run.o;
  SteadyClock::time_point t0 = SteadyClock::now();
  ProgressLine prog(o.progress, "sample: sentences sampled", o.sentences, 2);
  for (;;) {
    int64_t have = 0;
    std::vector<TaskEntry*> open;
    for (TaskEntry* t : run.live) {
      have += t->count;
      if (!t->exhausted) open.push_back(t);
    }
    int64_t owed = o.sentences - have;
    if (owed <= 0 || open.empty()) break;
    std::vector<int64_t> target(open.size());
    for (size_t k = 0; k < open.size(); k++)
      target[k] = open[k]->count + owed / (int64_t)open.size() +
                  ((int64_t)k < owed % (int64_t)open.size() ? 1 : 0);
    parallel_for((int64_t)open.size(), run.jobs, [&](int64_t k) {
      int64_t before = open[k]->count;
      sample_task(*open[k], target[k]);
      prog.advance(open[k]->count - before);
    });
  }
  prog.finish();
  for (TaskEntry* t : run.live) {
    run.rep.sentences += t->count;
    run.rep.duplicates += t->duplicates;
    run.rep.exhausted_tasks += t->exhausted;
  }
  run.rep.sample_s = seconds_since(t0);
}

// Step 4: a seeded shuffle of all sentences, written in shards (stale shards of an earlier run
// in the same directory are removed first).
void write_shards(SampleRun& run) {
  const SampleOptions& o = run.o;
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  TLM_USER_CHECK(fs::is_directory(o.out_dir)) << "sample: cannot create directory " << o.out_dir;
  for (const auto& e : fs::directory_iterator(o.out_dir)) {
    std::string name = e.path().filename().string();
    if (name.rfind("shard-", 0) == 0 && e.path().extension() == ".txt") fs::remove(e.path());
  }
  std::vector<std::pair<uint32_t, uint32_t>> order;  // (task, program) per sentence
  order.reserve(run.rep.sentences);
  for (size_t k = 0; k < run.live.size(); k++)
    for (int64_t i = 0; i < run.live[k]->count; i++) order.emplace_back((uint32_t)k, (uint32_t)i);
  std::mt19937_64 shuffle_rng(splitmix64(o.seed ^ 0x5348554646ull));
  for (size_t i = order.size(); i > 1; i--) std::swap(order[i - 1], order[below(shuffle_rng, i)]);

  std::string line;
  for (size_t begin = 0; begin < order.size(); begin += o.shard_lines) {
    size_t end = std::min(order.size(), begin + (size_t)o.shard_lines);
    std::string name = shard_name(run.rep.shards++);
    std::string path = (fs::path(o.out_dir) / name).string();
    FILE* f = std::fopen(path.c_str(), "wb");
    TLM_USER_CHECK(f) << "sample: cannot write " << path;
    for (size_t i = begin; i < end; i++) {
      const TaskEntry& t = *run.live[order[i].first];
      line.clear();
      t.printer->append_text(&t.values[order[i].second * t.length], &line);
      line += '\n';
      if (std::fwrite(line.data(), 1, line.size(), f) != line.size()) {
        std::fclose(f);
        TLM_USER_ERROR() << "sample: error while writing " << path;
      }
    }
    TLM_USER_CHECK(std::fclose(f) == 0) << "sample: error while writing " << path;
    run.shards.push_back({{"file", name}, {"lines", end - begin}});
    if (o.progress)
      std::fprintf(stderr, "sample: wrote %s (%zu lines)\n", path.c_str(), end - begin);
  }
}

// Step 5: the tokenizer (the words of the prompts and headers of the sampled tasks, plus the
// fixed pieces) and the sentence-length statistics, in text tokens and in model tokens.
void write_tokenizer(SampleRun& run) {
  TokenizerBuilder tb;
  for (TaskEntry* t : run.live) {
    if (t->count == 0) continue;
    tb.add_tokens(t->printer->prompt());
    for (size_t s = 0; s < t->space.slots.size(); s++) tb.add_tokens(t->printer->header(s));
  }
  Tokenizer tok = tb.build();
  save_tokenizer(tok, (fs::path(run.o.out_dir) / kTokenizerFile).string());
  SampleReport& rep = run.rep;
  rep.vocab_size = tok.size();
  std::vector<std::pair<size_t, int64_t>> length_counts;  // (tokens per sentence, sentences)
  for (TaskEntry* t : run.live) {
    if (t->count == 0) continue;
    length_counts.emplace_back(t->printer->sentence_size(), t->count);
    // Every value is one model token; <bos> and <eos> frame the sentence.
    size_t model = tok.encode(t->printer->prompt()).size() + t->length + 2;
    for (size_t s = 0; s < t->space.slots.size(); s++)
      model += tok.encode(t->printer->header(s)).size();
    rep.max_model_tokens = std::max(rep.max_model_tokens, model);
  }
  std::sort(length_counts.begin(), length_counts.end());
  int64_t seen = 0;
  for (const auto& [len, c] : length_counts) {
    if (seen <= rep.sentences / 2 && seen + c > rep.sentences / 2) rep.median_tokens = len;
    seen += c;
    rep.max_tokens = std::max(rep.max_tokens, len);
  }
}

// Step 6: the manifest: versions, options, workloads, per-task table, counts, timings.
void write_manifest(SampleRun& run) {
  const SampleOptions& o = run.o;
  const SampleReport& rep = run.rep;
  json m;
  m["format"] = kManifestFormat;
  m["version"] = kDatasetVersion;
  m["language_version"] = kLanguageVersion;
  m["seed"] = o.seed;
  m["jobs"] = run.jobs;
  json hw_keys = json::array();
  for (const HardwareInfo& hw : run.hws) hw_keys.push_back(hardware_key(hw));
  m["hardware"] = hw_keys;
  m["requested_sentences"] = o.sentences;
  m["sentences"] = rep.sentences;
  m["shards"] = run.shards;
  m["tokenizer"] = kTokenizerFile;
  m["vocab_size"] = rep.vocab_size;
  m["heldout"] = o.exclude_heldout ? run.heldout : std::vector<std::string>{};
  m["heldout_excluded_tasks"] = rep.excluded_tasks;
  json wl = json::array();
  for (const WorkloadRow& r : run.rows)
    wl.push_back({{"spec", r.spec},
                  {"tasks", r.tasks},
                  {"new_tasks", r.new_tasks},
                  {"heldout_tasks", r.heldout_tasks}});
  m["workloads"] = wl;
  json tl = json::array();
  for (TaskEntry* t : run.live)
    tl.push_back({{"kind", t->sub.kind},
                  {"key_hash", key_hash(t->sub.key)},
                  {"sentences", t->count},
                  {"tokens", t->printer->sentence_size()},
                  {"log10_space", t->space.log10_size},
                  {"exhausted", t->exhausted}});
  m["tasks"] = tl;
  json failed = json::array();
  for (auto& t : run.tasks)
    if (!t->error.empty()) failed.push_back({{"kind", t->sub.kind}, {"error", t->error}});
  m["failed_tasks"] = failed;
  m["counts"] = {{"tasks", rep.tasks},
                 {"failed_tasks", rep.failed_tasks},
                 {"exhausted_tasks", rep.exhausted_tasks},
                 {"duplicates_rejected", rep.duplicates},
                 {"max_tokens", rep.max_tokens},
                 {"median_tokens", rep.median_tokens},
                 {"max_model_tokens", rep.max_model_tokens}};
  m["timing_s"] = {{"extract", rep.extract_s}, {"spaces", rep.spaces_s},
                   {"sample", rep.sample_s},   {"write", rep.write_s},
                   {"total", rep.total_s},     {"sentences_per_s", rep.sentences_per_s()}};
  std::string mpath = (fs::path(o.out_dir) / kManifestFile).string();
  std::ofstream mf(mpath);
  TLM_USER_CHECK(mf.good()) << "sample: cannot write " << mpath;
  mf << m.dump(1) << "\n";
  TLM_USER_CHECK(mf.good()) << "sample: error while writing " << mpath;
}

}  // namespace

SampleReport sample_dataset(const SampleOptions& o) {
  check_options(o);
  SampleRun run(o);
  resolve_workloads(run);
  extract_tasks(run);
  build_spaces(run);
  sample_programs(run);
  SteadyClock::time_point t0 = SteadyClock::now();
  write_shards(run);
  write_tokenizer(run);
  run.rep.write_s = seconds_since(t0);
  run.rep.total_s = seconds_since(run.t_start);
  write_manifest(run);
  return run.rep;
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
    d.tokenizer = (fs::path(dir) / m.at("tokenizer").get<std::string>()).string();
    d.max_model_tokens = m.at("counts").at("max_model_tokens").get<int64_t>();
    for (const json& w : m.at("workloads")) d.workloads.push_back(w.at("spec").get<std::string>());
    d.heldout = m.at("heldout").get<std::vector<std::string>>();
    d.hardware = m.at("hardware").get<std::vector<std::string>>();
    d.excluded_tasks = m.at("heldout_excluded_tasks").get<int64_t>();
    for (const json& t : m.at("tasks"))
      d.task_hashes.push_back(t.at("key_hash").get<std::string>());
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << ": malformed manifest: " << e.what() << fix;
  }
  return d;
}

}  // namespace tlm
