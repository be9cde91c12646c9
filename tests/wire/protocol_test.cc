// The typed protocol round-trips what the harness needs to draw inputs: a preset plan's input
// distributions, special rows included (a frame from before them decodes with none).
#include "wire/protocol.h"

#include <sys/socket.h>

#include <gtest/gtest.h>

namespace mgk::wire {
namespace {

TEST(Protocol, APresetPlansInputDistributionsRoundTrip) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  Channel a(fds[0]), b(fds[1]);
  Prepare prep;
  TensorPlan x;
  x.name = "x";
  x.dtype = MGK_BF16;
  x.shape = {16, 1024};
  x.numel = 16 * 1024;
  x.init.dist = Dist::kUniform;
  x.init.a = -0.25, x.init.b = 0.0625;
  x.init.row = 1024, x.init.zero_every = 16, x.init.tiny_every = 8, x.init.tiny = 0x1p-10;
  x.init.massive_every = 32, x.init.massive = 128;
  prep.plan.inputs.push_back(x);
  send(a, Command{prep});
  const Frame f = receive(b);
  const auto* cmd = std::get_if<Command>(&f.body);
  ASSERT_NE(cmd, nullptr);
  const auto* got = std::get_if<Prepare>(cmd);
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->plan.inputs.size(), 1u);
  const InputInit& i = got->plan.inputs[0].init;
  EXPECT_EQ(i.dist, Dist::kUniform);
  EXPECT_DOUBLE_EQ(i.a, -0.25);
  EXPECT_DOUBLE_EQ(i.b, 0.0625);
  EXPECT_EQ(i.row, 1024);
  EXPECT_EQ(i.zero_every, 16);
  EXPECT_EQ(i.tiny_every, 8);
  EXPECT_DOUBLE_EQ(i.tiny, 0x1p-10);
  EXPECT_EQ(i.massive_every, 32);
  EXPECT_DOUBLE_EQ(i.massive, 128);
  // A plan written without the special rows' fields has none.
  a.send({{"type", "command"},
          {"cmd", "prepare"},
          {"body", {{"plan", {{"inputs", {{{"name", "x"}, {"init", {{"a", 1.0}, {"b", 2.0}}}}}}}}}}});
  const Frame old = receive(b);
  const auto& plan = std::get<Prepare>(std::get<Command>(old.body)).plan;
  ASSERT_EQ(plan.inputs.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.inputs[0].init.b, 2.0);
  EXPECT_EQ(plan.inputs[0].init.row, 0);
  EXPECT_EQ(plan.inputs[0].init.zero_every, 0);
  EXPECT_EQ(plan.inputs[0].init.tiny_every, 0);
  EXPECT_EQ(plan.inputs[0].init.massive_every, 0);
}

}  // namespace
}  // namespace mgk::wire
