// Started by the launcher exactly as mgk-candidate is (same sandbox, same environment
// policy, same socket), it reports on stdout what it could reach: the API key planted in
// mgk's environment, mgk's own environment through /proc, files outside its directory, the
// network (a listener the test opened on the parent's loopback, and a public address).
// The port of the listener is the part of its name after "probe-". It also tries to write
// next to its program and beside its working directory (the evaluation's directory), and
// says what it can see of the host: the root's entries, the device nodes, a file planted
// beside its directory, the project's own tree, /etc/passwd and NCCL's library.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

void report(const char* what, const std::string& result) { std::printf("%s: %s\n", what, result.c_str()); }

std::string try_write(const std::string& path) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) return std::string("denied (") + std::strerror(errno) + ")";
  ::close(fd);
  return "WRITTEN";
}

std::string try_connect(uint32_t ip, int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return std::string("no socket (") + std::strerror(errno) + ")";
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  a.sin_addr.s_addr = htonl(ip);
  int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  std::string out = rc == 0 ? "CONNECTED" : std::string("failed (") + std::strerror(errno) + ")";
  ::close(fd);
  return out;
}

// The names in `dir` (those starting with `prefix`), sorted, space-separated.
std::string entries(const std::string& dir, const std::string& prefix = "") {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != ".." && n.rfind(prefix, 0) == 0) names.push_back(n);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " ") + n;
  return out;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("unreadable (") + std::strerror(errno) + ")";
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int main(int argc, char** argv) {
  std::string name = argv[0];
  const int port = std::atoi(name.substr(name.rfind("probe-") + 6).c_str());
  const char* key = std::getenv("OPENAI_API_KEY");
  report("OPENAI_API_KEY", key ? key : "(unset)");
  // Every process it can see, and their environments: with a PID namespace, only itself.
  std::string environs;
  for (int pid = 1; pid < 65536; ++pid) {
    std::string e = read_all("/proc/" + std::to_string(pid) + "/environ");
    if (e.rfind("unreadable", 0) != 0) environs += e;
  }
  report("planted key in some /proc/*/environ", environs.find("sk-planted-") != std::string::npos ? "FOUND" : "not found");
  report("parent pid", std::to_string(::getppid()));
  // Its parent inside the sandbox (PID 1: bubblewrap's, or mgk's non-dumpable init) holds
  // nothing it may read.
  const std::string init_env = read_all("/proc/1/environ");
  report("read /proc/1/environ", init_env.rfind("unreadable", 0) == 0       ? "denied"
                                 : init_env.find("sk-planted-") != std::string::npos ? "READ, KEY FOUND"
                                                                                    : "read, no key");
  report("read /proc/1/mem", read_all("/proc/1/mem").rfind("unreadable", 0) == 0 ? "denied" : "READ");
  char cwd[4096] = {};
  report("working directory", ::getcwd(cwd, sizeof cwd) ? cwd : "?");
  report("write in its directory", try_write("inside.txt"));
  report("write next to its program", try_write(name.substr(0, name.rfind('/') + 1) + "outside.txt"));
  report("write beside its directory", try_write("../outside.txt"));
  report("root entries", entries("/"));
  report("device nodes", entries("/dev", "nvidia"));
  auto readable = [](const std::string& path) {
    const std::string r = read_all(path);
    return r.rfind("unreadable", 0) == 0 ? std::string("unreadable") : "READ";
  };
  report("read the file planted beside its directory", readable("../planted.txt"));
  report("read the project's tree", readable(MGK_TESTS_DIR "/CMakeLists.txt"));
  report("read /etc/passwd", readable("/etc/passwd"));
  // The library the build linked NCCL from (a symlink at times, followed): the root shows the
  // system's libraries, but not the communication library a candidate may not use.
  report("read NCCL's library", readable(MGK_NCCL_LIBRARY));
  report("connect to the parent's loopback", try_connect(INADDR_LOOPBACK, port));
  report("connect to 1.1.1.1:443", try_connect(0x01010101, 443));
  std::fflush(stdout);
  // Stay until the harness side closes, as a candidate process does.
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--fd") == 0) {
      char c;
      while (::read(std::atoi(argv[i + 1]), &c, 1) > 0) {
      }
    }
  return 0;
}
