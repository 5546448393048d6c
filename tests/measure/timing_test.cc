// The timing helper: call counts, statistics on known samples, option checks. Durations are only
// sanity-checked for units, never asserted as performance.
#include "measure/timing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/error.h"

namespace tlm {
namespace {

TEST(Timing, StatisticsOfKnownSamples) {
  TimingStats s = stats_from_samples({5, 1, 3, 2, 4});
  EXPECT_EQ(s.median_s, 3);
  EXPECT_EQ(s.min_s, 1);
  EXPECT_EQ(s.max_s, 5);
  EXPECT_DOUBLE_EQ(s.spread, (4.0 - 2.0) / 3.0);
  EXPECT_EQ(s.samples_s, (std::vector<double>{5, 1, 3, 2, 4}));  // kept in the order taken

  s = stats_from_samples({4, 1, 2, 3});
  EXPECT_DOUBLE_EQ(s.median_s, 2.5);
  EXPECT_DOUBLE_EQ(s.spread, (3.25 - 1.75) / 2.5);

  // One wild sample moves the max but not the median: the point of using the median.
  s = stats_from_samples({1.0, 1.01, 0.99, 1.02, 50.0});
  EXPECT_DOUBLE_EQ(s.median_s, 1.01);
  EXPECT_EQ(s.max_s, 50.0);
  EXPECT_LT(s.spread, 0.05);

  s = stats_from_samples({2e-3});
  EXPECT_EQ(s.median_s, 2e-3);
  EXPECT_EQ(s.spread, 0);
}

TEST(Timing, CallsAreWarmupPlusRepeatsTimesInner) {
  int64_t calls = 0;
  TimingOptions o;
  o.warmup = 3;
  o.repeats = 7;
  o.min_repeat_ms = 2;
  TimingStats s = time_function(
      [&] {
        calls++;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      },
      o);
  EXPECT_GE(s.inner, 1);
  EXPECT_LE(s.inner, 20);  // a call takes >= 100 us, so 2 ms never needs more than 20
  EXPECT_EQ(s.calls, 3 + 7 * s.inner);
  EXPECT_EQ(calls, s.calls);
  ASSERT_EQ(s.samples_s.size(), 7u);
  EXPECT_LE(s.min_s, s.median_s);
  EXPECT_LE(s.median_s, s.max_s);
  EXPECT_GE(s.min_s, 100e-6);  // sleep never returns early
}

// With before_sample, every sample is one call right after it (the caller puts the caches in a
// state for that call), whatever min_repeat_ms asks; warm-up calls do not get it.
TEST(Timing, BeforeSampleRunsBeforeEachOneCallSample) {
  std::vector<char> order;
  TimingOptions o;
  o.warmup = 2;
  o.repeats = 4;
  o.min_repeat_ms = 50;  // would make a fast call repeat thousands of times per sample
  o.before_sample = [&] { order.push_back('b'); };
  TimingStats s = time_function([&] { order.push_back('f'); }, o);
  EXPECT_EQ(s.inner, 1);
  EXPECT_EQ(s.calls, 2 + 4);
  EXPECT_EQ(s.samples_s.size(), 4u);
  EXPECT_EQ(std::string(order.begin(), order.end()), "ffbfbfbfbf");
}

TEST(Timing, SlowCallsAreNotRepeatedAndUnitsAreSeconds) {
  int64_t calls = 0;
  TimingOptions o;
  o.warmup = 1;
  o.repeats = 3;
  o.min_repeat_ms = 1;  // shorter than one call: one call per sample
  TimingStats s = time_function(
      [&] {
        calls++;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      },
      o);
  EXPECT_EQ(s.inner, 1);
  EXPECT_EQ(calls, 4);
  EXPECT_GE(s.median_s, 2e-3);
  EXPECT_LT(s.median_s, 1.0);  // sanity of units only (seconds, not ms or us)
}

TEST(Timing, FastCallsAreCappedByMaxInner) {
  int64_t calls = 0;
  TimingOptions o;
  o.warmup = 3;
  o.repeats = 2;
  o.min_repeat_ms = 50;
  o.max_inner = 1000;  // an increment takes far less than 50 us, so the cap decides
  TimingStats s = time_function([&] { calls++; }, o);
  EXPECT_EQ(s.inner, 1000);
  EXPECT_EQ(calls, 3 + 2 * 1000);
}

TEST(Timing, RejectsBadOptions) {
  auto f = [] {};
  TimingOptions o;
  o.warmup = 0;
  EXPECT_THROW(time_function(f, o), UserError);
  o = {};
  o.repeats = 0;
  EXPECT_THROW(time_function(f, o), UserError);
  o = {};
  o.min_repeat_ms = -1;
  EXPECT_THROW(time_function(f, o), UserError);
  o = {};
  o.max_inner = 0;
  EXPECT_THROW(time_function(f, o), UserError);
}

}  // namespace
}  // namespace tlm
