// A one-node Slurm of a test's own, for tests of `mgk bench --executor slurm`: munged,
// slurmctld and slurmd started from a slurm.conf generated in a folder of the test's (a
// partition "mgk" of this machine as node "localhost", ports that were free, a munge key
// and socket of its own, no accounting), with the machine's Debian packages (slurm-wlm,
// munge; scripts/setup.sh installs them). slurmd runs jobs as their users, so it needs
// root. Everything it started is stopped when it goes: the jobs are cancelled, the daemons
// stopped, and any process still working in its folder killed.
#pragma once
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "support/child_process.h"

namespace mgk::test {

class SlurmCluster {
 public:
  // The commands it needs that are not installed, "" when none is missing.
  static std::string missing_commands();

  // Starts the daemons in `dir` (created) and waits until the node takes jobs; throws
  // std::runtime_error with the daemons' logs when it does not within a minute. The jobs
  // work in `jobs_dir` (their --chdir is inside it): what still works there at the end, as
  // slurmstepd and its job do, is killed then.
  SlurmCluster(const std::filesystem::path& dir, const std::filesystem::path& jobs_dir);
  ~SlurmCluster();
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  // What a client (sbatch, squeue, mgk) needs to reach it: SLURM_CONF.
  std::map<std::string, std::string> env() const;
  // Runs a client command against it; its output (stdout and stderr), and *exit_code.
  std::string run(const std::vector<std::string>& argv, int* exit_code = nullptr) const;
  // The daemons' logs, the end of each, for a failure message.
  std::string logs() const;

 private:
  void stop();
  std::filesystem::path dir_, jobs_dir_, conf_;
  std::vector<std::unique_ptr<ChildProcess>> daemons_;  // munged, slurmctld, slurmd
};

}  // namespace mgk::test
