// The progress line of long work on stderr (tuning, measuring, sampling, training): "[label]
// done/total | detail | ETA". On a terminal it redraws one line; otherwise (logs, tests) it prints
// a line every `log_every` seconds. update() and advance() may be called from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace tlm {

class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string label, int64_t total, double log_every_s = 10);
  // `done` counts this run's measurements; `detail` is the rest of the line.
  void update(int64_t done, const std::string& detail);
  // Adds n to the count of done items and redraws (parallel loops that tick per item).
  void advance(int64_t n = 1, const std::string& detail = "");
  void finish();  // clears the line (terminal) or prints the last state (log)

 private:
  void draw(int64_t done, const std::string& detail);  // mu_ held
  bool enabled_, tty_;
  std::string label_;
  int64_t total_;
  double log_every_s_;
  double last_log_s_ = -1e9;
  std::string last_;
  int64_t done_ = 0;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_;
};

// "1m05s", "12.3s", "2h03m"
std::string format_duration(double seconds);

}  // namespace tlm
