// The files the service reads and writes beside a graph (the saved legend
// "<file>.vis.legend.json", the match config "<file>.vis.config") are checked
// as any file a client names (issue 17, 1d and 6c): a FIFO named like them
// must not hang the open, a link to /dev/zero must not be read, a link out of
// the log directory is refused, and a save never writes through a link.
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <thread>

#include "config_files.h"
#include "graph_service.h"
#include "legend_choice.h"
#include "service_fixture.h"

namespace graph_ascend::service {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A saved legend of two colours, as SetLegend(save) writes it.
std::string SavedLegend() {
  return R"({"Colors": {"#00FF00": {"value": [0, 0.25], "description": "outside"},
                        "#FF0000": {"value": [0.25, 1], "description": "outside"}}, "metrics": []})";
}

// A reader blocked in open() of `fifo` (a server that opens it blocking) is
// released: a writer opens and closes it. Without a blocked reader this does
// nothing. Used after the call under test so that a failing server does not
// keep the test from ending.
void ReleaseBlockedReader(const std::string& fifo) {
  int fd = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0) close(fd);
}

// The same from another thread when the call under test runs on this one:
// unless destroyed within a minute, it releases a reader blocked on `fifo`
// (a hang guard for a reader without the fix, not a time limit of the test).
class FifoGuard {
 public:
  explicit FifoGuard(std::string fifo)
      : thread_([this, fifo = std::move(fifo)] {
          std::unique_lock<std::mutex> l(mu_);
          if (!cv_.wait_for(l, std::chrono::minutes(1), [this] { return done_; })) ReleaseBlockedReader(fifo);
        }) {}
  ~FifoGuard() {
    {
      std::lock_guard<std::mutex> l(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

class BesideFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::WriteCompare(logs_.Join("a.vis"), testing::ResnetLike(), {});
    fs::create_directories(outside_.Join("d"));
  }
  void Start() {
    ServiceOptions options;
    options.logdir = logs_.path();
    options.cache_dir = cache_.Join("c");
    service_.Start(options, sock_.Join("s.sock"));
    ASSERT_NE(service_.stub(), nullptr);
  }
  // GetFileInfo with a deadline: a server blocked on a FIFO answers DEADLINE_EXCEEDED, not never.
  grpc::Status Info(const std::string& file, FileInfo* info) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    FileRequest req;
    req.set_file(file);
    return service_.stub()->GetFileInfo(&ctx, req, info);
  }
  grpc::Status Load(const std::string& file, MatchReply* reply) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    LoadMatchesRequest req;
    req.set_file(file);
    return service_.stub()->LoadMatches(&ctx, req, reply);
  }
  bool Healthy() {
    grpc::ClientContext ctx;
    HealthReply reply;
    return service_.stub()->Health(&ctx, HealthRequest(), &reply).ok();
  }
  // The legend the file shows: its colours in order.
  static std::string Colours(const FileInfo& info) {
    std::string out;
    for (const vis::ColorBucket& b : info.meta().legend()) out += b.color() + " ";
    return out;
  }

  TempDir logs_, outside_, cache_, sock_;
  testing::InProcessService service_;
};

TEST_F(BesideFilesTest, AFifoNamedAsTheLegendIsAnErrorOfTheLegendNotAHang) {
  ASSERT_EQ(mkfifo(logs_.Join("a.vis.legend.json").c_str(), 0600), 0);
  Start();
  FileInfo info;
  grpc::Status st = Info("a.vis", &info);
  ReleaseBlockedReader(logs_.Join("a.vis.legend.json"));
  ASSERT_TRUE(st.ok()) << st.error_code() << " " << st.error_message();
  EXPECT_TRUE(Contains(info.legend_error(), "a.vis.legend.json")) << info.legend_error();
  EXPECT_TRUE(Contains(info.legend_error(), "not a regular file")) << info.legend_error();
  EXPECT_GT(info.meta().legend_size(), 0);  // the file's own legend
  EXPECT_TRUE(Healthy());
}

TEST_F(BesideFilesTest, ALegendLinkedToDevZeroIsNotRead) {
  fs::create_symlink("/dev/zero", logs_.Join("a.vis.legend.json"));
  Start();
  FileInfo info;
  grpc::Status st = Info("a.vis", &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(Contains(info.legend_error(), "a.vis.legend.json: ")) << info.legend_error();
  EXPECT_TRUE(Contains(info.legend_error(), "leaves the log directory")) << info.legend_error();
  EXPECT_TRUE(Healthy());
}

TEST_F(BesideFilesTest, ALegendLinkedOutOfTheLogDirectoryIsRefusedNotApplied) {
  std::ofstream(outside_.Join("d/legend.json")) << SavedLegend();
  fs::create_symlink(outside_.Join("d/legend.json"), logs_.Join("a.vis.legend.json"));
  Start();
  FileInfo info;
  grpc::Status st = Info("a.vis", &info);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(Contains(info.legend_error(), "leaves the log directory")) << info.legend_error();
  EXPECT_NE(Colours(info), "#00FF00 #FF0000 ");
  for (const vis::ColorBucket& b : info.meta().legend()) EXPECT_NE(b.description(), "outside");

  // The same legend inside the log directory is applied (the check refuses the link, not the legend).
  fs::remove(logs_.Join("a.vis.legend.json"));
  testing::WriteCompare(logs_.Join("b.vis"), testing::ResnetLike(), {});
  std::ofstream(logs_.Join("b.vis.legend.json")) << SavedLegend();
  ASSERT_TRUE(Info("b.vis", &info).ok());
  EXPECT_EQ(info.legend_error(), "");
  EXPECT_EQ(Colours(info), "#00FF00 #FF0000 ");
}

TEST_F(BesideFilesTest, ALegendOverItsSizeLimitIsNotRead) {
  std::ofstream(logs_.Join("a.vis.legend.json")) << std::string((1 << 20) + 1, ' ');
  Start();
  FileInfo info;
  ASSERT_TRUE(Info("a.vis", &info).ok());
  EXPECT_TRUE(Contains(info.legend_error(), "over the limit of 1048576 bytes")) << info.legend_error();
}

TEST_F(BesideFilesTest, MatchConfigsThatAreFifosDevicesOrLinksOutAreRefused) {
  Start();
  FileInfo info;
  ASSERT_TRUE(Info("a.vis", &info).ok());
  std::ofstream(outside_.Join("d/x.vis.config")) << R"({"Module.fc.Linear.forward.0": "Module.fc.Linear.forward.0"})";
  struct Case {
    const char* what;
    std::function<void(const std::string&)> make;
    const char* error;
  };
  const std::string config = logs_.Join("a.vis.config");
  for (const Case& c : std::vector<Case>{
           {"fifo", [](const std::string& p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); }, "not a regular file"},
           {"/dev/zero", [](const std::string& p) { fs::create_symlink("/dev/zero", p); }, "leaves the log directory"},
           {"out", [&](const std::string& p) { fs::create_symlink(outside_.Join("d/x.vis.config"), p); },
            "leaves the log directory"}}) {
    SCOPED_TRACE(c.what);
    c.make(config);
    MatchReply reply;
    grpc::Status st = Load("a.vis", &reply);
    ReleaseBlockedReader(config);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << st.error_message();
    EXPECT_TRUE(Contains(st.error_message(), "a.vis.config")) << st.error_message();
    EXPECT_TRUE(Contains(st.error_message(), c.error)) << st.error_message();
    ASSERT_TRUE(Info("a.vis", &info).ok());
    EXPECT_EQ(info.manual_matches(), 0u);
    fs::remove(config);
  }
  EXPECT_TRUE(Healthy());
}

// The reader itself, for any path it is given (a name checked and then
// swapped for a FIFO or a device by another process reaches it).
TEST(ReadConfigJsonTest, OnlyRegularFilesOfBoundedSizeAreRead) {
  TempDir dir;
  ASSERT_EQ(mkfifo(dir.Join("fifo").c_str(), 0600), 0);
  Result<nlohmann::ordered_json> fifo = Error{};
  {
    FifoGuard guard(dir.Join("fifo"));
    fifo = ReadConfigJson(dir.Join("fifo"), "x/fifo.vis.config", 1 << 20, "config file");
  }
  ASSERT_FALSE(fifo.ok());
  EXPECT_EQ(fifo.error().file, "x/fifo.vis.config");
  EXPECT_TRUE(Contains(fifo.error().message, "not a regular file")) << fifo.error().ToString();

  auto zero = ReadConfigJson("/dev/zero", "x/zero.vis.config", 1 << 20, "config file");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().file, "x/zero.vis.config");
  EXPECT_TRUE(Contains(zero.error().message, "not a regular file")) << zero.error().ToString();

  std::ofstream(dir.Join("big")) << "{\"a\": \"" << std::string(2000, 'x') << "\"}";
  auto big = ReadConfigJson(dir.Join("big"), "x/big.vis.config", 1000, "config file");
  ASSERT_FALSE(big.ok());
  EXPECT_TRUE(Contains(big.error().message, "over the limit of 1000 bytes")) << big.error().ToString();
  EXPECT_EQ(big.error().file, "x/big.vis.config");
  auto fits = ReadConfigJson(dir.Join("big"), "x/big.vis.config", 4096, "config file");
  ASSERT_TRUE(fits.ok()) << fits.error().ToString();
  EXPECT_EQ((*fits)["a"].get<std::string>().size(), 2000u);
}

// 6c for the legend: SetLegend(save) through "<file>.vis.legend.json" that is
// a link to another file of the log directory must not write through it.
TEST_F(BesideFilesTest, SavingALegendNeverWritesThroughALink) {
  testing::WriteCompare(logs_.Join("victim.vis"), testing::ResnetLike(), {});
  const std::string victim = ReadAll(logs_.Join("victim.vis"));
  fs::create_symlink("victim.vis", logs_.Join("a.vis.legend.json"));
  Start();
  auto save = [&] {
    grpc::ClientContext ctx;
    SetLegendRequest req;
    req.set_file("a.vis");
    req.set_save(true);
    vis::ColorBucket* b = req.add_legend();
    b->set_color("#00FF00");
    b->set_lo(0);
    b->set_hi(1);
    FileInfo info;
    return service_.stub()->SetLegend(&ctx, req, &info);
  };
  grpc::Status st = save();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << st.error_message();
  EXPECT_TRUE(Contains(st.error_message(), "symbolic link")) << st.error_message();
  EXPECT_EQ(ReadAll(logs_.Join("victim.vis")), victim);
  EXPECT_TRUE(fs::is_symlink(logs_.Join("a.vis.legend.json")));

  // A link planted at the temporary name is replaced, not written through.
  fs::remove(logs_.Join("a.vis.legend.json"));
  fs::create_symlink("victim.vis", logs_.Join("a.vis.legend.json.tmp-" + std::to_string(getpid())));
  st = save();
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(ReadAll(logs_.Join("victim.vis")), victim);
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(logs_.Join("a.vis.legend.json"))));
  EXPECT_TRUE(Contains(ReadAll(logs_.Join("a.vis.legend.json")), "#00FF00"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(logs_.Join("a.vis.legend.json.tmp-" + std::to_string(getpid())))));
}

}  // namespace
}  // namespace graph_ascend::service
