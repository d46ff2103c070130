// The fixture of the conversion tests (convert_test.cc, convert_cancel_test.cc):
// a real server on a Unix socket running the real graph-ascend executable on
// copies of the real msprobe samples.
#pragma once

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph_service.h"
#include "service_fixture.h"

// One fixture type for both files (a named namespace, inline helpers): their
// tests form the one suite ConvertTest.
namespace graph_ascend::service::convert_testing {

namespace fs = std::filesystem;
using ::graph_ascend::service::testing::TempDir;

inline std::string SourceDir() {
  const char* s = std::getenv("GA_SOURCE_DIR");
  return s ? s : ".";
}

inline std::string Builder() {
  const char* b = std::getenv("GA_BINARY_DIR");
  return std::string(b ? b : "build") + "/bin/graph-ascend";
}

// Every file under `dir` whose name matches what a conversion leaves when it
// is interrupted: staging folders, *.tmp-<pid>, any .vis.
inline std::vector<std::string> Leftovers(const std::string& dir) {
  std::vector<std::string> out;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    std::string name = it->path().filename().string();
    if (name.rfind(".graph-ascend-", 0) == 0 || name.find(".tmp-") != std::string::npos ||
        name.find(".vis") != std::string::npos) {
      out.push_back(it->path().string());
    }
  }
  return out;
}

// A scaled transformer dump (bench/scale, real msprobe structure) large
// enough that a conversion runs for a few seconds; made once per test run.
inline const std::string& ScaledDump() {
  static const std::string dir = [] {
    std::string d = (fs::temp_directory_path() / ("ga_convert_scaled_" + std::to_string(getpid()))).string();
    std::string cmd = "python3 " + SourceDir() + "/bench/scale/scale_sample.py --case " + SourceDir() +
                      "/samples/gpt_statistics --nodes 100000 --out " + d + " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return d;
  }();
  return dir;
}

class ConvertTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(fs::temp_directory_path() / ("ga_convert_scaled_" + std::to_string(getpid())), ec);
  }

  void SetUp() override {
    fs::copy(SourceDir() + "/samples/gpt_statistics", dir_.Join("gpt"), fs::copy_options::recursive);
    Serve({});
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
  }
  void Serve(ServiceOptions options) {
    if (server_) server_->Shutdown();
    server_.reset();
    impl_.reset();
    options.logdir = dir_.path();
    if (options.builder.empty()) options.builder = Builder();
    auto impl = GraphServiceImpl::Create(options);
    ASSERT_TRUE(impl.ok()) << impl.error().ToString();
    impl_ = std::move(*impl);
    grpc::ServerBuilder builder;
    std::string address = "unix:" + sock_.Join("s" + std::to_string(++servers_) + ".sock");
    builder.AddListeningPort(address, grpc::InsecureServerCredentials());
    builder.RegisterService(impl_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = GraphService::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  }
  ConvertRequest Request(const std::string& npu, const std::string& bench, const std::string& out,
                         const std::string& session = "tab1") {
    ConvertRequest r;
    r.set_session(session);
    r.set_npu(npu);
    r.set_bench(bench);
    r.set_output_dir(out);
    return r;
  }
  grpc::Status Start(const ConvertRequest& r, ConvertJob* job) {
    grpc::ClientContext ctx;
    return stub_->ConvertStart(&ctx, r, job);
  }
  // Streams the job's progress to its end; `on` may stop early (return false)
  // and is called on every message.
  std::vector<ConvertJob> Watch(const std::string& id, const std::function<bool(const ConvertJob&)>& on = nullptr,
                                const std::string& session = "tab1", grpc::Status* status = nullptr) {
    grpc::ClientContext ctx;
    ConvertJobRequest req;
    req.set_session(session);
    req.set_id(id);
    auto reader = stub_->ConvertProgress(&ctx, req);
    std::vector<ConvertJob> seen;
    ConvertJob j;
    while (reader->Read(&j)) {
      seen.push_back(j);
      if (on && !on(j)) {
        ctx.TryCancel();
        break;
      }
    }
    grpc::Status st = reader->Finish();
    if (status != nullptr) *status = st;
    return seen;
  }
  grpc::Status Cancel(const std::string& id, ConvertJob* job, const std::string& session = "tab1") {
    grpc::ClientContext ctx;
    ConvertJobRequest req;
    req.set_session(session);
    req.set_id(id);
    return stub_->ConvertCancel(&ctx, req, job);
  }

  TempDir dir_;
  TempDir sock_;
  int servers_ = 0;
  std::unique_ptr<GraphServiceImpl> impl_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<GraphService::Stub> stub_;
};

}  // namespace graph_ascend::service::convert_testing
