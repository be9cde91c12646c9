#include "bench_run/slurm_executor.h"

#include <chrono>
#include <sstream>

#include "bench_run/work_list.h"
#include "common/error.h"
#include "common/format.h"
#include "process/run.h"
#include "store/store.h"

namespace mgk::bench_run {
namespace {

constexpr std::chrono::seconds kSlurmTimeout{60};

// "exit 1: what it printed", for an error message.
std::string said(const process::ProcessResult& r) {
  return r.status_line(double(kSlurmTimeout.count())) + ": " + r.output.substr(0, r.output.find_last_not_of(" \n") + 1);
}

// A Slurm client command, Error naming it when it cannot start.
process::ProcessResult slurm(const std::vector<std::string>& argv) {
  try {
    return process::run_tool(argv, kSlurmTimeout);
  } catch (const Error& e) {
    throw Error("cannot run " + argv[0] + " (" + e.what() +
                "): --executor slurm needs the Slurm client commands, as a cluster's login node has them");
  }
}

// "JOB", "TASK", "STATE" of a line "JOB|TASK|STATE" or "JOB_TASK|STATE ..."; false otherwise.
bool split_line(const std::string& line, std::string& job, int& task, std::string& state) {
  std::vector<std::string> f;
  std::stringstream in(line);
  for (std::string part; std::getline(in, part, '|');) f.push_back(part);
  if (f.size() == 2) {  // sacct: 12_3|CANCELLED by 0
    const size_t u = f[0].find('_');
    if (u == std::string::npos) return false;
    f = {f[0].substr(0, u), f[0].substr(u + 1), f[1]};
  }
  if (f.size() != 3 || f[1].empty() || f[1].find_first_not_of("0123456789") != std::string::npos) return false;
  job = f[0];
  task = std::stoi(f[1]);
  state = f[2].substr(0, f[2].find(' '));
  return !state.empty();
}

// Finished attempts of one task's shard, and its planned ones.
std::pair<int, int> shard_progress(const BenchSpec& spec, const std::string& uuid, int task, int tasks,
                                   const RunFolder& folder, bool retry_failed) {
  const auto planned = shard_of(planned_attempts(spec.problem_list, spec.samples), task, tasks);
  int finished = 0;
  if (std::filesystem::exists(folder.shard(task))) {
    try {
      store::Store shard = store::Store::open_read_only(folder.shard(task));
      for (const store::RunRecord& r : shard.runs_of_kind("bench"))
        if (r.uuid == uuid)
          finished = int(remaining_work(planned, shard.attempts_of_run(r.id), retry_failed).finished.size());
    } catch (const Error&) {
      // A task creating its shard this moment: nothing of it is finished yet.
    }
  }
  return {finished, int(planned.size())};
}

}  // namespace

const char* to_string(TaskStatus::State s) {
  switch (s) {
    case TaskStatus::State::kDone: return "done";
    case TaskStatus::State::kPending: return "pending";
    case TaskStatus::State::kRunning: return "running";
    case TaskStatus::State::kFailed: return "failed";
  }
  return "failed";
}

std::map<int, std::string> parse_scheduler_states(const std::vector<std::string>& jobs, const std::string& squeue,
                                                  const std::string& sacct) {
  std::map<std::pair<std::string, int>, std::string> seen;  // (job, task) -> state; squeue first
  for (const std::string* text : {&squeue, &sacct}) {
    std::stringstream in(*text);
    std::string line, job, state;
    int task = 0;
    while (std::getline(in, line))
      if (split_line(line, job, task, state)) seen.emplace(std::pair(job, task), state);
  }
  std::map<int, std::string> out;
  for (auto j = jobs.rbegin(); j != jobs.rend(); ++j)
    for (const auto& [key, state] : seen)
      if (key.first == *j) out.emplace(key.second, state);  // a newer job's state stays
  return out;
}

std::map<int, std::string> scheduler_states(const std::vector<std::string>& jobs) {
  if (jobs.empty()) return {};
  const std::string list = join(jobs, ",");
  process::ProcessResult q =
      slurm({"squeue", "--noheader", "--array", "--states=all", "--jobs=" + list, "--format=%F|%K|%T"});
  if (!q.ok() && q.output.find("Invalid job id") == std::string::npos)
    throw Error("squeue failed, " + said(q));
  // sacct answers only where the cluster keeps accounting; its silence is no error.
  std::string sacct;
  try {
    process::ProcessResult a =
        slurm({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + list, "--format=JobID,State"});
    if (a.ok()) sacct = a.output;
  } catch (const Error&) {
  }
  return parse_scheduler_states(jobs, q.ok() ? q.output : "", sacct);
}

std::vector<TaskStatus> task_statuses(const BenchSpec& spec, const std::string& run_uuid, int tasks,
                                      const RunFolder& folder, const std::map<int, std::string>& scheduler,
                                      bool retry_failed) {
  std::vector<TaskStatus> out;
  for (int k = 0; k < tasks; ++k) {
    TaskStatus t;
    t.task = k;
    t.log = folder.log(k);
    std::tie(t.finished, t.planned) = shard_progress(spec, run_uuid, k, tasks, folder, retry_failed);
    if (auto it = scheduler.find(k); it != scheduler.end()) t.scheduler = it->second;
    const std::string& s = t.scheduler;
    if (t.finished == t.planned) t.state = TaskStatus::State::kDone;
    else if (s == "PENDING" || s == "REQUEUED" || s == "SUSPENDED") t.state = TaskStatus::State::kPending;
    else if (s == "RUNNING" || s == "CONFIGURING" || s == "COMPLETING") t.state = TaskStatus::State::kRunning;
    else t.state = TaskStatus::State::kFailed;
    out.push_back(t);
  }
  return out;
}

std::string submit_array(const RunFolder& folder, const std::vector<int>& tasks, int parallelism,
                         const std::vector<std::string>& sbatch_args, const std::vector<std::string>& script_args) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "--array=" + array_spec(tasks, parallelism)};
  argv.insert(argv.end(), sbatch_args.begin(), sbatch_args.end());
  argv.push_back(folder.script().string());
  argv.insert(argv.end(), script_args.begin(), script_args.end());
  process::ProcessResult r = slurm(argv);
  // --parsable prints "JOBID" or "JOBID;CLUSTER".
  const std::string id = r.output.substr(0, r.output.find_first_of(";\n"));
  if (!r.ok() || id.empty() || id.find_first_not_of("0123456789") != std::string::npos)
    throw Error("sbatch did not take the job array, " + said(r));
  return id;
}

}  // namespace mgk::bench_run
