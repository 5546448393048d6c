#include "support/progress.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

namespace tlm {

std::string format_duration(double s) {
  char buf[32];
  if (!(s >= 0) || !std::isfinite(s)) return "?";
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", (int)s / 60, (int)s % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
  return buf;
}

ProgressLine::ProgressLine(bool enabled, std::string label, int64_t total, double log_every_s)
    : enabled_(enabled),
      tty_(isatty(STDERR_FILENO)),
      label_(std::move(label)),
      total_(total),
      log_every_s_(log_every_s),
      start_(std::chrono::steady_clock::now()) {}

void ProgressLine::advance(int64_t n, const std::string& detail) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  done_ += n;
  draw(done_, detail);
}

void ProgressLine::update(int64_t done, const std::string& detail) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lock(mu_);
  done_ = done;
  draw(done, detail);
}

void ProgressLine::draw(int64_t done, const std::string& detail) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = done > 0 ? elapsed / done * (double)(total_ - done) : NAN;
  char head[160];
  std::snprintf(head, sizeof head, "[%s] %lld/%lld", label_.c_str(), (long long)done,
                (long long)total_);
  last_ =
      std::string(head) + (detail.empty() ? "" : " | " + detail) + " | ETA " + format_duration(eta);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%s", last_.c_str());
    std::fflush(stderr);
  } else if (elapsed - last_log_s_ >= log_every_s_) {
    last_log_s_ = elapsed;
    std::fprintf(stderr, "%s\n", last_.c_str());
  }
}

void ProgressLine::finish() {
  if (!enabled_ || last_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (tty_)
    std::fprintf(stderr, "\r\033[K");
  else
    std::fprintf(stderr, "%s\n", last_.c_str());
}

}  // namespace tlm
