// Match and Unmatch with children hold the file's exclusive lock only for the
// edit in memory (issue 17, 3): while they read the details they need, under
// the shared lock, other clients' reads go on. On the compare of the largest
// sample (samples/gpt_statistics, built by bin/graph-ascend), each call is
// held at the end of its read phase until a GetView of another client has
// been answered: an order of events, not a measure of time. A server that
// took the exclusive lock for the whole match would answer that GetView only
// after the match, and the hook would give up waiting (after a minute, a
// guard against a hang, not a time limit of the test).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../builder/cli_runner.h"
#include "graph_service.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

// The hook and the test meet here: the hook says the match is reading and
// waits for the view; the test sends the view once the match is reading.
class Rendezvous {
 public:
  // Called by the server (on_match_read).
  void MatchReading() {
    std::unique_lock<std::mutex> l(mu_);
    reading_ = true;
    cv_.notify_all();
    viewed_in_time_ = cv_.wait_for(l, std::chrono::minutes(1), [this] { return viewed_; });
  }
  // The test: waits until a match is in its read phase (false: it never got there).
  bool WaitReading() {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, std::chrono::minutes(2), [this] { return reading_; });
  }
  void Viewed() {
    std::lock_guard<std::mutex> l(mu_);
    viewed_ = true;
    cv_.notify_all();
  }
  // Whether the view was answered while the match waited in its read phase; ready for the next round.
  bool TakeViewedWhileReading() {
    std::lock_guard<std::mutex> l(mu_);
    bool r = viewed_in_time_;
    reading_ = viewed_ = viewed_in_time_ = false;
    return r;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool reading_ = false, viewed_ = false, viewed_in_time_ = false;
};

class MatchLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    logdir_ = dir_ / "logdir";
    graph_ascend::testing::RunResult r = graph_ascend::testing::RunTool(
        {"graph", "-i", graph_ascend::testing::Sample("gpt_statistics/compare.json"), "-o", logdir_ + "/gpt"});
    ASSERT_EQ(r.status, 0) << r.err;
    for (const auto& e : std::filesystem::directory_iterator(logdir_ + "/gpt")) {
      if (e.path().extension() == ".vis") file_ = "gpt/" + e.path().filename().string();
    }
    ASSERT_FALSE(file_.empty());
    ServiceOptions options;
    options.logdir = logdir_;
    options.on_match_read = [this] { rendezvous_.MatchReading(); };
    service_.Start(options, dir_ / "s.sock");
    ASSERT_NE(service_.stub(), nullptr);
  }

  grpc::Status View(ViewReply* reply) {
    grpc::ClientContext ctx;
    ViewRequest req;
    req.mutable_view()->set_session("reader");
    req.mutable_view()->set_file(file_);
    req.mutable_view()->set_micro_step(-1);
    req.mutable_viewport()->set_width(2000);
    req.mutable_viewport()->set_height(1500);
    return service_.stub()->GetView(&ctx, req, reply);
  }

  // Match or Unmatch of the roots with all their children on one thread,
  // a GetView on this one once the call is reading.
  void MatchWhileViewing(bool match, MatchReply* reply, grpc::Status* st) {
    std::thread caller([&] {
      grpc::ClientContext ctx;
      MatchRequest req;
      req.set_file(file_);
      req.set_npu_node(0);
      req.set_bench_node(0);
      req.set_with_children(true);
      *st = match ? service_.stub()->Match(&ctx, req, reply) : service_.stub()->Unmatch(&ctx, req, reply);
    });
    bool reading = rendezvous_.WaitReading();
    ViewReply view;
    grpc::Status viewed = reading ? View(&view) : grpc::Status(grpc::StatusCode::ABORTED, "the match never read");
    rendezvous_.Viewed();
    caller.join();
    ASSERT_TRUE(viewed.ok()) << viewed.error_message();
    EXPECT_GT(view.nodes_size(), 0);
    EXPECT_TRUE(rendezvous_.TakeViewedWhileReading())
        << (match ? "Match" : "Unmatch") << " kept GetView out while it read the details";
  }

  graph_ascend::testing::TempDir dir_;
  std::string logdir_, file_;
  Rendezvous rendezvous_;
  testing::InProcessService service_;
};

TEST_F(MatchLockTest, ReadersGoOnWhileMatchAndUnmatchWithChildrenReadTheirDetails) {
  ViewReply first;
  ASSERT_TRUE(View(&first).ok());
  MatchReply unmatched;
  grpc::Status st;
  ASSERT_NO_FATAL_FAILURE(MatchWhileViewing(false, &unmatched, &st));
  ASSERT_TRUE(st.ok()) << st.error_message();
  size_t undone = 0;
  for (const MatchResult& r : unmatched.results()) undone += r.ok();
  EXPECT_GT(undone, 300u) << "the sample's matched pairs under the root";

  MatchReply matched;
  ASSERT_NO_FATAL_FAILURE(MatchWhileViewing(true, &matched, &st));
  ASSERT_TRUE(st.ok()) << st.error_message();
  size_t redone = 0;
  for (const MatchResult& r : matched.results()) redone += r.ok();
  EXPECT_GT(redone, 300u);
}

}  // namespace
}  // namespace graph_ascend::service
