// Held out means held out, checked on what ships: the zero-shot ranker in models/ranker.json
// loads with this build (format, features and language versions) and lists the tasks it learned
// from, none of them a task of a held-out workload (as the shipped checkpoint's test in
// tests/loop). A later change to the space or the features fails here until it is re-trained
// (scripts/train_ranker.sh).
#include <gtest/gtest.h>

#include "loop/demonstrations.h"
#include "support/hash.h"
#include "tune/ranker.h"

namespace tlm {
namespace {

TEST(ShippedRanker, LoadsAndLearnedFromNoHeldOutTask) {
  const std::string shipped = default_ranker_path();
  ASSERT_FALSE(shipped.empty()) << "no shipped models/ranker.json";
  Ranker r = Ranker::load(shipped);
  EXPECT_GE(r.task_hashes().size(), 100u) << "the shipped ranker learned from few tasks";
  int heldout = 0;
  for (const std::string& key : heldout_task_keys())
    heldout += r.task_hashes().count(hex_hash(key)) ? 1 : 0;
  EXPECT_EQ(heldout, 0) << shipped << " was trained on held-out tasks";
}

}  // namespace
}  // namespace tlm
