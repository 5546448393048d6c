#include "graph/op.h"

#include <unordered_map>

namespace tlm {
namespace {

struct OpRow {
  const char* name;
  OpPattern pattern;
};

constexpr OpRow kOpRows[] = {
#define TLM_OP_ROW(name, pattern) {#name, OpPattern::pattern},
    TLM_OP_LIST(TLM_OP_ROW)
#undef TLM_OP_ROW
};
static_assert(sizeof(kOpRows) / sizeof(kOpRows[0]) == kOpCount, "one row per op");

}  // namespace

const char* op_name(Op op) { return kOpRows[(int)op].name; }
OpPattern op_pattern(Op op) { return kOpRows[(int)op].pattern; }

const char* pattern_name(OpPattern p) {
  switch (p) {
    case OpPattern::Elemwise: return "elemwise";
    case OpPattern::Injective: return "injective";
    case OpPattern::Reduce: return "reduce";
    case OpPattern::Anchor: return "anchor";
  }
  return "?";
}

bool op_from_name(const std::string& name, Op* out) {
  static const std::unordered_map<std::string, Op> table = [] {
    std::unordered_map<std::string, Op> m;
    for (int i = 0; i < kOpCount; i++) m[kOpRows[i].name] = (Op)i;
    return m;
  }();
  auto it = table.find(name);
  if (it == table.end()) return false;
  *out = it->second;
  return true;
}

}  // namespace tlm
