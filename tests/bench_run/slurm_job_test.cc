// A Slurm run's script and the task states read from Slurm's answers and the shards,
// without Slurm (tests/slurm/ runs the real one).
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "bench_run/slurm_executor.h"
#include "bench_run/slurm_job.h"
#include "bench_run/work_list.h"
#include "common/error.h"
#include "common/interrupt.h"
#include "store/store.h"
#include "support/test_paths.h"

namespace mgk::bench_run {
namespace {

TEST(SlurmJob, ArraySpecsAreRangesWithTheirCap) {
  EXPECT_EQ(array_spec({0, 1, 2, 3}, 0), "0-3");
  EXPECT_EQ(array_spec({1, 4, 5, 6, 9}, 2), "1,4-6,9%2");
  EXPECT_EQ(array_spec({7}, 0), "7");
}

TEST(SlurmJob, TheScriptAsksForWhatWasGivenAndKeepsTheKeyOutOfTheFile) {
  SlurmOptions o;
  o.tasks = 3;
  o.partition = "gpu";
  o.gpus_per_task = 2;
  o.time = "1:30:00";
  o.sbatch_args = {"--account=lab", "--qos=low"};
  const RunFolder f = RunFolder::of("/data/it's/mgk.db", "abc123");
  EXPECT_EQ(f.dir, "/data/it's/slurm/abc123");
  EXPECT_EQ(f.shard(2), "/data/it's/slurm/abc123/task-2.db");
  const std::string s = array_script(o, f, {7, "openai:gpt-4o, refine, 4 problem(s) x 1 sample(s)",
                                            "/opt/mgk/bin/mgk", "/opt/mgk", "OPENAI_API_KEY"});
  for (const char* part :
       {"#!/bin/bash\n", "#SBATCH --job-name=mgk-bench-7\n", "#SBATCH --output=/data/it's/slurm/abc123/task-%a.log\n",
        "#SBATCH --open-mode=append\n", "#SBATCH --export=ALL\n", "#SBATCH --partition=gpu\n",
        "#SBATCH --time=1:30:00\n", "#SBATCH --gpus-per-task=2\n", "#SBATCH --account=lab\n#SBATCH --qos=low\n",
        "task=\"${SLURM_ARRAY_TASK_ID:?", ": \"${OPENAI_API_KEY:?is not set",
        "export MGK_HOME=\"${SLURM_TMPDIR:-${TMPDIR:-/tmp}}/mgk-${SLURM_JOB_ID}\"\n",
        "run_dir='/data/it'\\''s/slurm/abc123'\n",
        "'/opt/mgk/bin/mgk' --db \"$run_dir/task-$task.db\" bench --shard \"$task/3\" --run-file "
        "\"$run_dir/run.json\" \"$@\"\n"})
    EXPECT_NE(s.find(part), std::string::npos) << part << "\n" << s;
  // Every #SBATCH line comes before the first command, or sbatch ignores it.
  EXPECT_LT(s.rfind("#SBATCH"), s.find("set -euo pipefail"));
  test::TempDir dir;
  std::ofstream(dir.path() / "job.sbatch") << s;
  EXPECT_EQ(std::system(("bash -n " + (dir.path() / "job.sbatch").string()).c_str()), 0) << s;

  SlurmOptions none;
  none.tasks = 1;
  const std::string plain = array_script(none, f, {7, "t", "/m", "/r", ""});
  for (const char* absent : {"--partition", "--time", "--gpus-per-task", "_API_KEY"})
    EXPECT_EQ(plain.find(absent), std::string::npos) << absent;
}

TEST(SlurmJob, OptionsRoundTripThroughTheRunsArgs) {
  SlurmOptions o;
  o.tasks = 4;
  o.time = "10:00";
  o.jobs = {"12", "15"};
  const SlurmOptions back = SlurmOptions::from_json(o.to_json(), 3);
  EXPECT_EQ(back.to_json(), o.to_json());
  EXPECT_THROW(SlurmOptions::from_json(nlohmann::json::object(), 3), UsageError);
}

TEST(SlurmExecutor, SchedulerStatesComeFromTheNewestJobThatRanEachTask) {
  const std::string squeue = "15|1|RUNNING\n15|2|PENDING\n";
  const std::string sacct = "12_0|COMPLETED\n12_1|CANCELLED by 0\n12_[2-3]|PENDING\n12_2|FAILED\n13|COMPLETED\n";
  const auto s = parse_scheduler_states({"12", "15"}, squeue, sacct);
  const std::map<int, std::string> expected = {{0, "COMPLETED"}, {1, "RUNNING"}, {2, "PENDING"}};
  EXPECT_EQ(s, expected);
  EXPECT_TRUE(parse_scheduler_states({"12"}, "slurm_load_jobs error: Invalid job id specified\n", "").empty());
}

// sacct's silence is no error (a cluster without accounting), but Ctrl-C while it runs is not
// silence: it once came back as "no states" because Interrupted was an Error the
// silence-tolerant catch took.
TEST(SlurmExecutor, CtrlCWhileSacctRunsIsNotReadAsSacctsSilence) {
  test::TempDir dir("mgk-slurm-clients");
  auto write_tool = [&](const std::string& name, const std::string& body) {
    std::ofstream(dir.path() / name) << "#!/bin/sh\n" << body << "\n";
    std::filesystem::permissions(dir.path() / name, std::filesystem::perms::owner_all);
  };
  write_tool("squeue", "echo '15|1|RUNNING'");
  write_tool("sacct", "sleep 30");
  const std::string path = std::getenv("PATH");
  setenv("PATH", (dir.path().string() + ":" + path).c_str(), 1);
  install_interrupt_handler();
  std::thread ctrl_c([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::raise(SIGINT);
  });
  EXPECT_THROW(scheduler_states({"15"}), Interrupted);
  ctrl_c.join();
  clear_interrupt();
  write_tool("sacct", "exit 1");
  const std::map<int, std::string> squeue_only = {{1, "RUNNING"}};
  EXPECT_EQ(scheduler_states({"15"}), squeue_only) << "a failing sacct is still silence";
  setenv("PATH", path.c_str(), 1);
}

TEST(SlurmExecutor, ATaskIsDoneByItsShardElseAsSlurmSaysElseFailed) {
  test::TempDir dir;
  const RunFolder f = RunFolder::of(dir.path() / "mgk.db", "u1");
  std::filesystem::create_directories(f.dir);
  BenchSpec spec;
  spec.problem_list = {"a/x", "b/y", "c/z"};
  spec.samples = 2;  // 6 attempts in 3 shards of 2
  auto write_shard = [&](int task, int finished) {
    store::Store shard = store::Store::open(f.shard(task));
    const int64_t run = shard.begin_run({"bench", "m", {}}, "u1");
    const auto keys = shard_of(planned_attempts(spec.problem_list, spec.samples), task, 3);
    for (int i = 0; i < 2; ++i) {
      store::AttemptStart start;
      start.run_id = run;
      start.problem = keys[size_t(i)].problem;
      start.sample = keys[size_t(i)].sample;
      start.model = "m";
      start.mode = "refine";
      const int64_t a = shard.begin_attempt(start);
      if (i < finished) shard.finish_attempt(a, {store::Status::kDone, "turns_exhausted", std::nullopt});
    }
  };
  write_shard(0, 2);
  write_shard(1, 1);
  const auto t = task_statuses(spec, "u1", 3, f, {{0, "RUNNING"}, {1, "CANCELLED"}, {2, "PENDING"}}, false);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].state, TaskStatus::State::kDone) << "its shard is whole, whatever Slurm says";
  EXPECT_EQ(t[1].state, TaskStatus::State::kFailed);
  EXPECT_EQ(t[1].finished, 1);
  EXPECT_EQ(t[1].planned, 2);
  EXPECT_EQ(t[1].scheduler, "CANCELLED");
  EXPECT_EQ(t[1].log, f.log(1));
  EXPECT_EQ(t[2].state, TaskStatus::State::kPending);
  EXPECT_EQ(t[2].finished, 0) << "no shard yet";
  EXPECT_EQ(task_statuses(spec, "u1", 3, f, {}, false)[2].state, TaskStatus::State::kFailed)
      << "neither finished nor known to Slurm: lost";
  EXPECT_EQ(task_statuses(spec, "other-run", 3, f, {}, false)[0].finished, 0) << "a shard of another run";
}

}  // namespace
}  // namespace mgk::bench_run
