// The iterative loop (loop.h): configuration and resume, the two threads of a round, the files of
// the loop directory.
#include "loop/loop.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "language/dataset.h"
#include "language/sentence.h"
#include "model/generate.h"
#include "model/tlm_model.h"
#include "support/clock.h"
#include "support/error.h"
#include "support/hash.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// Files

std::string numbered(const std::string& dir, const char* stem, int i, const char* ext) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "/%s-%04d%s", stem, i, ext);
  return dir + buf;
}

// Writes `text` to `path` through a temporary file, fsync and rename: a reader sees the old file
// or the new one, never a part.
void write_atomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  TLM_USER_CHECK(fd >= 0) << "cannot write " << tmp << ": " << std::strerror(errno);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      TLM_USER_ERROR() << "cannot write " << tmp << ": " << std::strerror(errno) << " (disk full?)";
    }
    done += (size_t)n;
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  TLM_USER_CHECK(synced && std::rename(tmp.c_str(), path.c_str()) == 0)
      << "cannot write " << path << ": " << std::strerror(errno);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TLM_USER_CHECK(in.good()) << "cannot read " << path;
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& p) { return fs::exists(p); }

// ---------------------------------------------------------------------------------------------
// Configuration: everything that changes what the loop measures or trains. Not in it: the number
// of rounds (a later run may add more), this run's time budget, the output path.

json task_entry(const LoopTask& t) {
  return {{"kind", t.sub.kind}, {"workload", t.workload}, {"key", key_hash(t.sub.key)}};
}

// Without `tasks`, the configuration without its task list (checked first: it is cheap).
json loop_config(const LoopOptions& o, const std::vector<LoopTask>* tasks,
                 const std::string& hw_key, const std::string& base_hash) {
  json c = {
      {"loop_version", kLoopVersion},
      {"language_version", kLanguageVersion},
      {"records_version", kRecordsVersion},
      {"base_hash", base_hash},
      {"hardware", hw_key},
      {"k_b", o.k_b},
      {"k_p", o.k_p},
      {"seed", o.seed},
      {"temperature", o.temperature},
      {"sample_top_k", o.sample_top_k},
      {"gen_batch", o.gen_batch},
      {"demo_top_k", o.demos.top_k},
      {"weighting", demo_weighting_name(o.demos.weighting)},
      {"max_copies", o.demos.max_copies},
      {"epochs", o.finetune.epochs},
      {"lr", o.finetune.train.lr},
      {"min_lr", o.finetune.train.min_lr},
      {"sft_batch", o.finetune.train.batch_size},
      {"val_fraction", o.finetune.val_fraction},
      {"extra_records", o.extra_records},
      {"expert", o.expert},
      {"workloads", o.tasks.workloads},
      {"max_tasks", o.tasks.max_tasks},
      {"max_mflops", o.tasks.max_mflops},
  };
  if (tasks) {
    json& ts = c["tasks"] = json::array();
    for (const LoopTask& t : *tasks) ts.push_back(task_entry(t));
  }
  return c;
}

// Options that only shape how the next models are made (writing and fine-tuning), not what the
// records mean: a resumed loop may change them (models from then on use the new values, and
// loop.json is updated); every other field must match.
bool may_change_on_resume(const std::string& key) {
  static const std::set<std::string> keys = {
      "temperature", "sample_top_k", "gen_batch", "demo_top_k",   "weighting",    "max_copies",
      "epochs",      "lr",           "min_lr",    "sft_batch",    "val_fraction", "extra_records",
      "expert"};
  return keys.count(key) > 0;
}

// Writes DIR/loop.json (once `want` has its tasks), or checks that the one there is this
// configuration (with its task list: then the changed writing and fine-tuning options are noted
// and written back).
void check_or_write_config(const std::string& dir, const json& want) {
  const std::string path = dir + "/loop.json";
  if (!exists(path)) {
    if (want.contains("tasks")) write_atomically(path, want.dump(1) + "\n");
    return;
  }
  json have;
  try {
    have = json::parse(slurp(path));
  } catch (const json::parse_error& e) {
    TLM_USER_ERROR() << path << " is not a loop configuration (" << e.what()
                     << "); use another directory";
  }
  const auto redo =
      "; continue it with the options it was started with, or use another "
      "directory";
  TLM_USER_CHECK(have.is_object() && have.value("loop_version", -1) == kLoopVersion)
      << dir << " is a loop directory of another tlm version (loop version "
      << (have.is_object() ? have.value("loop_version", -1) : -1) << ", this build writes "
      << kLoopVersion << "); use another directory";
  std::vector<std::string> changed;
  for (auto it = want.begin(); it != want.end(); ++it) {
    const std::string& k = it.key();
    if (k == "tasks") continue;
    if (may_change_on_resume(k)) {
      if (!have.contains(k) || have[k] != it.value()) changed.push_back(k);
      continue;
    }
    TLM_USER_CHECK(have.contains(k) && have[k] == it.value())
        << dir << " is a loop of another configuration: its " << k << " is "
        << (have.contains(k) ? have[k].dump() : std::string("missing")) << ", this run's is "
        << it.value().dump() << redo;
  }
  if (!want.contains("tasks")) return;
  const json &a = have.value("tasks", json::array()), &b = want["tasks"];
  if (a != b) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) i++;
    TLM_USER_ERROR() << dir << " is a loop of another configuration: its task set (" << a.size()
                     << " tasks) differs from this run's (" << b.size() << " tasks) from task " << i
                     << " on" << (i < a.size() ? " (it has " + a[i].dump() + ")" : std::string())
                     << redo;
  }
  if (changed.empty()) return;
  for (const std::string& k : changed) {
    std::fprintf(stderr, "loop: %s changes from %s to %s (the models written from now on)\n",
                 k.c_str(), have.contains(k) ? have[k].dump().c_str() : "(unset)",
                 want[k].dump().c_str());
    have[k] = want[k];
  }
  write_atomically(path, have.dump(1) + "\n");
}

int read_rounds_done(const std::string& dir) {
  const std::string path = dir + "/state.json";
  if (!exists(path)) return 0;
  try {
    return json::parse(slurp(path)).at("rounds_done").get<int>();
  } catch (const json::exception& e) {
    TLM_USER_ERROR() << path << " is damaged (" << e.what() << "); it only counts the rounds "
                     << "done: write {\"rounds_done\": N} with the last complete round + 1";
  }
}

struct RoundLine {
  int task = 0;
  std::string sentence;
  int64_t line = 0;
};

std::vector<RoundLine> read_round_file(const std::string& path, size_t tasks) {
  std::ifstream in(path);
  TLM_USER_CHECK(in.good()) << "cannot read " << path;
  std::vector<RoundLine> out;
  std::string text;
  for (int64_t n = 1; std::getline(in, text); n++) {
    if (text.empty()) continue;
    const size_t tab = text.find('\t');
    RoundLine l;
    l.line = n;
    try {
      l.task = tab == std::string::npos ? -1 : std::stoi(text.substr(0, tab));
    } catch (const std::exception&) {
      l.task = -1;
    }
    TLM_USER_CHECK(l.task >= 0 && (size_t)l.task < tasks)
        << path << ":" << n << ": not a line of a loop round (task index, tab, sentence); "
        << "delete the file to write the round again";
    l.sentence = text.substr(tab + 1);
    out.push_back(std::move(l));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// What the second thread reports, and how it is told to stop.

struct Interrupted {};

struct Status {
  std::mutex mu;
  std::string text;
  std::atomic<bool> stop{false};
  void set(const std::string& s) {
    std::lock_guard<std::mutex> lock(mu);
    text = s;
  }
  std::string get() {
    std::lock_guard<std::mutex> lock(mu);
    return text;
  }
};

struct SideWork {  // what the second thread did during a round
  int model = 0;
  int64_t demos = 0;
  double sft_s = 0, base_val_loss = NAN, val_loss = NAN;
  double gen_s = 0;
  int64_t generated = 0, shortfall = 0;
};

// ---------------------------------------------------------------------------------------------

class Loop {
 public:
  explicit Loop(const LoopOptions& o) : o_(o) {}
  LoopReport run(const std::function<void(const RoundReport&)>& on_round);

 private:
  std::vector<int> batch_of(int round) const {
    return loop_batch(tasks_.size(), o_.k_b, round % o_.k_b);
  }
  void prepare(const std::vector<int>& batch);
  std::vector<MeasureRecord> load_dir_records(bool warn);
  // Both may run on the second thread: libtorch and ready harnesses only.
  std::string ensure_model(int j, const std::vector<MeasureRecord>& records, SideWork* w);
  void ensure_sentences(int i, const std::vector<MeasureRecord>& records, SideWork* w);
  void measure_round(int i, const std::vector<MeasureRecord>& records, RoundReport* rep);
  void measure_jobs(const std::vector<MeasureJob>& todo, const std::string& label,
                    RoundReport* rep);
  void measure_experts(const std::vector<MeasureRecord>& records);
  void finish_round(int i, RoundReport rep, const SideWork& w,
                    const std::function<void(const RoundReport&)>& on_round, LoopReport* out);

  const LoopOptions& o_;
  std::string dir_, records_path_;
  HardwareInfo hw_;
  std::string hw_key_;
  std::vector<LoopTask> tasks_;
  std::vector<MeasureRecord> extra_;
  std::set<std::string> heldout_;
  std::map<int, std::unique_ptr<TaskHarness>> harness_;
  std::set<int> failed_;
  Status status_;
};

std::vector<MeasureRecord> Loop::load_dir_records(bool warn) {
  if (!exists(records_path_)) return {};
  LoadStats st;
  std::vector<MeasureRecord> rs = load_records(records_path_, &st);
  if (warn && st.cut_short_lines > 0)
    std::fprintf(stderr, "loop: %s: skipped %lld record line(s) cut short by an interruption\n",
                 records_path_.c_str(), (long long)st.cut_short_lines);
  return rs;
}

// Task harnesses (reference outputs, spaces, printers) for a batch, on the main thread.
void Loop::prepare(const std::vector<int>& batch) {
  for (int t : batch) {
    if (harness_.count(t) || failed_.count(t)) continue;
    try {
      harness_[t] = make_task_harness(tasks_[t].sub, hw_, tasks_[t].workload, o_.seed);
    } catch (const UserError& e) {
      failed_.insert(t);
      std::fprintf(stderr, "loop: task %d (%s) left out: %s\n", t, tasks_[t].sub.kind.c_str(),
                   e.what());
    }
  }
}

// TLM j: the base for j < 2, else the base fine-tuned on the demonstrations of records 0..j-2.
std::string Loop::ensure_model(int j, const std::vector<MeasureRecord>& records, SideWork* w) {
  if (j < 2) return o_.base;
  const std::string path = numbered(dir_, "model", j, ".ckpt");
  if (exists(path)) return path;
  const double t0 = now_s();
  std::vector<MeasureRecord> pool = extra_;
  for (const MeasureRecord& r : records)
    if (loop_round_of(r) <= j - 2) pool.push_back(r);
  DemoOptions d = o_.demos;
  d.exclude_tasks = heldout_;
  DemoSet demos = select_demonstrations(pool, d);

  FinetuneOptions f = o_.finetune;
  const std::string work = numbered(dir_, "sft", j, ".ckpt");
  // A fine-tune killed half-way resumes from work.last, unless its demonstrations changed since
  // (more --extra-records lines): then it starts over.
  uint64_t h = 1469598103934665603ull;
  for (const ChosenDemo& c : demos.demos)
    h = splitmix64(h ^ fnv1a(c.demo.group + "\n" + c.demo.sentence) ^ (uint64_t)c.demo.copies);
  // ... or its fine-tuning options (they may change on resume).
  h = splitmix64(h ^ fnv1a(json({o_.finetune.epochs, o_.finetune.train.lr,
                                 o_.finetune.train.min_lr, o_.finetune.train.batch_size,
                                 o_.finetune.val_fraction}).dump()));
  const std::string demos_hash = std::to_string(h);
  if (!exists(work + ".demos") || slurp(work + ".demos") != demos_hash) {
    std::remove((work + ".last").c_str());
    write_atomically(work + ".demos", demos_hash);
  }
  f.train.out_path = work;
  f.train.log_csv = work + ".csv";
  f.train.resume = true;
  f.train.seed = splitmix64(o_.seed ^ (uint64_t)j);
  f.provenance = {{"loop", dir_},
                  {"model", j},
                  {"records_rounds", j - 2},
                  {"demo_top_k", d.top_k},
                  {"weighting", demo_weighting_name(d.weighting)},
                  {"demos", demos.summary()},
                  {"task_hashes", demos.task_hashes()}};
  f.train.on_progress = [&, j](const TrainProgress& p) {
    if (status_.stop) throw Interrupted{};
    char buf[96];
    std::snprintf(buf, sizeof buf, "TLM %d: fine-tune %lld/%lld loss %.3f", j, (long long)p.step,
                  (long long)p.max_steps, p.loss);
    status_.set(buf);
  };
  FinetuneReport r = finetune_from_base(o_.base, demos.demonstrations(), f);
  TLM_USER_CHECK(std::rename(work.c_str(), path.c_str()) == 0)
      << "cannot rename " << work << " to " << path << ": " << std::strerror(errno);
  for (const char* ext : {".last", ".demos"}) std::remove((work + ext).c_str());
  if (!o_.out.empty()) write_atomically(o_.out, slurp(path));
  for (int old = j - 2; old >= 2; old--) std::remove(numbered(dir_, "model", old, ".ckpt").c_str());
  if (w) {
    w->model = j;
    w->demos = r.demonstrations;
    w->sft_s = now_s() - t0;
    w->base_val_loss = r.base_val_loss;
    w->val_loss = r.best_val_loss;
  }
  status_.set("");
  return path;
}

// Sentences i: k_p programs per task of batch i mod k_b that the records do not hold yet, written
// by TLM i. Sampling first at the temperature, then hotter when the model repeats itself.
void Loop::ensure_sentences(int i, const std::vector<MeasureRecord>& records, SideWork* w) {
  const std::string path = numbered(dir_, "round", i, ".txt");
  if (exists(path)) return;
  const std::string model_path = ensure_model(i, records, w);
  const double t0 = now_s();
  TlmModel m = load_tlm_model(model_path);
  std::map<std::string, std::set<std::string>> seen;  // task key -> sentences measured
  for (const MeasureRecord& r : records)
    if (r.hardware == hw_key_) seen[r.task_key].insert(r.sentence);
  std::string text;
  int64_t generated = 0, shortfall = 0;
  const std::vector<int> batch = batch_of(i);
  for (size_t bi = 0; bi < batch.size(); bi++) {
    const int t = batch[bi];
    if (status_.stop) throw Interrupted{};
    auto h = harness_.find(t);
    if (h == harness_.end()) continue;  // left out: its space could not be built
    status_.set("writing round " + std::to_string(i) + ": task " + std::to_string(bi + 1) + "/" +
                std::to_string(batch.size()));
    const TaskPrinter& printer = *h->second->printer;
    std::set<std::string>& known = seen[tasks_[t].sub.key];
    int have = 0;
    double temperature = o_.temperature;
    for (int attempt = 0; attempt < 3 && have < o_.k_p; attempt++, temperature *= 1.5) {
      GenerateOptions g;
      g.n = o_.k_p - have;
      g.batch = o_.gen_batch;
      g.temperature = temperature;
      g.top_k = o_.sample_top_k;
      g.seed = splitmix64(o_.seed ^ ((uint64_t)i << 32) ^ ((uint64_t)t << 8) ^ (uint64_t)attempt);
      for (const GeneratedProgram& gp : generate_programs(*m.lm, m.tok, printer, g)) {
        std::string s = printer.text(gp.program);
        if (!known.insert(s).second) continue;
        text += std::to_string(t) + "\t" + s + "\n";
        have++;
      }
    }
    generated += have;
    shortfall += o_.k_p - have;
  }
  write_atomically(path, text);
  if (w) {
    w->gen_s = now_s() - t0;
    w->generated = generated;
    w->shortfall = shortfall;
  }
  status_.set("");
}

void Loop::measure_round(int i, const std::vector<MeasureRecord>& records, RoundReport* rep) {
  const std::string path = numbered(dir_, "round", i, ".txt");
  std::vector<RoundLine> lines = read_round_file(path, tasks_.size());
  std::set<std::string> known;
  for (const MeasureRecord& r : records)
    if (r.hardware == hw_key_) known.insert(r.sentence);
  std::vector<MeasureJob> todo;
  for (const RoundLine& l : lines) {
    rep->sentences++;
    if (!known.insert(l.sentence).second) {
      rep->already++;
      continue;
    }
    auto h = harness_.find(l.task);
    if (h == harness_.end()) continue;
    Program p;
    TLM_USER_CHECK(program_from_sentence(*h->second->printer, l.sentence, &p))
        << path << ":" << l.line << ": not a program of task " << l.task << " on " << hw_key_
        << "; delete the file to write the round again";
    todo.push_back({h->second.get(), program_candidate(p, "loop-r" + std::to_string(i))});
  }
  measure_jobs(todo, "loop round " + std::to_string(i + 1) + "/" + std::to_string(o_.rounds),
               rep);
}

// Measures the jobs in chunks of parallel compiles, appending every record as it comes.
void Loop::measure_jobs(const std::vector<MeasureJob>& todo, const std::string& label,
                        RoundReport* rep) {
  MeasureOptions mo = o_.measure;
  if (mo.parallel_compiles <= 0) mo.parallel_compiles = std::max(1, usable_cores());
  RecordWriter writer(records_path_);
  ProgressLine progress(o_.progress, label, (int64_t)todo.size(), 10);
  const double t0 = now_s();
  for (size_t at = 0; at < todo.size(); at += (size_t)mo.parallel_compiles) {
    std::vector<MeasureJob> chunk(todo.begin() + at,
                                  todo.begin() + std::min(todo.size(), at + mo.parallel_compiles));
    for (const MeasureRecord& r : measure_candidates(chunk, mo)) {
      writer.append(r);
      rep->measured++;
      rep->ok += r.ok();
    }
    std::string detail = chunk.back().harness->sub.kind + ", " + std::to_string(rep->ok) + " ok";
    const std::string side = status_.get();
    if (!side.empty()) detail += " | " + side;
    progress.update(rep->measured, detail);
  }
  progress.finish();
  rep->measure_s = now_s() - t0;
}

// Every task's expert programs that the records lack, batch by batch (harnesses of one batch at
// a time), before the rounds go on. Resumable like a round: what is recorded is not measured
// again, so after the first pass this only builds the programs and finds them known.
void Loop::measure_experts(const std::vector<MeasureRecord>& records) {
  std::set<std::string> known;
  for (const MeasureRecord& r : records)
    if (r.hardware == hw_key_) known.insert(r.sentence);
  RoundReport rep;
  for (int b = 0; b < o_.k_b; b++) {
    const std::vector<int> batch = loop_batch(tasks_.size(), o_.k_b, b);
    // Which tasks have an expert program to measure: decided from the spaces alone, so a
    // finished pass builds no harness.
    std::vector<std::pair<int, std::vector<Program>>> want;
    for (int t : batch) {
      if (failed_.count(t)) continue;
      std::vector<Program> progs;
      try {
        LoweredTask lt = lower_subgraph(tasks_[t].sub);
        TaskSpace space = build_space(lt, hw_);
        TaskPrinter printer(tasks_[t].sub, hw_, space);
        for (Program& p : expert_programs(space, hw_))
          if (!known.count(printer.text(p))) progs.push_back(std::move(p));
      } catch (const UserError&) {
        continue;  // prepare() reports it when the task's round comes
      }
      if (!progs.empty()) want.emplace_back(t, std::move(progs));
    }
    if (want.empty()) continue;
    std::vector<int> need;
    for (const auto& w : want) need.push_back(w.first);
    prepare(need);
    std::vector<MeasureJob> todo;
    for (auto& [t, progs] : want) {
      auto h = harness_.find(t);
      if (h == harness_.end()) continue;
      for (const Program& p : progs) {
        known.insert(h->second->printer->text(p));
        todo.push_back({h->second.get(), program_candidate(p, "expert")});
      }
    }
    RoundReport part;  // the progress line counts this batch's programs
    measure_jobs(todo,
                 "loop expert programs, batch " + std::to_string(b + 1) + "/" +
                     std::to_string(o_.k_b),
                 &part);
    rep.measured += part.measured;
    rep.ok += part.ok;
    harness_.clear();
  }
  if (rep.measured > 0)
    std::fprintf(stderr, "loop: %lld expert programs measured (%lld valid)\n",
                 (long long)rep.measured, (long long)rep.ok);
}

void Loop::finish_round(int i, RoundReport rep, const SideWork& w,
                        const std::function<void(const RoundReport&)>& on_round, LoopReport* out) {
  write_atomically(dir_ + "/state.json", json{{"rounds_done", i + 1}}.dump() + "\n");
  std::vector<MeasureRecord> rs = load_dir_records(false);
  std::set<std::string> keys;
  for (const LoopTask& t : tasks_) keys.insert(t.sub.key);
  std::vector<MeasureRecord> mine;
  for (const MeasureRecord& r : rs)
    if (keys.count(r.task_key)) mine.push_back(r);
  const auto best = best_per_task(mine, hw_key_);
  rep.total_best_s = total_best_latency_s(best);
  rep.tasks_with_program = (int64_t)best.size();
  rep.model = w.model;
  rep.demos = w.demos;
  rep.sft_s = w.sft_s;
  rep.base_val_loss = w.base_val_loss;
  rep.val_loss = w.val_loss;
  rep.gen_s = w.gen_s;
  rep.generated = w.generated;
  rep.gen_shortfall = w.shortfall;
  write_atomically(dir_ + "/convergence.csv", convergence_csv(rs, hw_key_, 100));
  const std::string csv = dir_ + "/rounds.csv";
  const bool fresh = !exists(csv);
  std::ofstream f(csv, std::ios::app);
  if (fresh)
    f << "round,batch,sentences,measured,ok,already,measure_s,model,demos,sft_s,base_val_loss,"
         "val_loss,gen_s,generated,gen_shortfall,tasks_with_program,total_best_s,unix_s\n";
  f << rep.round << ',' << rep.batch << ',' << rep.sentences << ',' << rep.measured << ',' << rep.ok
    << ',' << rep.already << ',' << rep.measure_s << ',' << rep.model << ',' << rep.demos << ','
    << rep.sft_s << ',' << rep.base_val_loss << ',' << rep.val_loss << ',' << rep.gen_s << ','
    << rep.generated << ',' << rep.gen_shortfall << ',' << rep.tasks_with_program << ','
    << rep.total_best_s << ',' << unix_time_ms() / 1000 << std::endl;
  out->rounds.push_back(rep);
  out->rounds_done = i + 1;
  out->rounds_run++;
  if (on_round) on_round(rep);
}

LoopReport Loop::run(const std::function<void(const RoundReport&)>& on_round) {
  const double start = now_s();
  TLM_USER_CHECK(!o_.dir.empty()) << "loop: a directory is required (--records DIR)";
  TLM_USER_CHECK(o_.k_b >= 1 && o_.k_p >= 1 && o_.rounds >= 0)
      << "loop: k_b and k_p must be at least 1";
  TLM_USER_CHECK(o_.measure_threads >= 1) << "loop: measure threads must be at least 1";
  dir_ = o_.dir;
  records_path_ = dir_ + "/records.jsonl";
  TLM_USER_CHECK(!exists(dir_) || fs::is_directory(dir_))
      << "loop: " << dir_ << " exists and is not a directory";
  fs::create_directories(dir_);
  if (!o_.out.empty()) {  // often inside the loop directory, which was just made
    const fs::path parent = fs::path(o_.out).parent_path();
    std::error_code ec;
    if (!parent.empty()) fs::create_directories(parent, ec);
    TLM_USER_CHECK(parent.empty() || fs::is_directory(parent))
        << "loop: cannot create the directory of -o " << o_.out;
  }

  // The measured programs run with measure_threads threads: that is the machine they are for.
  set_compute_threads(o_.measure_threads);
  hw_ = detect_hardware();
  hw_.cores = o_.measure_threads;
  hw_key_ = hardware_key(hw_);
  set_model_threads(1);     // the other core measures
  load_tlm_model(o_.base);  // a base that does not load fails now, not in the second thread
  const std::string base_hash = checkpoint_file_hash(o_.base);
  check_or_write_config(dir_, loop_config(o_, nullptr, hw_key_, base_hash));
  heldout_ = heldout_task_keys();  // builds the held-out models: seconds
  TaskSet set = choose_training_tasks(o_.tasks);
  tasks_ = std::move(set.tasks);
  if (o_.progress) {
    std::set<std::string> kinds;
    double mflops = 0;
    for (const LoopTask& t : tasks_) kinds.insert(t.sub.kind), mflops += t.sub.flops / 1e6;
    std::fprintf(stderr,
                 "loop: %zu training tasks of %zu kinds, %.0f MFLOP in all (of %lld unique: %lld "
                 "also in held-out workloads, %lld above --max-mflops); measuring on %s\n",
                 tasks_.size(), kinds.size(), mflops, (long long)set.unique, (long long)set.heldout,
                 (long long)set.too_big, hw_key_.c_str());
  }
  for (const LoopTask& t : tasks_) TLM_CHECK(!heldout_.count(t.sub.key)) << "held-out task";
  check_or_write_config(dir_, loop_config(o_, &tasks_, hw_key_, base_hash));
  extra_ = load_record_files(o_.extra_records);

  LoopReport out;
  int i = out.rounds_done = read_rounds_done(dir_);
  std::vector<MeasureRecord> records = load_dir_records(true);
  host_target();
  warm_halide_jit();
  if (o_.expert && i < o_.rounds) {
    measure_experts(records);
    records = load_dir_records(false);
  }
  for (; i < o_.rounds; i++) {
    if (o_.time_budget_s > 0 && now_s() - start > o_.time_budget_s) break;
    // Harnesses for this round and the next; the rest are dropped.
    const std::vector<int> now = batch_of(i), next = batch_of(i + 1);
    std::set<int> keep(now.begin(), now.end());
    keep.insert(next.begin(), next.end());
    for (auto it = harness_.begin(); it != harness_.end();)
      it = keep.count(it->first) ? std::next(it) : harness_.erase(it);
    prepare(now);
    if (i + 1 < o_.rounds) prepare(next);
    // Recovery (and the first round): sentences i must exist before measuring starts.
    SideWork recovery, side;
    ensure_sentences(i, records, &recovery);

    // The second thread: TLM i+1 and sentences i+1, while round i is measured.
    std::exception_ptr side_error;
    std::thread worker;
    if (i + 1 < o_.rounds) {
      worker = std::thread([&, i] {
        try {
          set_model_threads(1);
          ensure_sentences(i + 1, records, &side);
        } catch (const Interrupted&) {
        } catch (...) {
          side_error = std::current_exception();
        }
      });
    }
    RoundReport rep;
    rep.round = i;
    rep.batch = i % o_.k_b;
    try {
      measure_round(i, records, &rep);
    } catch (...) {
      status_.stop = true;
      if (worker.joinable()) worker.join();
      throw;
    }
    if (worker.joinable()) worker.join();
    if (side_error) std::rethrow_exception(side_error);
    finish_round(i, rep, side, on_round, &out);
    records = load_dir_records(false);
  }
  out.rounds_done = std::max(out.rounds_done, i);
  out.records = (int64_t)records.size();
  if (out.rounds_done >= o_.rounds) {
    // The final model: the base fine-tuned on every round's records.
    out.model = ensure_model(o_.rounds + 1, records, nullptr);
    if (!o_.out.empty()) write_atomically(o_.out, slurp(out.model));
    out.finished = true;
  } else {
    for (int j = out.rounds_done + 1; j >= 2; j--)
      if (exists(numbered(dir_, "model", j, ".ckpt"))) {
        out.model = numbered(dir_, "model", j, ".ckpt");
        break;
      }
  }
  return out;
}

}  // namespace

int loop_round_of(const MeasureRecord& r) {
  if (r.strategy.rfind("loop-r", 0) != 0) return -1;
  try {
    size_t used = 0;
    int v = std::stoi(r.strategy.substr(6), &used);
    return used == r.strategy.size() - 6 && v >= 0 ? v : -1;
  } catch (const std::exception&) {
    return -1;
  }
}

std::string convergence_csv(const std::vector<MeasureRecord>& records, const std::string& hardware,
                            int every) {
  TLM_CHECK(every >= 1) << "every " << every;
  std::vector<const MeasureRecord*> rs;
  for (const MeasureRecord& r : records)
    if (r.hardware == hardware) rs.push_back(&r);
  auto ok = [](const MeasureRecord& r) {
    return r.ok() && std::isfinite(r.median_s) && r.median_s > 0;
  };
  // Per task: the best at the end, and the best of the first round it had a valid program in.
  std::map<std::string, double> final_best, first_best;
  std::map<std::string, int> first_round;
  for (const MeasureRecord* r : rs) {
    if (!ok(*r)) continue;
    const int round = loop_round_of(*r);
    auto fr = first_round.emplace(r->task_key, round).first;
    auto upd = [&](std::map<std::string, double>& m) {
      auto it = m.find(r->task_key);
      if (it == m.end() || r->median_s < it->second) m[r->task_key] = r->median_s;
    };
    upd(final_best);
    if (fr->second == round) upd(first_best);
  }
  std::ostringstream os;
  os << "measurements,ok,tasks,total_best_s,vs_best,vs_first,elapsed_s\n";
  std::map<std::string, double> best;
  double total = 0, total_final = 0, total_first = 0;
  int64_t n = 0, n_ok = 0;
  const int64_t t0 = rs.empty() ? 0 : rs.front()->timestamp_ms;
  for (size_t k = 0; k < rs.size(); k++) {
    const MeasureRecord& r = *rs[k];
    n++;
    if (ok(r)) {
      n_ok++;
      auto it = best.find(r.task_key);
      if (it == best.end()) {
        best[r.task_key] = r.median_s;
        total += r.median_s;
        total_final += final_best[r.task_key];
        total_first += first_best[r.task_key];
      } else if (r.median_s < it->second) {
        total += r.median_s - it->second;
        it->second = r.median_s;
      }
    }
    if (n % every == 0 || k + 1 == rs.size()) {
      char line[256];
      std::snprintf(line, sizeof line, "%lld,%lld,%zu,%.9g,%.6f,%.6f,%.1f\n", (long long)n,
                    (long long)n_ok, best.size(), total, total_final > 0 ? total / total_final : 0,
                    total_first > 0 ? total / total_first : 0, (r.timestamp_ms - t0) / 1000.0);
      os << line;
    }
  }
  return os.str();
}

LoopReport run_loop(const LoopOptions& o, const std::function<void(const RoundReport&)>& on_round) {
  Loop loop(o);
  return loop.run(on_round);
}

}  // namespace tlm
