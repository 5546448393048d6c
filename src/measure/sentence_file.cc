#include "measure/sentence_file.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <set>

#include "support/clock.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {
namespace {

struct Line {
  int64_t number = 0;
  std::string text;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

}  // namespace

std::string MeasureFileReport::summary() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%lld sentences: %lld measured (%lld valid) on %lld tasks, %lld already in the "
                "records, %lld rejected; %s of measuring = %.1f valid/min\n",
                (long long)sentences, (long long)measured, (long long)ok, (long long)tasks,
                (long long)already, (long long)rejected, format_duration(measure_wall_s).c_str(),
                valid_per_minute());
  std::string s = buf;
  for (const auto& [kind, n] : errors) s += "  " + kind + ": " + std::to_string(n) + "\n";
  return s;
}

MeasureFileReport measure_sentence_file(const MeasureFileOptions& o) {
  TLM_USER_CHECK(!o.records_path.empty()) << "measure: a records file is required (--records)";
  std::ifstream in(o.sentences_path);
  TLM_USER_CHECK(in.good()) << "cannot open sentence file " << o.sentences_path;
  std::vector<Line> lines;
  std::string text;
  for (int64_t n = 1; std::getline(in, text); n++) {
    text = trim(text);
    if (!text.empty() && text[0] != '#') lines.push_back({n, text});
  }

  HardwareInfo hw = detect_hardware();
  const std::string hw_key = hardware_key(hw);
  host_target();  // fixes the target (and Halide's thread count) before any fork
  std::set<std::string> known;
  struct stat st;
  if (::stat(o.records_path.c_str(), &st) == 0)
    for (const MeasureRecord& r : load_records(o.records_path))
      if (r.hardware == hw_key && r.cache.empty() == !o.measure.model_cache)
        known.insert(r.sentence);

  MeasureFileReport rep;
  rep.sentences = (int64_t)lines.size();
  warm_halide_jit();
  RecordWriter writer(o.records_path);
  std::map<std::string, std::unique_ptr<TaskHarness>> harnesses;  // by task key
  int64_t budget = o.limit > 0 ? std::min<int64_t>(o.limit, rep.sentences) : rep.sentences;
  ProgressLine progress(o.progress, "measure", budget);
  // Lines are measured a few at a time, so that their compiles overlap (tune/harness.h).
  const size_t chunk = (size_t)std::max(
      1, o.measure.parallel_compiles > 0 ? o.measure.parallel_compiles : compute_threads());
  std::vector<MeasureJob> pending;
  std::vector<std::string> pending_text;
  auto flush = [&] {
    double t0 = now_s();
    std::vector<MeasureRecord> rs = measure_candidates(pending, o.measure);
    rep.measure_wall_s += now_s() - t0;
    for (const MeasureRecord& r : rs) {
      writer.append(r);
      rep.measured++;
      rep.ok += r.ok();
      if (!r.ok()) rep.errors[r.error]++;
    }
    if (!rs.empty()) {
      const MeasureRecord& r = rs.back();
      char detail[160];
      std::snprintf(detail, sizeof detail, "%s: %s", r.task_kind.c_str(),
                    r.ok() ? (std::to_string(r.median_s * 1e3) + " ms").c_str() : r.error.c_str());
      progress.update(rep.measured, detail);
    }
    pending.clear();
    pending_text.clear();
  };
  constexpr int64_t kNamedRejections = 3;
  int64_t other_hardware = 0;
  for (const Line& line : lines) {
    if (rep.measured + (int64_t)pending.size() >= budget) break;
    const std::string where = o.sentences_path + ":" + std::to_string(line.number);
    ParsedSentence ps;
    try {
      ps = parse_sentence(line.text);
    } catch (const UserError& e) {
      std::fprintf(stderr, "%s: not a sentence: %s\n", where.c_str(), e.what());
      rep.rejected++;
      continue;
    }
    // A sentence names the machine by its tokens (no CPU identity): compare those.
    if (hardware_tokens(ps.hw) != hardware_tokens(hw)) {
      // The first few are named; a file written for another machine says so once, not per line.
      if (++other_hardware <= kNamedRejections)
        std::fprintf(stderr, "%s: written for hardware %s, this machine is %s%s\n", where.c_str(),
                     hardware_key(ps.hw).c_str(), hw_key.c_str(),
                     ps.hw.cores != hw.cores ? " (tlm --threads sets the cores)" : "");
      rep.rejected++;
      continue;
    }
    const std::string canonical = ps.sentence.to_text();
    if (!known.insert(canonical).second) {  // measured before, or earlier in this file
      rep.already++;
      continue;
    }
    std::unique_ptr<TaskHarness>& harness = harnesses[ps.sub.key];
    if (!harness) harness = make_task_harness(ps.sub, hw, o.workload, o.seed);
    pending.push_back({harness.get(), program_candidate(ps.program, o.strategy)});
    if (pending.size() >= chunk) flush();
  }
  flush();
  progress.finish();
  if (other_hardware > kNamedRejections)
    std::fprintf(stderr, "%s: %lld more lines written for other hardware, not measured\n",
                 o.sentences_path.c_str(), (long long)(other_hardware - kNamedRejections));
  rep.tasks = (int64_t)harnesses.size();
  return rep;
}

}  // namespace tlm
