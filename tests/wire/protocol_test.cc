// The typed protocol round-trips every command, reply and frame of launcher, harness and
// candidate (RoundTrip), and a preset plan's input distributions, special rows included (a
// frame from before them decodes with none).
#include "wire/protocol.h"

#include <sys/socket.h>

#include <set>

#include <gtest/gtest.h>

#include "common/error.h"

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
  TensorPlan ids;
  ids.name = "ids";
  ids.dtype = MGK_I64;
  ids.init.dist = Dist::kZipf;
  ids.init.a = 0, ids.init.b = 100000, ids.init.exponent = 1.1;
  prep.plan.inputs.push_back(ids);
  send(a, Command{prep});
  const Frame f = receive(b);
  const auto* cmd = std::get_if<Command>(&f.body);
  ASSERT_NE(cmd, nullptr);
  const auto* got = std::get_if<Prepare>(cmd);
  ASSERT_NE(got, nullptr);
  ASSERT_EQ(got->plan.inputs.size(), 2u);
  EXPECT_EQ(got->plan.inputs[1].init.dist, Dist::kZipf);
  EXPECT_DOUBLE_EQ(got->plan.inputs[1].init.exponent, 1.1);
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

namespace mgk::wire {
namespace {

// A message sent typed, received raw, sent raw again and decoded, then sent typed once more:
// the two raw frames agree when decoding lost nothing of what the first one said.
class RoundTrip : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    a_ = Channel(fds[0]), b_ = Channel(fds[1]);
  }
  template <class T>
  nlohmann::json through(const T& message) {
    send(a_, message);
    const nlohmann::json first = b_.receive().body;
    a_.send(first);
    const Frame decoded = receive(b_);
    std::visit([&](const auto& m) { send(a_, m); }, decoded.body);
    const nlohmann::json second = b_.receive().body;
    EXPECT_EQ(first, second) << first.dump();
    return first;
  }
  Channel a_, b_;
};

PresetPlan sample_plan() {
  PresetPlan p;
  p.dims = {{"N", 4096}, {"W", 2}};
  TensorPlan x;
  x.name = "x";
  x.dtype = MGK_F32;
  x.shape = {2, 2048};
  x.numel = 4096;
  x.symmetric = true;
  x.alloc_bytes = 1 << 16;
  x.init = {Dist::kRandint, -3, 4, 2048, 4, 0, 0, 0, 0};
  TensorPlan y = x;
  y.name = "y";
  y.in_place_of = 0;
  p.inputs = {x};
  p.outputs = {y};
  return p;
}

TEST_F(RoundTrip, EveryLauncherCommand) {
  const std::vector<Command> all = {
      Whoami{}, NcclId{}, Init{"nccl-id-bytes", true}, Load{"ref.so", "cand.so", true}, Prepare{sample_plan()},
      Trial{Who::kReference, 7}, BackToBack{Who::kCandidate, 9, 3}, Time{Who::kCandidate, 11, 2, 20, {0, 5, 21}},
      TimeFloor{3, 30}, Teardown{}, Exit{}};
  std::set<std::string> cmds;
  for (const Command& c : all) cmds.insert(through(c).value("cmd", ""));
  EXPECT_EQ(cmds.size(), all.size()) << "each command its own name on the wire";
  EXPECT_EQ(std::variant_size_v<Command>, all.size()) << "a command added to the protocol is added here";
}

TEST_F(RoundTrip, EveryCandidateCommand) {
  cand::Setup setup;
  setup.rank = 1, setup.world = 2, setup.num_sms = 132, setup.dims = {{"N", 8}};
  setup.input_sets = {{{sample_plan().inputs[0], 3}}};
  setup.outputs = {{sample_plan().outputs[0], 4}};
  setup.snapshots = {5};
  setup.flags = 6;
  const std::vector<cand::Command> all = {cand::Init{3, 1, 2, true}, cand::Load{"/scratch/k.so"}, cand::Probe{6},
                                          cand::MapBuffer{2, 100, 2 << 20, true}, setup, cand::Call{1, false},
                                          cand::Teardown{}, cand::Exit{}};
  for (const cand::Command& c : all) through(c);
  EXPECT_EQ(std::variant_size_v<cand::Command>, all.size()) << "a command added to the protocol is added here";
}

TEST_F(RoundTrip, EveryKindOfReplyAndTheOtherFrames) {
  const Verdict wrong{false, FailureKind::kMismatch, "y differs", Mismatch{"y", 1, "[3]", 3, std::nullopt, 2, 0.5, 7, 64},
                      3.5};
  const std::vector<Answer> all = {Done{},
                                   Failure{Fault::kSolution, Who::kCandidate, "setup returned 3", true},
                                   NcclIdMade{"id"},
                                   Started{"NVIDIA H200", 132, "landlock ABI 7"},
                                   Loaded{2.5, 0.25},
                                   Judged{wrong},
                                   TimedCalls{wrong, {10.5, 11.25}, {9.5}, 4},
                                   FloorTimes{{2.5, 2.75}},
                                   CallTime{12.5}};
  std::set<std::string> kinds;
  for (const Answer& a : all) {
    const nlohmann::json j = through(Reply{1, a});
    kinds.insert(j.at("body").value("answer", ""));
    if (std::holds_alternative<Judged>(a))
      EXPECT_TRUE(j.dump().find("\"got\":null") != std::string::npos) << "NaN as null: " << j.dump();
  }
  EXPECT_EQ(kinds.size(), all.size()) << "each kind of reply its own name on the wire";
  EXPECT_EQ(std::variant_size_v<Answer>, all.size()) << "a kind of reply added to the protocol is added here";
  through(Request{RequestKind::kSymAlloc, 1, 4096});
  through(Response{RequestKind::kSymAlloc, false, "out of memory", 2 << 20});
  through(Phase{0, "setup"});
}

// A reply is read as the kind its command answers with; another kind is a protocol error that
// names both, never a default value.
TEST(Protocol, AReplyReadAsAnotherKindSaysWhatCameInstead) {
  const Reply timed{2, TimedCalls{Verdict{}, {1.0}, {}, 1}};
  EXPECT_EQ(timed.as<TimedCalls>().times_us.size(), 1u);
  try {
    (void)timed.as<Loaded>();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 answered with 'timed_calls' where 'loaded' was due"), std::string::npos)
        << e.what();
  }
  const Reply failed = failure_reply(0, Fault::kHarness, std::nullopt, "out of memory");
  EXPECT_FALSE(failed.ok());
  ASSERT_NE(failed.failure(), nullptr);
  EXPECT_EQ(failed.failure()->error, "out of memory");
  try {
    (void)failed.as<Judged>();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'failure' where 'judged' was due: out of memory"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace mgk::wire
