// The `tlm` command line: flag parsing (CLI11) and the one place where errors become exit codes.
//
//   run_cli(argc, argv)  parses, applies --threads (support/threads.h) before any Halide use, runs
//                        the chosen subcommand (cli/commands.h) and returns the exit code:
//                        0 success; 1 for everything else -- a bad flag (CLI11's message), a
//                        UserError ("error: ..."), an InternalError ("internal error: ... (please
//                        report)"), a Halide or other std::exception. It never lets an exception
//                        escape, so `tlm` ends with a code, never a signal.
#pragma once

namespace tlm {

int run_cli(int argc, char** argv);

}  // namespace tlm
