// Measurement records: what happened when one tensor program (a sentence) ran on one machine.
// They are the "records" box of the paper's Figure 8: the database from which each round's
// demonstration data (the best sentence per task, §5.3) is drawn for supervised fine-tuning.
//
// Storage is JSON lines, append-only, one record per line, so that files can be concatenated
// (cat a b > c), grepped and shared. RecordWriter commits a record with a single write() of the
// whole line followed by fdatasync, so a kill -9 can at worst leave one partial trailing line;
// the next writer starts a fresh line after it and readers skip such "cut short" lines (a line
// that is a proper prefix of a JSON object) with a warning. Any other malformed line, or a
// record of another format version, is a UserError naming the file and line.
//
// Every line also carries the tensor-language version its sentence is written in ("language",
// language/sentence.h kLanguageVersion): the same text means another program under another
// grammar, so a record of another language is a UserError (re-measure), never silently read.
//
// How the caches stood when a record was timed ("cache"): hot, the default and the field's
// absence (every timing sample repeats the program back to back, so its weights and activations
// sit in the caches), or "model" (before every sample the caches were flushed and only the
// activation inputs read back in, as in a compiled model, where a task's activations were just
// written by the previous task and its weights were last touched one inference ago;
// measure/harness.h). The two rank programs differently, so they are never compared with each
// other (ranked_per_task, the ranker's groups).
//
// A failed candidate (compile error, crash, timeout, wrong result) is a record too, with an
// ErrorKind name in `error` (STYLE.md habit 5); best_per_task() only looks at error-free ones.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace tlm {

// Bump when a field changes meaning or is added/removed; readers reject other versions.
constexpr int kRecordsVersion = 2;  // 2: the "language" field

enum class ErrorKind {
  None,                // measured fine
  CompileError,        // the program did not build (invalid schedule, compiler error)
  CompileTimeout,      // building took longer than allowed
  RuntimeError,        // running it raised an error (e.g. a bounds assertion)
  RunTimeout,          // running it took longer than allowed
  Crash,               // the worker process died from a signal or exited unexpectedly
  WrongResult,         // ran, but disagreed with the reference output
  InstantiationError,  // the sentence could not be turned into a program (bad decision)
};
constexpr int kErrorKindCount = 8;

// MeasureRecord::cache of a record timed with the caches as in a model (see above).
constexpr const char* kCacheModel = "model";

const char* error_kind_name(ErrorKind k);  // "None", "CompileError", ...
// Accepts every name error_kind_name() returns, and "" for None; false for anything else.
bool parse_error_kind(const std::string& name, ErrorKind* out);
// The value of MeasureRecord::error for a kind: "" for None, else its name.
std::string error_field(ErrorKind k);

struct MeasureRecord {
  int version = kRecordsVersion;
  std::string task_key;             // identifies the subgraph (same key = same computation)
  std::string task_kind;            // its family, e.g. "conv2d_add_relu" (the paper sorts by it)
  std::string workload;             // model it came from, e.g. "resnet18"
  std::string sentence;             // the full tensor sentence that was measured
  std::string hardware;             // hardware_key() of the machine
  std::vector<double> latencies_s;  // one per timing repeat; empty on error
  double median_s = 0;              // median of latencies_s; 0 on error
  std::string error;                // "" ok, else an ErrorKind name
  std::string error_msg;            // human-readable detail for errors
  std::string strategy;             // who proposed the sentence: "random", "tlm-3", "expert", ...
  int64_t timestamp_ms = 0;         // wall clock (ms since the Unix epoch) when measured
  double compile_s = 0;             // time spent building the program
  std::string cache;                // "" hot, or kCacheModel (above); written only when not hot

  bool ok() const { return error.empty(); }
  ErrorKind error_kind() const;  // InternalError if `error` holds an unknown name
};

// The tuner's re-measurement of its best programs (tune/tuner.h, step 4) is recorded under the
// search strategy's name plus this suffix ("evolutionary/remeasure"): more samples, taken when
// the search is over, and what the tuner chose its deployed program from.
inline constexpr const char* kRemeasureSuffix = "/remeasure";
bool is_remeasurement(const MeasureRecord& r);

// The tuner's in-model selection (tune/in_model.h, step 4b): each of a task's finalists timed
// inside the compiled model, recorded under the strategy's name plus this suffix with cache
// "model" (so ranking by hot records never sees them); latencies_s holds one time per turn the
// finalist ran in (the task's instances summed, at the selection's median turn speed; since
// session 53) and every record of one selection carries the selection's start time
// as timestamp_ms. A task's latest selection decides what is deployed (recorded_schedules.h).
inline constexpr const char* kInModelSuffix = "/in-model";
bool is_in_model_selection(const MeasureRecord& r);

// One line of JSON (no trailing newline) and its inverse. The line's "language" is this build's
// kLanguageVersion (a record in memory is always of this build's language). parse_record_line
// throws UserError (mentioning `where`, e.g. "runs.jsonl:12") for a wrong records or language
// version, missing/unknown field or bad type; it does not handle cut-short lines (RecordReader
// does).
std::string record_to_json_line(const MeasureRecord& r);
MeasureRecord parse_record_line(const std::string& line, const std::string& where);

// Appends records to a file, creating it if needed. Several writers (even in several processes)
// may append to the same file: each record is one O_APPEND write.
class RecordWriter {
 public:
  explicit RecordWriter(const std::string& path);  // UserError when the file cannot be opened
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  // Returns once the record is on disk (write + fdatasync). UserError on I/O failure.
  void append(const MeasureRecord& r);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool need_newline_ = false;  // the file ended in a partial line when opened
};

// Streams records from a file (gzip-compressed when the path ends in .gz, as the committed
// benchmark records are). Skips blank lines and cut-short lines (counted); throws UserError for
// anything else malformed.
class RecordReader {
 public:
  explicit RecordReader(const std::string& path);  // UserError when the file cannot be opened
  ~RecordReader();
  RecordReader(const RecordReader&) = delete;
  RecordReader& operator=(const RecordReader&) = delete;

  bool next(MeasureRecord* out);  // false at end of file
  int64_t cut_short_lines() const { return cut_short_; }
  int64_t first_cut_short_line() const { return first_cut_short_line_; }
  int64_t line_number() const { return line_no_; }

 private:
  bool read_line(std::string* line);  // false at the end; UserError on a read error

  std::string path_;
  std::ifstream in_;
  void* gz_ = nullptr;  // gzFile, for .gz paths
  int64_t line_no_ = 0;
  int64_t cut_short_ = 0;
  int64_t first_cut_short_line_ = 0;
};

// Milliseconds since the Unix epoch, for MeasureRecord::timestamp_ms.
int64_t unix_time_ms();

struct LoadStats {
  int64_t records = 0;
  int64_t cut_short_lines = 0;  // partial lines left by a crash, skipped
  int64_t reordered = 0;        // records renamed to their task's canonical operand order
};
// Without `stats`, skipped cut-short lines are reported as a warning on stderr; with it, the
// caller gets the count and decides. Records written before the graph put a weight second in Add
// and Mul (session 48; graph/passes.h, canonicalize_operands) come back under their task's
// canonical key and sentence: the same program, so old tuning records still match their tasks.
std::vector<MeasureRecord> load_records(const std::string& path, LoadStats* stats = nullptr);

// Every error-free record of each task, keyed by task_key, fastest first (equal medians: the
// earlier one first); pointers into `records`. With a non-empty `hardware`, only records measured
// on that hardware_key() count. Hot and model-cache records are never ranked together: a task
// with records of both kinds is ranked by its hot ones (measured on the four held-out models:
// the programs fastest hot ran every model 1-5% faster end to end than those fastest with
// model-cache timing, BENCHMARKS.md session 45). A program with a RuntimeError record on that
// hardware is left out even where another record timed it: search builds without Halide's
// assertions, the re-measurement and a compiled model with them, so such a record says the program
// cannot run in a model (e.g. Halide inferred it needs more of an input than there is). What a
// model deploys chooses among these (recorded_schedules.h).
std::map<std::string, std::vector<const MeasureRecord*>> ranked_per_task(
    const std::vector<MeasureRecord>& records, const std::string& hardware = "");
// The first of each task's ranked_per_task(): the paper's demonstration data (§5.3).
std::map<std::string, MeasureRecord> best_per_task(const std::vector<MeasureRecord>& records,
                                                   const std::string& hardware = "");
// latency_total of §5.3: the sum over tasks of their best median. It can only fall as records
// are added, which is what makes the iterative optimization converge.
double total_best_latency_s(const std::map<std::string, MeasureRecord>& best);
// All records of one task, oldest first (stable for equal timestamps).
std::vector<MeasureRecord> history(const std::vector<MeasureRecord>& records,
                                   const std::string& task_key);

struct RecordSummary {
  int64_t total = 0;
  int64_t ok = 0;
  int64_t by_error[kErrorKindCount] = {};  // indexed by ErrorKind; [None] == ok
  int64_t tasks = 0;                       // distinct task_keys
  int64_t tasks_with_ok = 0;               // of those, how many have an error-free record
};
RecordSummary summarize(const std::vector<MeasureRecord>& records);
// Multi-line human-readable form: totals, then one line per error kind that occurred.
std::string format_summary(const RecordSummary& s);

}  // namespace tlm
