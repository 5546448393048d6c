// Warm-up, calibrated inner loops, repeated samples, robust statistics.
#include "measure/timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "support/error.h"

namespace tlm {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// Quantile p of sorted values, interpolating linearly between neighbours.
double quantile(const std::vector<double>& sorted, double p) {
  double pos = p * (double)(sorted.size() - 1);
  size_t lo = (size_t)std::floor(pos);
  size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - (double)lo) * (sorted[hi] - sorted[lo]);
}

}  // namespace

TimingStats stats_from_samples(std::vector<double> samples_s) {
  TLM_CHECK(!samples_s.empty()) << "no samples";
  TimingStats s;
  std::vector<double> sorted = samples_s;
  std::sort(sorted.begin(), sorted.end());
  s.median_s = quantile(sorted, 0.5);
  s.min_s = sorted.front();
  s.max_s = sorted.back();
  s.spread = s.median_s > 0 ? (quantile(sorted, 0.75) - quantile(sorted, 0.25)) / s.median_s : 0;
  s.samples_s = std::move(samples_s);
  return s;
}

TimingStats time_function(const std::function<void()>& f, const TimingOptions& o) {
  TLM_USER_CHECK(o.warmup >= 1) << "timing: warmup must be >= 1 (it also calibrates the inner "
                                << "loop), got " << o.warmup;
  TLM_USER_CHECK(o.repeats >= 1) << "timing: repeats must be >= 1, got " << o.repeats;
  TLM_USER_CHECK(o.min_repeat_ms >= 0 && std::isfinite(o.min_repeat_ms))
      << "timing: min_repeat_ms must be a finite number >= 0, got " << o.min_repeat_ms;
  TLM_USER_CHECK(o.max_inner >= 1) << "timing: max_inner must be >= 1, got " << o.max_inner;

  // The fastest warm-up call is the best guess of a warm call: the first one is usually cold.
  double fastest = INFINITY;
  for (int i = 0; i < o.warmup; i++) {
    Clock::time_point t0 = Clock::now();
    f();
    fastest = std::min(fastest, seconds(t0, Clock::now()));
  }
  double want_s = o.min_repeat_ms * 1e-3;
  int64_t inner = o.max_inner;
  if (o.before_sample) {
    inner = 1;
  } else if (fastest > 0 && want_s / fastest < (double)o.max_inner) {
    inner = std::max<int64_t>(1, (int64_t)std::ceil(want_s / fastest));
  }

  std::vector<double> samples;
  for (int r = 0; r < o.repeats; r++) {
    if (o.before_sample) o.before_sample();
    Clock::time_point t0 = Clock::now();
    for (int64_t k = 0; k < inner; k++) f();
    samples.push_back(seconds(t0, Clock::now()) / (double)inner);
  }
  TimingStats s = stats_from_samples(std::move(samples));
  s.inner = inner;
  s.calls = o.warmup + (int64_t)o.repeats * inner;
  return s;
}

}  // namespace tlm
