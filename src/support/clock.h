// Wall-clock helpers shared by every stage that reports durations (measurement, tuning, sampling,
// training). Steady clock only: durations, never dates.
#pragma once

#include <chrono>

namespace tlm {

using SteadyClock = std::chrono::steady_clock;

// Seconds on the steady clock since an arbitrary epoch: subtract two readings.
inline double now_s() {
  return std::chrono::duration<double>(SteadyClock::now().time_since_epoch()).count();
}

inline double seconds_since(SteadyClock::time_point t0) {
  return std::chrono::duration<double>(SteadyClock::now() - t0).count();
}

}  // namespace tlm
