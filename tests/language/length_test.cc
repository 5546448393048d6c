// Sentence length: every task of every zoo model at its default configuration fits the model's
// 512-token context (the language model trains on a 2-core CPU: shorter is better).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "language/sentence.h"
#include "language/workloads.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

constexpr size_t kMaxSentenceTokens = 512;

TEST(SentenceLength, EveryTaskOfEveryZooModelFits) {
  HardwareInfo hw =
      parse_hardware_tokens({"isa=avx512", "cores=2", "vec=16", "l1=32k", "l2=2m", "l3=64m"});
  std::set<std::string> keys;
  std::vector<size_t> lengths;
  size_t longest = 0;
  std::string longest_text;
  for (const ZooInfo& m : zoo_models()) {
    for (const Subgraph& s : workload_tasks(m.name)) {
      if (!keys.insert(s.key).second) continue;
      LoweredTask lt = lower_subgraph(s);
      TaskSpace space = build_space(lt, hw);
      TaskPrinter printer(s, hw, space);
      size_t n = printer.sentence_size();
      EXPECT_LE(n, kMaxSentenceTokens) << m.name << " task " << s.kind;
      lengths.push_back(n);
      if (n > longest) {
        longest = n;
        longest_text = m.name + " " + s.kind;
      }
    }
  }
  ASSERT_GT(lengths.size(), 200u);
  std::sort(lengths.begin(), lengths.end());
  std::printf("sentence tokens over %zu tasks of %zu zoo models: max %zu (%s), median %zu\n",
              lengths.size(), zoo_models().size(), longest, longest_text.c_str(),
              lengths[lengths.size() / 2]);
}

}  // namespace
}  // namespace tlm
