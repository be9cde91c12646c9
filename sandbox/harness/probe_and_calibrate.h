// Machine-level subcommands of mgk-harness: `probe` (what GPUs, links and libraries there
// are, for `mgk doctor`) and `calibrate` (measured ceilings for the roofline). Both print
// one JSON object on stdout.
#pragma once

namespace mgk::harness {

int probe_main();
int calibrate_main(int argc, char** argv);

}  // namespace mgk::harness
