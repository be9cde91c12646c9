#include "support/slurm_cluster.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "process/run.h"

namespace mgk::test {
namespace {

namespace fs = std::filesystem;
using std::chrono::steady_clock;

// The program's path on $PATH or in the sbin folders (root's PATH may lack them); "" if none.
std::string find_command(const std::string& name) {
  std::string dirs = std::getenv("PATH") ? std::getenv("PATH") : "";
  dirs += ":/usr/sbin:/sbin:/usr/bin";
  std::stringstream in(dirs);
  for (std::string d; std::getline(in, d, ':');)
    if (!d.empty() && access((fs::path(d) / name).c_str(), X_OK) == 0) return (fs::path(d) / name).string();
  return "";
}

const std::vector<std::string> kCommands = {"munged", "mungekey", "slurmctld", "slurmd",
                                            "sbatch", "squeue",   "scancel",   "sinfo"};

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("no free TCP port on 127.0.0.1");
  close(fd);
  return ntohs(a.sin_port);
}

template <typename Ready>
bool wait_until(Ready ready, std::chrono::seconds limit) {
  const auto deadline = steady_clock::now() + limit;
  while (!ready()) {
    if (steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  return true;
}

}  // namespace

std::string SlurmCluster::missing_commands() {
  std::string missing;
  for (const auto& c : kCommands)
    if (find_command(c).empty()) missing += (missing.empty() ? "" : ", ") + c;
  return missing;
}

SlurmCluster::SlurmCluster(const fs::path& dir, const fs::path& jobs_dir)
    : dir_(fs::absolute(dir)), jobs_dir_(fs::absolute(jobs_dir)), conf_(dir_ / "slurm.conf") {
  for (const char* sub : {"state", "spool", "log", "munge"}) fs::create_directories(dir_ / sub);
  fs::permissions(dir_ / "munge", fs::perms::owner_all, fs::perm_options::replace);
  const std::string key = (dir_ / "munge/munge.key").string(), socket = (dir_ / "munge/munge.socket").string();
  process::ProcessResult k = process::run_tool({find_command("mungekey"), "--create", "--keyfile=" + key},
                                               std::chrono::seconds(30));
  if (!k.ok()) throw std::runtime_error("mungekey failed: " + k.output);
  daemons_.push_back(std::make_unique<ChildProcess>(
      std::vector<std::string>{find_command("munged"), "--foreground", "--force", "--socket=" + socket,
                               "--key-file=" + key, "--pid-file=" + (dir_ / "munge/munged.pid").string(),
                               "--seed-file=" + (dir_ / "munge/munged.seed").string(),
                               "--log-file=" + (dir_ / "log/munged.log").string()},
      std::map<std::string, std::string>{}, dir_ / "log/munged.out"));
  if (!wait_until([&] { return fs::exists(socket); }, std::chrono::seconds(10))) {
    const std::string why = logs();
    stop();
    throw std::runtime_error("munged did not start:\n" + why);
  }

  const int ctld_port = free_port();
  int slurmd_port = free_port();
  while (slurmd_port == ctld_port) slurmd_port = free_port();
  const std::string d = dir_.string();
  std::ofstream(conf_) << "ClusterName=mgktest\n"
                       << "SlurmctldHost=localhost(127.0.0.1)\n"
                       << "SlurmctldPort=" << ctld_port << "\nSlurmdPort=" << slurmd_port << "\n"
                       << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << socket << "\n"
                       << "SlurmUser=root\nSlurmdUser=root\n"
                       << "StateSaveLocation=" << d << "/state\nSlurmdSpoolDir=" << d << "/spool\n"
                       << "SlurmctldPidFile=" << d << "/slurmctld.pid\nSlurmdPidFile=" << d << "/slurmd.pid\n"
                       << "SlurmctldLogFile=" << d << "/log/slurmctld.log\nSlurmdLogFile=" << d << "/log/slurmd.log\n"
                       << "ProctrackType=proctrack/pgid\nTaskPlugin=task/none\nMpiDefault=none\n"
                       << "SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU\n"
                       << "SlurmdParameters=config_overrides\nReturnToService=2\n"
                       << "AccountingStorageType=accounting_storage/none\nJobAcctGatherType=jobacct_gather/none\n"
                       << "JobCompType=jobcomp/none\nMinJobAge=600\nKillWait=10\nInactiveLimit=0\n"
                       << "NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 RealMemory=1000 State=UNKNOWN\n"
                       << "PartitionName=mgk Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
  daemons_.push_back(std::make_unique<ChildProcess>(
      std::vector<std::string>{find_command("slurmctld"), "-D", "-f", conf_.string()}, env(),
      dir_ / "log/slurmctld.out"));
  daemons_.push_back(std::make_unique<ChildProcess>(
      std::vector<std::string>{find_command("slurmd"), "-D", "-N", "localhost", "-f", conf_.string()}, env(),
      dir_ / "log/slurmd.out"));
  if (!wait_until([&] { return run({"sinfo", "--noheader", "--format=%T"}).find("idle") == 0; },
                  std::chrono::seconds(60))) {
    const std::string why = run({"sinfo"}) + logs();
    stop();
    throw std::runtime_error("the node did not come up in a minute:\n" + why);
  }
}

SlurmCluster::~SlurmCluster() { stop(); }

std::map<std::string, std::string> SlurmCluster::env() const { return {{"SLURM_CONF", conf_.string()}}; }

std::string SlurmCluster::run(const std::vector<std::string>& argv, int* exit_code) const {
  process::ProcessResult r = process::run_tool(argv, std::chrono::seconds(60), {}, env());
  if (exit_code) *exit_code = r.exit_code;
  return r.output;
}

std::string SlurmCluster::logs() const {
  std::string out;
  for (const auto& f : fs::directory_iterator(dir_ / "log")) {
    std::ifstream in(f.path());
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    out += "---- " + f.path().filename().string() + " (its end) ----\n" +
           text.substr(text.size() > 3000 ? text.size() - 3000 : 0) + "\n";
  }
  return out;
}

void SlurmCluster::stop() {
  if (daemons_.size() == 3) {  // the controller is up: cancel every job, wait for their end
    run({"scancel", "--partition=mgk"});
    wait_until([&] { return run({"squeue", "--noheader"}).empty(); }, std::chrono::seconds(30));
  }
  for (auto d = daemons_.rbegin(); d != daemons_.rend(); ++d) {  // slurmd, slurmctld, munged
    (*d)->kill_group(SIGTERM);
    wait_until([&] { return !(*d)->running(); }, std::chrono::seconds(10));
  }
  daemons_.clear();  // SIGKILLs any still running
  // What a job left: slurmstepd and the job's processes work in the job's folder.
  for (const auto& p : fs::directory_iterator("/proc")) {
    const std::string name = p.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const fs::path cwd = fs::read_symlink(p.path() / "cwd", ec);
    if (!ec && pid_t(std::stol(name)) != getpid() && cwd.string().rfind(jobs_dir_.string() + "/", 0) == 0)
      kill(pid_t(std::stol(name)), SIGKILL);
  }
}

}  // namespace mgk::test
