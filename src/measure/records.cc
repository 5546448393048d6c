// JSON-lines measurement records: format, crash-safe appends, strict reads, queries.
#include "measure/records.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "language/sentence.h"
#include "support/error.h"

namespace tlm {
namespace {

using nlohmann::json;

const char* const kErrorKindNames[] = {
    "None",       "CompileError", "CompileTimeout", "RuntimeError",
    "RunTimeout", "Crash",        "WrongResult",    "InstantiationError",
};
static_assert(sizeof(kErrorKindNames) / sizeof(kErrorKindNames[0]) == kErrorKindCount,
              "one name per ErrorKind");

// The fields of a version-2 record (written with sorted keys). Readers require exactly these,
// but for the optional ones below.
const char* const kFields[] = {
    "version",     "language", "task_key", "task_kind", "workload", "sentence",     "hardware",
    "latencies_s", "median_s", "error",    "error_msg", "strategy", "timestamp_ms", "compile_s",
};
// Written only when not at their default: "cache" ("" = hot), so hot records read the same as
// before it existed.
const char* const kOptionalFields[] = {"cache"};

// Reads typed fields out of one parsed line, turning every mismatch into a UserError at `where`.
class FieldReader {
 public:
  FieldReader(const json& j, const std::string& where) : j_(j), where_(where) {}

  std::string str(const char* name) const {
    const json& v = field(name);
    if (!v.is_string()) fail(name, "a string");
    return v.get<std::string>();
  }
  int64_t integer(const char* name) const {
    const json& v = field(name);
    if (!v.is_number_integer()) fail(name, "an integer");
    return v.get<int64_t>();
  }
  // JSON has no NaN/inf; nlohmann writes them as null, so null reads back as NaN.
  double real(const char* name) const { return to_real(field(name), name); }
  std::vector<double> reals(const char* name) const {
    const json& v = field(name);
    if (!v.is_array()) fail(name, "an array of numbers");
    std::vector<double> out;
    for (const json& x : v) out.push_back(to_real(x, name));
    return out;
  }

 private:
  const json& field(const char* name) const {
    auto it = j_.find(name);
    TLM_USER_CHECK(it != j_.end()) << where_ << ": record has no field '" << name
                                   << "': the file was not written by RecordWriter, or was edited";
    return *it;
  }
  double to_real(const json& v, const char* name) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) fail(name, "a number");
    return v.get<double>();
  }
  [[noreturn]] void fail(const char* name, const char* what) const {
    TLM_USER_ERROR() << where_ << ": record field '" << name << "' should be " << what << ", found "
                     << j_.at(name).dump();
  }
  const json& j_;
  const std::string& where_;
};

// A write() cut short leaves a proper prefix of a JSON object: the parser runs off the end of
// the text. Any other syntax error is damage we must not silently skip.
bool is_cut_short(const std::string& line) {
  if (line.empty() || line[0] != '{') return false;
  try {
    json j = json::parse(line);
    return false;
  } catch (const json::parse_error& e) {
    return e.byte > line.size();
  }
}

}  // namespace

const char* error_kind_name(ErrorKind k) {
  int i = (int)k;
  TLM_CHECK(i >= 0 && i < kErrorKindCount) << "bad ErrorKind " << i;
  return kErrorKindNames[i];
}

bool parse_error_kind(const std::string& name, ErrorKind* out) {
  if (name.empty()) {
    *out = ErrorKind::None;
    return true;
  }
  for (int i = 0; i < kErrorKindCount; i++) {
    if (name == kErrorKindNames[i]) {
      *out = (ErrorKind)i;
      return true;
    }
  }
  return false;
}

std::string error_field(ErrorKind k) { return k == ErrorKind::None ? "" : error_kind_name(k); }

ErrorKind MeasureRecord::error_kind() const {
  ErrorKind k;
  TLM_CHECK(parse_error_kind(error, &k)) << "record holds unknown error kind '" << error << "'";
  return k;
}

namespace {
bool strategy_ends_with(const MeasureRecord& r, const char* suffix) {
  const size_t n = std::char_traits<char>::length(suffix);
  return r.strategy.size() > n && r.strategy.compare(r.strategy.size() - n, n, suffix) == 0;
}
}  // namespace

bool is_remeasurement(const MeasureRecord& r) { return strategy_ends_with(r, kRemeasureSuffix); }

bool is_in_model_selection(const MeasureRecord& r) {
  return strategy_ends_with(r, kInModelSuffix) && r.cache == kCacheModel;
}

int64_t unix_time_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string record_to_json_line(const MeasureRecord& r) {
  TLM_CHECK(r.version == kRecordsVersion)
      << "this build writes records version " << kRecordsVersion << ", not " << r.version;
  json j = json::object();
  j["version"] = r.version;
  j["language"] = kLanguageVersion;
  j["task_key"] = r.task_key;
  j["task_kind"] = r.task_kind;
  j["workload"] = r.workload;
  j["sentence"] = r.sentence;
  j["hardware"] = r.hardware;
  j["latencies_s"] = r.latencies_s;
  j["median_s"] = r.median_s;
  j["error"] = r.error;
  j["error_msg"] = r.error_msg;
  j["strategy"] = r.strategy;
  j["timestamp_ms"] = r.timestamp_ms;
  j["compile_s"] = r.compile_s;
  TLM_CHECK(j.size() == sizeof(kFields) / sizeof(kFields[0])) << "kFields out of date";
  TLM_CHECK(r.cache.empty() || r.cache == kCacheModel) << "unknown cache mode '" << r.cache << "'";
  if (!r.cache.empty()) j["cache"] = r.cache;
  // Invalid UTF-8 (e.g. a compiler message with stray bytes) is replaced rather than throwing:
  // losing a character of a message must not lose the measurement.
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

MeasureRecord parse_record_line(const std::string& line, const std::string& where) {
  json j;
  try {
    j = json::parse(line);
  } catch (const json::parse_error& e) {
    TLM_USER_ERROR() << where << ": not a measurement record (" << e.what()
                     << "). Delete or repair that line; if the file was made by concatenating "
                        "record files, check that each part ended with a newline";
  }
  TLM_USER_CHECK(j.is_object()) << where << ": not a measurement record (expected a JSON object)";
  auto v = j.find("version");
  TLM_USER_CHECK(v != j.end() && v->is_number_integer())
      << where << ": record has no integer 'version' field; this build reads records format "
      << "version " << kRecordsVersion << ". The line was not written by RecordWriter";
  TLM_USER_CHECK(*v != 1)
      << where << ": records format version 1, this build reads version " << kRecordsVersion
      << ": re-measure with this build (version-1 records do not say which tensor-language "
      << "version their sentences are written in; language 1 spells values above 999 "
      << "differently), or convert the file with scripts/upgrade_records.py (which sets apart "
      << "the records it cannot place)";
  TLM_USER_CHECK(*v == kRecordsVersion)
      << where << ": records format version " << v->dump() << ", this build reads version "
      << kRecordsVersion << ": re-measure with this build, or read the file with the tlm build "
      << "that wrote it";
  auto lang = j.find("language");
  TLM_USER_CHECK(lang != j.end() && lang->is_number_integer())
      << where << ": record has no integer 'language' field: the file was not written by "
      << "RecordWriter, or was edited";
  TLM_USER_CHECK(*lang == kLanguageVersion)
      << where << ": a record of tensor-language version " << lang->dump()
      << ", this build speaks version " << kLanguageVersion
      << ": its sentence would mean another program; re-measure with this build";
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool known = false;
    for (const char* f : kFields) known = known || it.key() == f;
    for (const char* f : kOptionalFields) known = known || it.key() == f;
    TLM_USER_CHECK(known) << where << ": unknown field '" << it.key() << "' in a version-"
                          << kRecordsVersion << " record: written by an incompatible build";
  }

  FieldReader f(j, where);
  MeasureRecord r;
  r.version = kRecordsVersion;
  r.task_key = f.str("task_key");
  r.task_kind = f.str("task_kind");
  r.workload = f.str("workload");
  r.sentence = f.str("sentence");
  r.hardware = f.str("hardware");
  r.latencies_s = f.reals("latencies_s");
  r.median_s = f.real("median_s");
  r.error = f.str("error");
  r.error_msg = f.str("error_msg");
  r.strategy = f.str("strategy");
  r.timestamp_ms = f.integer("timestamp_ms");
  r.compile_s = f.real("compile_s");
  if (j.contains("cache")) {
    r.cache = f.str("cache");
    TLM_USER_CHECK(r.cache == kCacheModel)
        << where << ": unknown cache mode '" << r.cache << "' (hot records have no 'cache' field; "
        << "the other mode is '" << kCacheModel << "')";
  }
  ErrorKind k;
  TLM_USER_CHECK(parse_error_kind(r.error, &k) && (k != ErrorKind::None || r.error.empty()))
      << where << ": unknown error kind '" << r.error << "' (ok records have an empty error)";
  return r;
}

// ---------------------------------------------------------------------------------------------
// Writer

namespace {
bool ends_with_gz(const std::string& p) {
  return p.size() > 3 && p.compare(p.size() - 3, 3, ".gz") == 0;
}
}  // namespace

RecordWriter::RecordWriter(const std::string& path) : path_(path) {
  TLM_USER_CHECK(!ends_with_gz(path))
      << "records file '" << path << "' is gzip-compressed: it can be read but not appended to "
      << "(decompress it, or give a .jsonl file)";
  // O_APPEND makes every write() land at the current end, atomically with respect to other
  // appenders, so concurrent writers never interleave inside a line.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  TLM_USER_CHECK(fd_ >= 0) << "cannot open records file '" << path
                           << "' for appending: " << std::strerror(errno);
  struct stat st;
  if (fstat(fd_, &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (pread(fd_, &last, 1, st.st_size - 1) == 1 && last != '\n') {
      // An earlier writer died mid-line. Start a new line so we never glue onto its remains;
      // the reader skips the remnant as "cut short".
      need_newline_ = true;
    }
  }
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void RecordWriter::append(const MeasureRecord& r) {
  std::string line = (need_newline_ ? "\n" : "") + record_to_json_line(r) + "\n";
  // One write() for the whole line, so other appenders cannot interleave with it. A kill -9
  // during the write can still cut it short (the kernel checks for fatal signals between pages),
  // but only before append() returns, i.e. before the record counts as committed; the remnant
  // is a cut-short line that readers skip. The loop handles short writes (disk full, signals).
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      need_newline_ = done > 0 || need_newline_;
      TLM_USER_ERROR() << "cannot append to records file '" << path_
                       << "': " << std::strerror(errno) << " (disk full?)";
    }
    done += (size_t)n;
  }
  need_newline_ = false;
  // The record counts as measured only once it survives a power cut or a crash of this process.
  TLM_USER_CHECK(fdatasync(fd_) == 0)
      << "cannot sync records file '" << path_ << "': " << std::strerror(errno);
}

// ---------------------------------------------------------------------------------------------
// Reader

RecordReader::RecordReader(const std::string& path) : path_(path) {
  if (ends_with_gz(path)) {
    gz_ = gzopen(path.c_str(), "rb");
    TLM_USER_CHECK(gz_) << "cannot open records file '" << path << "': " << std::strerror(errno);
    return;
  }
  in_.open(path);
  TLM_USER_CHECK(in_.good()) << "cannot open records file '" << path
                             << "': " << std::strerror(errno);
}

RecordReader::~RecordReader() {
  if (gz_) gzclose((gzFile)gz_);
}

bool RecordReader::read_line(std::string* line) {
  if (!gz_) {
    if (std::getline(in_, *line)) return true;
    TLM_USER_CHECK(in_.eof()) << "error reading records file '" << path_ << "' after line "
                              << line_no_;
    return false;
  }
  line->clear();
  char buf[1 << 16];
  for (;;) {
    if (!gzgets((gzFile)gz_, buf, sizeof buf)) {
      int err = 0;
      const char* msg = gzerror((gzFile)gz_, &err);
      TLM_USER_CHECK(err == Z_OK) << "error reading records file '" << path_ << "' after line "
                                  << line_no_ << ": " << msg << " (a damaged .gz file?)";
      return !line->empty();  // the last line may lack its newline
    }
    line->append(buf);
    if (!line->empty() && line->back() == '\n') {
      line->pop_back();
      return true;
    }
  }
}

bool RecordReader::next(MeasureRecord* out) {
  std::string line;
  while (read_line(&line)) {
    line_no_++;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    try {
      *out = parse_record_line(line, path_ + ":" + std::to_string(line_no_));
      return true;
    } catch (const UserError&) {
      if (!is_cut_short(line)) throw;  // parsed a second time only on this rare path
    }
    if (cut_short_++ == 0) first_cut_short_line_ = line_no_;
  }
  return false;
}

namespace {

// A key line "%k = Add(w<j>, X) -> ..." (or Mul) with X computed or an activation: written
// before operands were put in canonical order. Returns the key with such lines' operands
// swapped, or "" when there is none.
std::string reordered_key(const std::string& key) {
  // Every record is loaded through here: keys without such a line are not copied.
  if (key.find("= Add(w") == std::string::npos && key.find("= Mul(w") == std::string::npos)
    return std::string();
  std::string out;
  bool any = false;
  size_t at = 0;
  while (at < key.size()) {
    size_t end = key.find('\n', at);
    if (end == std::string::npos) end = key.size();
    std::string line = key.substr(at, end - at);
    for (const char* op : {"= Add(w", "= Mul(w"}) {
      const size_t open = line.find(op);
      if (open == std::string::npos) continue;
      const size_t a = open + 6, comma = line.find(", ", a), close = line.find(')', a);
      if (comma == std::string::npos || close == std::string::npos || comma > close) break;
      const std::string first = line.substr(a, comma - a),
                        second = line.substr(comma + 2, close - comma - 2);
      if (second.rfind("%", 0) != 0 && second.rfind("in", 0) != 0) break;
      line = line.substr(0, a) + second + ", " + first + line.substr(close);
      any = true;
      break;
    }
    out += line;
    if (end < key.size()) out += '\n';
    at = end + 1;
  }
  return any ? out : std::string();
}

// Renames records of the old operand order (reordered_key) to the canonical task: the key by
// text, the sentence's subgraph part re-read in canonical order (the decisions do not change;
// each task and hardware checked once by parsing a whole renamed sentence). A record whose
// sentence does not read back as a program of the canonical task is left as it was.
class OperandOrderMigration {
 public:
  bool apply(MeasureRecord* r) {
    const std::string key = reordered_key(r->task_key);
    if (key.empty()) return false;
    std::vector<std::string> t = split_tokens(r->sentence);
    size_t h = 0;
    while (h < t.size() && t[h].rfind("isa=", 0) != 0) h++;
    if (h == t.size()) {  // an autoscheduler marker: no subgraph to rename
      r->task_key = key;
      return true;
    }
    if (t.size() < h + 6) return false;
    const std::string head = join_tokens({t.begin(), t.begin() + h + 6});
    auto it = done_.find(head);
    if (it == done_.end()) it = done_.emplace(head, rename(t, h, key)).first;
    if (it->second.empty()) return false;
    std::vector<std::string> s = it->second;
    s.insert(s.end(), t.begin() + h + 6, t.end());
    r->sentence = join_tokens(s);
    r->task_key = key;
    return true;
  }

 private:
  // The canonical subgraph and hardware tokens, or none when this task cannot be renamed.
  static std::vector<std::string> rename(const std::vector<std::string>& t, size_t h,
                                         const std::string& key) {
    try {
      bool reordered = false;
      Subgraph sub = subgraph_from_tokens({t.begin(), t.begin() + h}, &reordered);
      if (!reordered || sub.key != key) return {};
      std::vector<std::string> head = subgraph_tokens(sub);
      head.insert(head.end(), t.begin() + h, t.begin() + h + 6);
      std::vector<std::string> whole = head;
      whole.insert(whole.end(), t.begin() + h + 6, t.end());
      parse_sentence(join_tokens(whole));  // the decisions are a program of the canonical task
      return head;
    } catch (const UserError&) {
      return {};
    }
  }
  std::map<std::string, std::vector<std::string>> done_;  // prompt text -> rename(), cached
};

}  // namespace

std::vector<MeasureRecord> load_records(const std::string& path, LoadStats* stats) {
  RecordReader reader(path);
  std::vector<MeasureRecord> records;
  MeasureRecord r;
  OperandOrderMigration migration;
  int64_t reordered = 0;
  while (reader.next(&r)) {
    reordered += migration.apply(&r);
    records.push_back(std::move(r));
  }
  if (stats) {
    stats->records = (int64_t)records.size();
    stats->reordered = reordered;
    stats->cut_short_lines = reader.cut_short_lines();
  } else if (reader.cut_short_lines() > 0) {
    std::cerr << "warning: " << path << ": skipped " << reader.cut_short_lines()
              << " record line(s) cut short by a crash while writing (first at line "
              << reader.first_cut_short_line() << ")\n";
  }
  return records;
}

// ---------------------------------------------------------------------------------------------
// Queries

std::map<std::string, std::vector<const MeasureRecord*>> ranked_per_task(
    const std::vector<MeasureRecord>& records, const std::string& hardware) {
  std::map<std::string, std::vector<const MeasureRecord*>> ranked;
  std::set<std::string> hot;  // tasks with a hot record: ranked by those alone
  std::set<std::pair<std::string, std::string>> cannot_run;  // (task, sentence)
  for (const MeasureRecord& r : records)
    if (r.error_kind() == ErrorKind::RuntimeError && (hardware.empty() || r.hardware == hardware))
      cannot_run.insert({r.task_key, r.sentence});
  for (const MeasureRecord& r : records) {
    if (!r.ok() || !std::isfinite(r.median_s)) continue;
    if (!hardware.empty() && r.hardware != hardware) continue;
    if (!cannot_run.empty() && cannot_run.count({r.task_key, r.sentence})) continue;
    ranked[r.task_key].push_back(&r);
    if (r.cache.empty()) hot.insert(r.task_key);
  }
  for (const std::string& key : hot) {
    auto& rs = ranked[key];
    rs.erase(std::remove_if(rs.begin(), rs.end(),
                            [](const MeasureRecord* r) { return !r->cache.empty(); }),
             rs.end());
  }
  for (auto& [key, rs] : ranked)
    std::stable_sort(rs.begin(), rs.end(), [](const MeasureRecord* a, const MeasureRecord* b) {
      return a->median_s < b->median_s ||
             (a->median_s == b->median_s && a->timestamp_ms < b->timestamp_ms);
    });
  return ranked;
}

std::map<std::string, MeasureRecord> best_per_task(const std::vector<MeasureRecord>& records,
                                                   const std::string& hardware) {
  std::map<std::string, MeasureRecord> best;
  for (const auto& [key, rs] : ranked_per_task(records, hardware)) best.emplace(key, *rs.front());
  return best;
}

double total_best_latency_s(const std::map<std::string, MeasureRecord>& best) {
  double total = 0;
  for (const auto& [key, r] : best) total += r.median_s;
  return total;
}

std::vector<MeasureRecord> history(const std::vector<MeasureRecord>& records,
                                   const std::string& task_key) {
  std::vector<MeasureRecord> out;
  for (const MeasureRecord& r : records) {
    if (r.task_key == task_key) out.push_back(r);
  }
  std::stable_sort(out.begin(), out.end(), [](const MeasureRecord& a, const MeasureRecord& b) {
    return a.timestamp_ms < b.timestamp_ms;
  });
  return out;
}

RecordSummary summarize(const std::vector<MeasureRecord>& records) {
  RecordSummary s;
  std::set<std::string> tasks, tasks_ok;
  for (const MeasureRecord& r : records) {
    s.total++;
    s.by_error[(int)r.error_kind()]++;
    tasks.insert(r.task_key);
    if (r.ok()) {
      s.ok++;
      tasks_ok.insert(r.task_key);
    }
  }
  s.tasks = (int64_t)tasks.size();
  s.tasks_with_ok = (int64_t)tasks_ok.size();
  return s;
}

std::string format_summary(const RecordSummary& s) {
  std::ostringstream os;
  os << s.total << " records, " << s.ok << " ok; " << s.tasks << " tasks, " << s.tasks_with_ok
     << " with an ok record\n";
  for (int i = 1; i < kErrorKindCount; i++) {
    if (s.by_error[i] > 0) os << "  " << kErrorKindNames[i] << ": " << s.by_error[i] << "\n";
  }
  return os.str();
}

}  // namespace tlm
