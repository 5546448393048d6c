// Runs the built `tlm` binary as a user would (tests of the command line): exit code and the
// combined stdout + stderr.
#pragma once

#include <sys/wait.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <initializer_list>
#include <string>

namespace tlm::testing {

struct Result {
  int code = -1;       // exit code; -1 when the process did not exit normally
  std::string output;  // stdout and stderr together
};

inline Result run_tlm(const std::string& args) {
  std::string cmd = std::string(TLM_BINARY_DIR) + "/tlm " + args + " 2>&1";
  Result r;
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) r.output.append(buf, n);
  int status = pclose(f);
  if (WIFEXITED(status)) r.code = WEXITSTATUS(status);
  return r;
}

// The command exited with `code` and printed each of `want`.
inline void expect_output(const Result& r, int code, std::initializer_list<std::string> want) {
  EXPECT_EQ(r.code, code) << r.output;
  for (const std::string& w : want)
    EXPECT_NE(r.output.find(w), std::string::npos) << "'" << w << "' not in:\n" << r.output;
}

}  // namespace tlm::testing
