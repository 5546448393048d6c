// The Describe column of the step table (steps.cc): what one decision's values mean, in words,
// for `tlm show`. The value meanings are the space's (space.h, space_internal.h); compute and
// pack levels are numbered by the rules (rules.cc), which may refine them, so only the meanings
// space.h promises are spelled out.
#include <string>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {

std::string describe_tile(const TaskSpace&, const Slot& s, const int64_t* v) {
  std::string out;
  int64_t inner = 1;
  for (int i = 0; i < s.arity; i++) {
    out += (i ? " x " : "") + std::to_string(v[i]);
    inner *= v[i];
  }
  // A padded chain need not divide the extent: the last outer tile is shifted inwards.
  return out + " [outer " + std::to_string(inner > 0 ? (s.extent + inner - 1) / inner : 0) + "]";
}

std::string describe_pad(const TaskSpace&, const Slot& s, const int64_t* v) {
  if (v[0] <= 1) return "not padded";
  return "tiled as " + std::to_string(round_up(s.extent, v[0])) + " (a multiple of " +
         std::to_string(v[0]) + "; the last tile shifted inwards, or partial if one tile spans it)";
}

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

}  // namespace space_detail
}  // namespace tlm
