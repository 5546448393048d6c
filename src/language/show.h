// Human-readable rendering of a tensor sentence (`tlm show`): the task (inputs, one line per
// operator), the hardware, and one line per decision in words, e.g.
//
//   tile f1_conv.d0 (56) -> 7 x 2 x 4 [outer 1]
//   vectorize f1_conv -> d0 (extent 56)
//
// and, on request, the Halide loop nest of the applied program.
#pragma once

#include <string>

#include "language/sentence.h"

namespace tlm {

// `ps.task` is scheduled with the program when loop_nest is true (it must be unscheduled, as
// parse_sentence() returns it).
std::string render_sentence(ParsedSentence& ps, bool loop_nest);

}  // namespace tlm
