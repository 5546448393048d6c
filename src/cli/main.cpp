// The `tlm` executable: everything lives in the tlm_cli library (cli/cli.h).
#include "cli/cli.h"

int main(int argc, char** argv) { return tlm::run_cli(argc, argv); }
