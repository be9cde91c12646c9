// The trusted harness's link to its candidate process (sandbox/harness/candidate_link.h),
// with a fake candidate on the other end of a real socket pair: whatever the candidate
// process puts on the wire that the protocol does not allow is the candidate's own failure
// (a SolutionFault, which the launcher scores as its runtime error), never the harness's
// (infrastructure). No GPU: the link itself makes no CUDA call.
#include "candidate_link.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

namespace mgk::harness {
namespace {

// A link whose candidate end is `peer`; the broker end goes nowhere (no request is served).
struct Fixture {
  int pair[2] = {-1, -1};
  int broker_pair[2] = {-1, -1};
  std::unique_ptr<BrokerClient> broker;
  std::unique_ptr<BufferPool> pool;
  std::unique_ptr<CandidateLink> link;
  wire::Channel peer;
  Fixture() {
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, broker_pair), 0);
    broker = std::make_unique<BrokerClient>(wire::Channel(broker_pair[0]), 0);
    ::close(broker_pair[1]);
    pool = std::make_unique<BufferPool>(*broker, 0, 1, 0);
    link = std::make_unique<CandidateLink>(pair[0], *broker, *pool);
    peer = wire::Channel(pair[1]);
  }
  // The candidate's answer to the next command, written raw.
  void answer_raw(const std::string& bytes) {
    std::thread([this, bytes] {
      char buf[4096];
      (void)!::recv(peer.fd(), buf, sizeof buf, 0);  // the command
      (void)!::send(peer.fd(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
    }).detach();
  }
  void answer(const wire::Reply& r) {
    std::thread([this, r] {
      (void)wire::receive(peer);
      wire::send(peer, r);
    }).detach();
  }
  // Sends a command and returns what the harness made of the candidate's answer.
  std::string failure_of_a_call() {
    try {
      link->call(0, true);
      return "(no failure)";
    } catch (const sandbox::SolutionFault& e) {
      return std::string("candidate's: ") + e.what();
    } catch (const std::exception& e) {
      return std::string("harness's: ") + e.what();
    }
  }
};

std::string frame(const std::string& json) {
  const uint32_t len = uint32_t(json.size());
  return std::string(reinterpret_cast<const char*>(&len), 4) + json;
}

TEST(CandidateLink, GarbageOnTheSocketIsTheCandidatesFailure) {
  Fixture f;
  f.answer_raw(frame("this is not json at all"));
  const std::string got = f.failure_of_a_call();
  EXPECT_EQ(got.rfind("candidate's: the candidate process broke the protocol: ", 0), 0u) << got;
}

TEST(CandidateLink, AnOversizedFrameIsTheCandidatesFailure) {
  Fixture f;
  const uint32_t huge = 200u << 20;
  f.answer_raw(std::string(reinterpret_cast<const char*>(&huge), 4) + "{}");
  const std::string got = f.failure_of_a_call();
  EXPECT_EQ(got.rfind("candidate's: the candidate process broke the protocol: ", 0), 0u) << got;
  EXPECT_NE(got.find("exceeds the limit"), std::string::npos) << got;
}

TEST(CandidateLink, AFrameItWasNotAskedForIsTheCandidatesFailure) {
  Fixture f;
  f.answer_raw(frame(R"({"type":"command","cmd":"exit","body":{}})"));
  const std::string got = f.failure_of_a_call();
  EXPECT_NE(got.find("candidate's: the candidate process broke the protocol: it sent a frame the harness did not ask for"),
            std::string::npos)
      << got;
}

TEST(CandidateLink, ATimeThatIsNotANumberIsTheCandidatesFailure) {
  for (double t : {std::nan(""), -5.0, HUGE_VAL}) {
    Fixture f;
    f.answer(wire::Reply{0, wire::CallTime{t}});
    // (NaN and infinity cross JSON as null: a malformed frame, the candidate's all the same.)
    const std::string got = f.failure_of_a_call();
    EXPECT_EQ(got.rfind("candidate's: the candidate process broke the protocol: ", 0), 0u) << t << ": " << got;
  }
}

TEST(CandidateLink, ACandidateThatHangsUpIsGone) {
  Fixture f;
  std::thread hang_up([&f] {
    (void)wire::receive(f.peer);
    f.peer = wire::Channel();
  });
  const std::string got = f.failure_of_a_call();
  hang_up.join();
  EXPECT_EQ(got, "candidate's: the candidate process ended (it crashed, or its code exited)");
}

TEST(CandidateLink, AnHonestAnswerIsItsTime) {
  Fixture f;
  f.answer(wire::Reply{0, wire::CallTime{12.5}});
  EXPECT_DOUBLE_EQ(f.link->call(0, true), 12.5);
}

TEST(CandidateLink, AnAnswerOfAnotherKindIsTheCandidatesFailure) {
  Fixture f;
  f.answer(wire::Reply{0, wire::Judged{}});  // a verdict where its call's time was due
  const std::string got = f.failure_of_a_call();
  EXPECT_NE(got.find("candidate's: the candidate process broke the protocol: it answered a call without one finite"),
            std::string::npos)
      << got;
}

}  // namespace
}  // namespace mgk::harness
