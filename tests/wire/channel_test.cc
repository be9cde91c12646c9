#include "wire/channel.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "common/error.h"
#include "support/test_paths.h"

namespace mgk::wire {
namespace {

TEST(Channel, FramesRoundTripAcrossProcessesWithDescriptors) {
  test::TempDir dir;
  std::string path = (dir.path() / "s.sock").string();
  Listener listener(path);
  pid_t child = fork();
  if (child == 0) {
    // Child: send a frame with an fd of a file it wrote, then a large frame.
    Channel c = connect(path);
    std::string file = (dir.path() / "f.txt").string();
    int fd = ::open(file.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    (void)!::write(fd, "hello", 5);
    c.send({{"kind", "fd"}, {"n", 1}}, {fd});
    c.send({{"kind", "big"}, {"data", std::string(1 << 20, 'x')}});
    Message reply = c.receive();
    _exit(reply.body.value("ok", false) ? 0 : 1);
  }
  Channel c = listener.accept(std::chrono::seconds(10));
  Message m = c.receive();
  EXPECT_EQ(m.body["kind"], "fd");
  ASSERT_EQ(m.fds.size(), 1u);
  char buf[8] = {};
  ASSERT_EQ(::pread(m.fds[0], buf, 5, 0), 5);
  EXPECT_STREQ(buf, "hello");
  ::close(m.fds[0]);
  Message big = c.receive();
  EXPECT_EQ(big.body["data"].get<std::string>().size(), size_t(1) << 20);
  EXPECT_TRUE(big.fds.empty());
  c.send({{"ok", true}});
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Channel, ClosedPeerIsReportedAsClosed) {
  test::TempDir dir;
  std::string path = (dir.path() / "s.sock").string();
  Listener listener(path);
  std::thread t([&] { Channel c = connect(path); });
  Channel c = listener.accept(std::chrono::seconds(10));
  t.join();
  EXPECT_THROW(c.receive(), ClosedError);
}

TEST(Listener, AcceptTimesOut) {
  test::TempDir dir;
  Listener listener((dir.path() / "s.sock").string());
  EXPECT_THROW(listener.accept(std::chrono::milliseconds(50)), Error);
}

}  // namespace
}  // namespace mgk::wire
