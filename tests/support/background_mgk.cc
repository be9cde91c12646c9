#include "support/background_mgk.h"

#include <fcntl.h>
#include <unistd.h>

#include <thread>

#include "process/run.h"
#include "support/test_paths.h"

namespace mgk::test {

process::Child spawn_mgk(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                         const std::filesystem::path& output) {
  process::SpawnSpec s;
  s.argv = {mgk_binary().string()};
  s.argv.insert(s.argv.end(), args.begin(), args.end());
  s.env = process::current_environment();
  for (const auto& [k, v] : env) s.env[k] = v;
  s.output_fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  process::Child c = process::spawn(s);
  ::close(s.output_fd);
  return c;
}

bool wait_until(process::Child& c, const std::function<bool()>& ready, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline && !c.ended()) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

int processes_named(const std::string& name) {
  auto r = process::run_tool({"sh", "-c", "ps -eo args | grep -c -- '^[^ ]*" + name + "' || true"},
                             std::chrono::seconds(10));
  return std::stoi(r.output);
}

}  // namespace mgk::test
