// `tlm measure`: label sentences with latencies. Reads tensor sentences (one per line, e.g. a
// shard written by `tlm sample`, or sentences a language model generated), measures each in a
// worker exactly as the tuner does, and appends one record per sentence.
//
//   measure_sentence_file(o)  parse each line (parse_sentence), group lines by task (one
//                             TaskHarness -- reference and inputs -- per task), skip sentences the
//                             records already hold for this hardware (so a killed run resumes),
//                             measure the rest in file order
//
// A line that is not a sentence of this language, or a sentence written for other hardware, is
// rejected with a message naming the line (no record: there is no task to file it under).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "measure/harness.h"

namespace tlm {

struct MeasureFileOptions {
  std::string sentences_path;        // one sentence per line; blank lines and '#' comments skipped
  std::string records_path;          // appended; created if missing
  std::string workload;              // recorded in each record
  std::string strategy = "measure";  // recorded in each record
  int64_t limit = 0;                 // measure at most this many (0: all)
  uint64_t seed = 0;                 // task inputs
  MeasureOptions measure;
  bool progress = true;
};

struct MeasureFileReport {
  int64_t sentences = 0;                  // non-blank lines read
  int64_t measured = 0;                   // records appended
  int64_t ok = 0;                         // error-free among them
  int64_t already = 0;                    // skipped: measured before on this hardware
  int64_t rejected = 0;                   // not a sentence, or for other hardware
  int64_t tasks = 0;                      // distinct tasks measured
  std::map<std::string, int64_t> errors;  // error kind -> count
  double measure_wall_s = 0;
  double valid_per_minute() const { return measure_wall_s > 0 ? ok * 60.0 / measure_wall_s : 0; }
  std::string summary() const;
};

MeasureFileReport measure_sentence_file(const MeasureFileOptions& o);

}  // namespace tlm
