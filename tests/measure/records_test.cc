// Measurement records: round trips, concatenation, crash remnants, strict errors, queries, and a
// real kill -9 of a process in the middle of appending.
#include "measure/records.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "language/sentence.h"
#include "support/error.h"

namespace tlm {
namespace {

// Record files live in the test temp dir and are removed when the test ends.
class RecordsTest : public ::testing::Test {
 protected:
  std::string temp_path(const std::string& name) {
    std::string p = ::testing::TempDir() + "tlm_records_" + std::to_string(getpid()) + "_" +
                    std::to_string(paths_.size()) + "_" + name;
    std::remove(p.c_str());
    paths_.push_back(p);
    return p;
  }
  void TearDown() override {
    for (const std::string& p : paths_) std::remove(p.c_str());
  }

 private:
  std::vector<std::string> paths_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const std::string& path, const std::string& text, bool append = false) {
  std::ofstream out(path, std::ios::binary | (append ? std::ios::app : std::ios::trunc));
  out << text;
}

MeasureRecord make_record(const std::string& task, double median, int64_t t,
                          ErrorKind err = ErrorKind::None) {
  MeasureRecord r;
  r.task_key = task;
  r.task_kind = "dense_add";
  r.workload = "bert-tiny";
  r.sentence = "op=dense [1,128]x[128,512] isa=avx2 split i 128 to i.0=4 i.1=32";
  r.hardware = "isa=avx2,cores=2,vec=8,l1=32k,l2=1m,l3=32m";
  r.error = error_field(err);
  if (err == ErrorKind::None) {
    r.latencies_s = {median * 1.1, median, median * 0.9};
    r.median_s = median;
  } else {
    r.error_msg = std::string("failed: ") + error_kind_name(err);
  }
  r.strategy = "random";
  r.timestamp_ms = t;
  r.compile_s = 0.25;
  return r;
}

void expect_same(const MeasureRecord& a, const MeasureRecord& b) {
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(a.task_key, b.task_key);
  EXPECT_EQ(a.task_kind, b.task_kind);
  EXPECT_EQ(a.workload, b.workload);
  EXPECT_EQ(a.sentence, b.sentence);
  EXPECT_EQ(a.hardware, b.hardware);
  EXPECT_EQ(a.latencies_s, b.latencies_s);
  EXPECT_EQ(a.median_s, b.median_s);
  EXPECT_EQ(a.error, b.error);
  EXPECT_EQ(a.error_msg, b.error_msg);
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.timestamp_ms, b.timestamp_ms);
  EXPECT_EQ(a.compile_s, b.compile_s);
}

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no UserError";
}

TEST_F(RecordsTest, ErrorKindNames) {
  for (int i = 0; i < kErrorKindCount; i++) {
    ErrorKind k;
    ASSERT_TRUE(parse_error_kind(error_kind_name((ErrorKind)i), &k));
    EXPECT_EQ((int)k, i);
    ASSERT_TRUE(parse_error_kind(error_field((ErrorKind)i), &k));
    EXPECT_EQ((int)k, i);
  }
  EXPECT_EQ(error_field(ErrorKind::None), "");
  EXPECT_STREQ(error_kind_name(ErrorKind::RunTimeout), "RunTimeout");
  ErrorKind k;
  EXPECT_FALSE(parse_error_kind("Segfault", &k));
}

TEST_F(RecordsTest, RoundTrip) {
  std::string path = temp_path("roundtrip.jsonl");
  std::vector<MeasureRecord> want = {make_record("a", 1e-3, 100),
                                     make_record("b", 0, 101, ErrorKind::CompileTimeout)};
  // Quotes, newlines, tabs, backslashes and non-ASCII must survive the trip on one line.
  want[1].error_msg = "line one\nline \"two\"\t\\ caf\xc3\xa9";
  want[0].sentence += " \xe2\x86\x92 done";
  want.push_back(make_record("a", 5e-4, 102));
  want[2].median_s = std::nan("");  // NaN is not JSON: it travels as null and comes back as NaN
  {
    RecordWriter w(path);
    for (const auto& r : want) w.append(r);
  }
  std::string text = slurp(path);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  LoadStats stats;
  std::vector<MeasureRecord> got = load_records(path, &stats);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(stats.records, 3);
  EXPECT_EQ(stats.cut_short_lines, 0);
  expect_same(got[0], want[0]);
  expect_same(got[1], want[1]);
  EXPECT_TRUE(std::isnan(got[2].median_s));
  EXPECT_EQ(got[1].error_kind(), ErrorKind::CompileTimeout);
  EXPECT_FALSE(got[1].ok());

  // A second writer appends after the first one's records.
  {
    RecordWriter w(path);
    w.append(make_record("c", 2e-3, 103));
  }
  got = load_records(path);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[3].task_key, "c");
}

// gzip-compressed records (how the benchmark results are committed) read like the plain file; a
// damaged one is a clear error.
TEST_F(RecordsTest, GzipRecordsLoadLikeThePlainFile) {
  std::string plain = temp_path("p.jsonl"), gz = temp_path("p.jsonl.gz");
  {
    RecordWriter w(plain);
    for (int i = 0; i < 300; i++) w.append(make_record("k" + std::to_string(i), 1e-3 * (i + 1), i));
  }
  const std::string text = slurp(plain);
  gzFile f = gzopen(gz.c_str(), "wb");
  ASSERT_TRUE(f);
  // Without the last newline: the last line still counts.
  ASSERT_EQ(gzwrite(f, text.data(), (unsigned)text.size() - 1), (int)text.size() - 1);
  ASSERT_EQ(gzclose(f), Z_OK);
  std::vector<MeasureRecord> a = load_records(plain), b = load_records(gz);
  ASSERT_EQ(a.size(), 300u);
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); i++) expect_same(b[i], a[i]);
  // Cut the compressed file in the middle: an error naming the file, not a silent prefix.
  std::string bytes = slurp(gz);
  spit(gz, bytes.substr(0, bytes.size() / 2));
  std::string msg = user_error_of([&] { load_records(gz); });
  EXPECT_NE(msg.find(gz), std::string::npos) << msg;
  // Appending to it would corrupt it: refused.
  msg = user_error_of([&] { RecordWriter w(gz); });
  EXPECT_NE(msg.find("gzip"), std::string::npos) << msg;
}

TEST_F(RecordsTest, ConcatenatedFilesLoad) {
  std::string a = temp_path("a.jsonl"), b = temp_path("b.jsonl"), c = temp_path("c.jsonl");
  {
    RecordWriter wa(a), wb(b);
    wa.append(make_record("a1", 1, 1));
    wa.append(make_record("a2", 1, 2));
    wb.append(make_record("b1", 1, 3));
  }
  spit(c, slurp(a) + slurp(b));  // cat a b > c
  std::vector<MeasureRecord> got = load_records(c);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].task_key, "a1");
  EXPECT_EQ(got[1].task_key, "a2");
  EXPECT_EQ(got[2].task_key, "b1");
}

TEST_F(RecordsTest, EveryCutShortLastLineIsSkipped) {
  MeasureRecord r = make_record("x", 1.5e-3, 7);
  r.sentence += " \xc3\xa9\xe2\x86\x92";  // multi-byte characters can be cut in half too
  std::string good = record_to_json_line(r) + "\n";
  std::string line = record_to_json_line(make_record("y", 2.5e-3, 8, ErrorKind::Crash));
  std::string path = temp_path("cut.jsonl");
  // Every proper prefix of a record is what a crash mid-write can leave behind.
  for (size_t len = 1; len < line.size(); len++) {
    spit(path, good + line.substr(0, len));
    LoadStats stats;
    std::vector<MeasureRecord> got = load_records(path, &stats);
    ASSERT_EQ(got.size(), 1u) << "prefix length " << len;
    ASSERT_EQ(stats.cut_short_lines, 1) << "prefix length " << len;
  }
}

TEST_F(RecordsTest, WriterStartsAFreshLineAfterACrashRemnant) {
  std::string path = temp_path("remnant.jsonl");
  std::string line = record_to_json_line(make_record("dead", 1, 1));
  spit(path, record_to_json_line(make_record("first", 1, 0)) + "\n" + line.substr(0, 40));
  {
    RecordWriter w(path);
    w.append(make_record("after", 2, 2));
    w.append(make_record("after2", 3, 3));
  }
  LoadStats stats;
  std::vector<MeasureRecord> got = load_records(path, &stats);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].task_key, "first");
  EXPECT_EQ(got[1].task_key, "after");
  EXPECT_EQ(got[2].task_key, "after2");
  EXPECT_EQ(stats.cut_short_lines, 1);  // the remnant, now a middle line of its own
}

TEST_F(RecordsTest, CorruptMiddleLineNamesFileAndLine) {
  std::string path = temp_path("corrupt.jsonl");
  std::string ok = record_to_json_line(make_record("a", 1, 1)) + "\n";
  spit(path, ok + "{\"version\":1,\"task_key\": oops}\n" + ok);
  std::string msg = user_error_of([&] { load_records(path); });
  EXPECT_NE(msg.find(path + ":2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not a measurement record"), std::string::npos) << msg;

  // Two records glued together (a file without its final newline, concatenated) is damage too.
  std::string glued = record_to_json_line(make_record("a", 1, 1));
  spit(path, ok + glued + glued + "\n");
  msg = user_error_of([&] { load_records(path); });
  EXPECT_NE(msg.find(path + ":2:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("ended with a newline"), std::string::npos) << msg;
}

TEST_F(RecordsTest, VersionAndFieldErrors) {
  std::string path = temp_path("version.jsonl");
  std::string line = record_to_json_line(make_record("a", 1, 1));
  auto with = [&](const std::string& from, const std::string& to) {
    std::string l = line;
    size_t at = l.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    l.replace(at, from.size(), to);
    spit(path, record_to_json_line(make_record("ok", 1, 0)) + "\n" + l + "\n");
    return user_error_of([&] { load_records(path); });
  };
  std::string msg = with("\"version\":2", "\"version\":3");
  EXPECT_NE(msg.find(path + ":2: records format version 3, this build reads version 2: "
                            "re-measure"),
            std::string::npos)
      << msg;
  // Version 1 did not say which tensor language its sentences are in.
  msg = with("\"version\":2", "\"version\":1");
  EXPECT_NE(msg.find(path + ":2: records format version 1, this build reads version 2: "
                            "re-measure"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("tensor-language"), std::string::npos) << msg;
  msg = with("\"version\":2,", "");
  EXPECT_NE(msg.find("no integer 'version'"), std::string::npos) << msg;
  msg = with("\"version\":2", "\"version\":\"2\"");
  EXPECT_NE(msg.find("no integer 'version'"), std::string::npos) << msg;
  // A record of another tensor-language version: its sentence would mean another program.
  const std::string lang = "\"language\":" + std::to_string(kLanguageVersion);
  msg = with(lang, "\"language\":" + std::to_string(kLanguageVersion + 1));
  EXPECT_NE(msg.find(path + ":2: a record of tensor-language version " +
                     std::to_string(kLanguageVersion + 1) + ", this build speaks version " +
                     std::to_string(kLanguageVersion)),
            std::string::npos)
      << msg;
  msg = with(lang + ",", "");
  EXPECT_NE(msg.find("no integer 'language'"), std::string::npos) << msg;
  msg = with("\"workload\":", "\"workload_name\":");
  EXPECT_NE(msg.find("unknown field 'workload_name'"), std::string::npos) << msg;
  msg = with("\"timestamp_ms\":1", "\"timestamp_ms\":\"yesterday\"");
  EXPECT_NE(msg.find("'timestamp_ms' should be an integer"), std::string::npos) << msg;
  msg = with("\"error\":\"\"", "\"error\":\"Segfault\"");
  EXPECT_NE(msg.find("unknown error kind 'Segfault'"), std::string::npos) << msg;
  msg = with("\"latencies_s\":[", "\"latencies_s\":[\"fast\",");
  EXPECT_NE(msg.find("'latencies_s' should be a number"), std::string::npos) << msg;
  spit(path, "[1,2,3]\n");
  EXPECT_NE(user_error_of([&] { load_records(path); }).find("expected a JSON object"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] { load_records(path + ".missing"); }).find("cannot open"),
            std::string::npos);
}

TEST_F(RecordsTest, Queries) {
  std::string hw2 = "isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=64m";
  std::vector<MeasureRecord> rs = {
      make_record("conv", 3e-3, 30),
      make_record("conv", 1e-3, 10),
      make_record("conv", 1e-4, 5, ErrorKind::WrongResult),  // fast but wrong: never the best
      make_record("conv", 1e-3, 20),                         // ties with t=10: earlier wins
      make_record("dense", 4e-3, 15),
      make_record("pool", 0, 1, ErrorKind::Crash),
      make_record("pool", 0, 2, ErrorKind::Crash),
  };
  rs.push_back(make_record("dense", 1e-4, 40));
  rs.back().hardware = hw2;

  auto best = best_per_task(rs);
  ASSERT_EQ(best.size(), 2u);  // pool has no error-free record
  EXPECT_EQ(best.at("conv").median_s, 1e-3);
  EXPECT_EQ(best.at("conv").timestamp_ms, 10);
  EXPECT_EQ(best.at("dense").median_s, 1e-4);
  EXPECT_DOUBLE_EQ(total_best_latency_s(best), 1.1e-3);

  auto best_hw = best_per_task(rs, rs[0].hardware);
  EXPECT_EQ(best_hw.at("dense").median_s, 4e-3);
  EXPECT_EQ(best_per_task(rs, hw2).size(), 1u);

  auto h = history(rs, "conv");
  ASSERT_EQ(h.size(), 4u);
  EXPECT_EQ(h[0].timestamp_ms, 5);
  EXPECT_EQ(h[1].timestamp_ms, 10);
  EXPECT_EQ(h[2].timestamp_ms, 20);
  EXPECT_EQ(h[3].timestamp_ms, 30);
  EXPECT_TRUE(history(rs, "nope").empty());

  RecordSummary s = summarize(rs);
  EXPECT_EQ(s.total, 8);
  EXPECT_EQ(s.ok, 5);
  EXPECT_EQ(s.by_error[(int)ErrorKind::None], 5);
  EXPECT_EQ(s.by_error[(int)ErrorKind::Crash], 2);
  EXPECT_EQ(s.by_error[(int)ErrorKind::WrongResult], 1);
  EXPECT_EQ(s.tasks, 3);
  EXPECT_EQ(s.tasks_with_ok, 2);
  std::string text = format_summary(s);
  EXPECT_NE(text.find("8 records, 5 ok; 3 tasks, 2 with an ok record"), std::string::npos);
  EXPECT_NE(text.find("Crash: 2"), std::string::npos);
  EXPECT_EQ(text.find("CompileError"), std::string::npos);
}

// A record timed with the caches as in a model carries cache "model" through the file; a hot
// one has no "cache" field (so hot files read as before the field existed); any other value is
// refused. A task with records of both kinds is ranked by its hot ones alone: the two timings
// are never compared.
TEST_F(RecordsTest, ModelCacheRecordsTravelAndAreNeverRankedWithHotOnes) {
  MeasureRecord hot = make_record("conv", 1e-3, 10);
  MeasureRecord model = make_record("conv", 3e-3, 20);
  model.cache = kCacheModel;
  const std::string hot_line = record_to_json_line(hot);
  const std::string model_line = record_to_json_line(model);
  EXPECT_EQ(hot_line.find("\"cache\""), std::string::npos);
  EXPECT_NE(model_line.find("\"cache\":\"model\""), std::string::npos);
  EXPECT_EQ(parse_record_line(hot_line, "t").cache, "");
  EXPECT_EQ(parse_record_line(model_line, "t").cache, kCacheModel);
  std::string odd = model_line;
  odd.replace(odd.find("\"model\""), 7, "\"warm\"");
  EXPECT_THROW(
      {
        try {
          parse_record_line(odd, "f.jsonl:3");
        } catch (const UserError& e) {
          EXPECT_NE(std::string(e.what()).find("f.jsonl:3: unknown cache mode 'warm'"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      UserError);

  MeasureRecord model_fast = make_record("conv", 5e-4, 30);
  model_fast.cache = kCacheModel;
  MeasureRecord dense = make_record("dense", 4e-3, 5);
  dense.cache = kCacheModel;
  MeasureRecord hot_slow = make_record("conv", 2e-3, 40);
  std::vector<MeasureRecord> rs = {hot, model, model_fast, dense, hot_slow};
  auto ranked = ranked_per_task(rs);
  ASSERT_EQ(ranked.at("conv").size(), 2u);  // the hot ones: the faster model-cache one is not
  EXPECT_EQ(ranked.at("conv")[0]->median_s, 1e-3);
  EXPECT_EQ(ranked.at("conv")[1]->median_s, 2e-3);
  ASSERT_EQ(ranked.at("dense").size(), 1u);  // a task with model-cache records only keeps them
  EXPECT_EQ(best_per_task(rs).at("conv").timestamp_ms, 10);
}

// A program that failed with a RuntimeError (the re-measurement and a model build with Halide's
// assertions; search does not) is not ranked, even where search timed it; other errors (a
// timeout) do not exclude it, nor does a RuntimeError on other hardware.
TEST(Records, ProgramsThatFailedAtRunTimeAreNotRanked) {
  MeasureRecord timed = make_record("conv", 1e-3, 10);
  MeasureRecord other = make_record("conv", 2e-3, 11);
  other.sentence += " other";
  MeasureRecord failed = make_record("conv", 0, 12, ErrorKind::RuntimeError);
  MeasureRecord slow = make_record("conv", 0, 13, ErrorKind::RunTimeout);
  slow.sentence = other.sentence;
  const std::vector<MeasureRecord> rs = {timed, other, failed, slow};
  auto ranked = ranked_per_task(rs, timed.hardware);  // pointers into rs
  ASSERT_EQ(ranked.at("conv").size(), 1u);
  EXPECT_EQ(ranked.at("conv")[0]->sentence, other.sentence);
  failed.hardware = "isa=avx512,cores=2,vec=16,l1=32k,l2=2m,l3=256m";
  const std::vector<MeasureRecord> elsewhere = {timed, other, failed};
  ranked = ranked_per_task(elsewhere, timed.hardware);
  ASSERT_EQ(ranked.at("conv").size(), 2u);
  EXPECT_EQ(ranked.at("conv")[0]->sentence, timed.sentence);
}

// The i-th record the killed writers append.
MeasureRecord numbered_record(int64_t i) {
  MeasureRecord r = make_record("t" + std::to_string(i), 1e-3, i);
  r.sentence = std::string(9000, 's');  // spans pages, so a kill can land mid-write
  return r;
}

// Runs a child that appends records as fast as it can and reports each committed index through
// a pipe; once it has reported `min_reports`, lets it run `extra_ms` more and kills it with
// SIGKILL mid-stream. Returns how many records it reported committed.
int64_t append_until_killed(const std::string& path, int64_t first_index, int64_t min_reports,
                            int extra_ms) {
  int fds[2];
  EXPECT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  EXPECT_GE(pid, 0);
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    close(fds[0]);
    RecordWriter w(path);
    for (int64_t i = first_index; i < first_index + 1000000; i++) {
      w.append(numbered_record(i));
      if (write(fds[1], &i, sizeof i) != sizeof i) _exit(2);
    }
    _exit(0);
  }
  close(fds[1]);
  int64_t reported = 0, i;
  while (reported < min_reports && read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) reported++;
  usleep(extra_ms * 1000);
  kill(pid, SIGKILL);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
  while (read(fds[0], &i, sizeof i) == (ssize_t)sizeof i) {
    EXPECT_EQ(i, first_index + reported);
    reported++;
  }
  close(fds[0]);
  return reported;
}

TEST_F(RecordsTest, SurvivesKillDashNine) {
  std::string path = temp_path("killed.jsonl");
  int64_t on_file = 0;
  // Several rounds on one file, so later writers also meet the remnants of earlier kills.
  for (int round = 0; round < 4; round++) {
    int64_t reported = append_until_killed(path, on_file, 5, 30 + 20 * round);
    EXPECT_GE(reported, 5);
    LoadStats stats;
    // Throws if any complete line is malformed or two records were glued together.
    std::vector<MeasureRecord> got = load_records(path, &stats);
    // Every reported record is there; at most one more (written, killed before reporting).
    ASSERT_GE((int64_t)got.size(), on_file + reported) << "round " << round;
    ASSERT_LE((int64_t)got.size(), on_file + reported + 1) << "round " << round;
    for (size_t k = 0; k < got.size(); k++) {
      ASSERT_EQ(got[k].task_key, "t" + std::to_string(k)) << "round " << round;
      ASSERT_EQ(got[k].sentence.size(), 9000u);
    }
    EXPECT_LE(stats.cut_short_lines, round + 1);
    on_file = (int64_t)got.size();
  }
  // Every line is a whole record or a remnant: a proper prefix of the record that was being
  // written (which the next writer then wrote again under the same number).
  std::istringstream text(slurp(path));
  std::string line;
  int64_t whole = 0;
  while (std::getline(text, line)) {
    if (line.empty()) continue;
    try {
      parse_record_line(line, "line");
      whole++;
    } catch (const UserError&) {
      std::string full = record_to_json_line(numbered_record(whole));
      EXPECT_LT(line.size(), full.size());
      EXPECT_EQ(full.compare(0, line.size(), line), 0) << line.substr(0, 80);
    }
  }
  EXPECT_EQ(whole, on_file);
}

}  // namespace
}  // namespace tlm
