// `tlm show`: one row per StepKind says how its values read in words. The value meanings are the
// space's (space/space.h); this file only names them.
#include "language/show.h"

#include <cstdio>
#include <sstream>

namespace tlm {
namespace {

std::string type_str(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::string attr_str(const AttrValue& a) {
  std::ostringstream os;
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, int64_t>)
          os << x;
        else if constexpr (std::is_same_v<T, float>)
          os << num(x);
        else if constexpr (std::is_same_v<T, std::string>)
          os << '"' << x << '"';
        else {
          os << "[";
          for (size_t i = 0; i < x.size(); i++) os << (i ? "," : "") << num((double)x[i]);
          os << "]";
        }
      },
      a);
  return os.str();
}

// Readable listing of a task: "n0 = Conv(in0, w0, w1) group=1 strides=[1,1] -> f32[1,64,56,56]".
std::string task_str(const Subgraph& sub) {
  const Graph& g = sub.graph;
  std::ostringstream os;
  os << "task " << sub.kind << " (" << num(sub.flops / 1e6) << " MFLOP)\n";
  for (ValueId in : g.inputs)
    os << "  " << g.value(in).name << ": " << type_str(g.value(in)) << "\n";
  auto ref = [&](ValueId id) -> std::string {
    if (id == kNoValue) return "_";
    const Value& v = g.value(id);
    if (v.is_constant() && v.data->numel() == 1) return num(v.data->get_f(0));
    return v.name.substr(0, v.name.find(':'));
  };
  for (const Node& n : g.nodes) {
    os << "  " << n.name << " = " << op_name(n.op) << "(";
    for (size_t i = 0; i < n.inputs.size(); i++) os << (i ? ", " : "") << ref(n.inputs[i]);
    os << ")";
    for (const auto& [k, a] : n.attrs) os << " " << k << "=" << attr_str(a);
    os << " -> " << type_str(g.value(n.outputs[0])) << "\n";
  }
  return os.str();
}

using Describe = std::string (*)(const TaskSpace&, const Slot&, const int64_t*);

std::string describe_tile(const TaskSpace&, const Slot& s, const int64_t* v) {
  std::string out;
  int64_t inner = 1;
  for (int i = 0; i < s.arity; i++) {
    out += (i ? " x " : "") + std::to_string(v[i]);
    inner *= v[i];
  }
  return out + " [outer " + std::to_string(inner > 0 ? s.extent / inner : 0) + "]";
}

// Compute and pack levels are numbered by the space's rules (space/rules.cc), which may refine
// them; only the meanings space.h promises are spelled out here.
std::string describe_compute_at(const TaskSpace&, const Slot&, const int64_t* v) {
  return "level " + std::to_string(v[0]);
}

std::string describe_pack(const TaskSpace&, const Slot&, const int64_t* v) {
  return v[0] == 0 ? "no packing" : "packed at level " + std::to_string(v[0]);
}

std::string describe_vectorize(const TaskSpace& space, const Slot& s, const int64_t* v) {
  if (v[0] < 0) return "none";
  std::string out = "d" + std::to_string(v[0]);
  const SpaceStage& st = space.stages.at(s.stage);
  if (v[0] < (int64_t)st.extents.size())
    out += " (extent " + std::to_string(st.extents[v[0]]) + ")";
  return out;
}

std::string describe_parallel(const TaskSpace&, const Slot&, const int64_t* v) {
  return v[0] == 0 ? "serial" : std::to_string(v[0]) + " outer loop(s) fused, in parallel";
}

std::string describe_unroll(const TaskSpace&, const Slot&, const int64_t* v) {
  return v[0] == 0 ? "no unrolling" : "unroll inner loops up to " + std::to_string(v[0]);
}

std::string describe_rfactor(const TaskSpace&, const Slot&, const int64_t* v) {
  return v[0] == 0 ? "serial reduction" : std::to_string(v[0]) + " partial sums";
}

std::string describe_order(const TaskSpace&, const Slot&, const int64_t* v) {
  return "d" + std::to_string(v[0]) + " innermost";
}

struct ShowRow {
  StepKind kind;
  Describe describe;
};
constexpr ShowRow kShowRows[] = {
    {StepKind::Tile, describe_tile},         {StepKind::ComputeAt, describe_compute_at},
    {StepKind::Pack, describe_pack},         {StepKind::Vectorize, describe_vectorize},
    {StepKind::Parallel, describe_parallel}, {StepKind::Unroll, describe_unroll},
    {StepKind::RFactor, describe_rfactor},   {StepKind::Order, describe_order},
};
static_assert(sizeof(kShowRows) / sizeof(kShowRows[0]) == kStepKindCount, "one row per StepKind");

}  // namespace

std::string describe_decision(const TaskSpace& space, const Slot& slot, const int64_t* values) {
  const ShowRow& row = kShowRows[(int)slot.kind];
  TLM_CHECK(row.kind == slot.kind) << "show table out of order";
  return row.describe(space, slot, values);
}

std::string render_sentence(ParsedSentence& ps, bool loop_nest) {
  std::ostringstream os;
  os << task_str(ps.sub);
  const HardwareInfo& hw = ps.hw;
  os << "hardware " << hw.isa << ", " << hw.cores << " core(s), " << hw.vector_bits / 32
     << " floats per vector, L1 " << format_size_token(hw.l1d_bytes) << ", L2 "
     << format_size_token(hw.l2_bytes) << ", L3 " << format_size_token(hw.l3_bytes) << "\n";
  os << "decisions (" << ps.space.slots.size() << ", space ~10^" << num(ps.space.log10_size) << ", "
     << ps.sentence.size() << " tokens)\n";
  size_t pos = 0;
  for (const Slot& s : ps.space.slots) {
    os << "  " << step_kind_name(s.kind) << " " << s.subject;
    if (s.kind == StepKind::Tile) os << " (" << s.extent << ")";
    os << " -> " << describe_decision(ps.space, s, ps.program.values.data() + pos) << "\n";
    pos += s.arity;
  }
  if (loop_nest) {
    apply_program(ps.task, ps.space, ps.program);
    os << "loop nest\n" << loop_nest_str(ps.task);
  }
  return os.str();
}

}  // namespace tlm
